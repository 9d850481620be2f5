package storetest

import (
	"context"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"quire"
	"quire/wire"
)

func init() { register("Idempotency", testIdempotency) }

// idemWorld is a store with one user and the claims the cases make.
type idemWorld struct {
	*docWorld
	now   time.Time
	lease time.Duration
}

func (w *idemWorld) claim(key, token, request string) quire.IdempotencyClaim {
	fp := sha256.Sum256([]byte(request))
	return quire.IdempotencyClaim{UserID: w.owner.ID, Key: key, Fingerprint: fp[:], Token: token,
		KeepUntil: w.now.Add(24 * time.Hour)}
}

// answerOf renders the result of a change as the handlers would: its
// title, or "deleted".
func testIdempotency(t *testing.T, open Opener) {
	t.Run("a free key is claimed; a repeat while it runs is IDEMPOTENCY_IN_PROGRESS for the rest of the lease", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		ctx := t.Context()
		c := w.claim("k", "first", "POST /a {}")
		if kept, err := w.s.ClaimIdempotencyKey(ctx, c, w.now, w.lease); err != nil || kept != nil {
			t.Fatalf("claim: %v, %v", kept, err)
		}
		_, err := w.s.ClaimIdempotencyKey(ctx, w.claim("k", "second", "POST /a {}"), w.now.Add(20*time.Second), w.lease)
		wantCode(t, err, quire.EIDEMPOTENCYINPROGRESS)
		if got := err.(*quire.Error).RetryAfter; got != 40*time.Second {
			t.Fatalf("RetryAfter %v, want 40s", got)
		}
		_, err = w.s.ClaimIdempotencyKey(ctx, w.claim("k", "third", "POST /b {}"), w.now, w.lease)
		wantCode(t, err, quire.EIDEMPOTENCYKEYREUSED)
	})

	t.Run("a key with a NUL is a VALIDATION_ERROR", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		_, err := w.s.ClaimIdempotencyKey(t.Context(), w.claim("k\x00", "first", "POST /a {}"), w.now, w.lease)
		wantCode(t, err, quire.EVALIDATION)
	})

	t.Run("a completed key answers its kept answer; another request under it is IDEMPOTENCY_KEY_REUSED", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		ctx := t.Context()
		c := w.claim("k", "first", "PUT /d {}")
		if _, err := w.s.ClaimIdempotencyKey(ctx, c, w.now, w.lease); err != nil {
			t.Fatal(err)
		}
		want := quire.IdempotentAnswer{Status: 409, Header: map[string]string{"Location": "/x"}, Body: []byte(`{"code":"X"}` + "\n")}
		// Another claim's token completes nothing.
		if err := w.s.CompleteIdempotencyKey(ctx, w.claim("k", "other", "PUT /d {}"), quire.IdempotentAnswer{Status: 200}); err != nil {
			t.Fatal(err)
		}
		if err := w.s.CompleteIdempotencyKey(ctx, c, want); err != nil {
			t.Fatal(err)
		}
		// Releasing a completed key leaves it.
		if err := w.s.ReleaseIdempotencyKey(ctx, c); err != nil {
			t.Fatal(err)
		}
		kept, err := w.s.ClaimIdempotencyKey(ctx, w.claim("k", "again", "PUT /d {}"), w.now.Add(23*time.Hour), w.lease)
		if err != nil || kept == nil {
			t.Fatalf("repeat: %v, %v", kept, err)
		}
		if diff := cmp.Diff(want, *kept); diff != "" {
			t.Fatalf("kept answer (-want +got)\n%s", diff)
		}
		_, err = w.s.ClaimIdempotencyKey(ctx, w.claim("k", "again", "PUT /e {}"), w.now.Add(time.Hour), w.lease)
		wantCode(t, err, quire.EIDEMPOTENCYKEYREUSED)
		// Past KeepUntil the key is free again, for any request.
		if kept, err := w.s.ClaimIdempotencyKey(ctx, w.claim("k", "later", "PUT /e {}"), w.now.Add(24*time.Hour), w.lease); err != nil || kept != nil {
			t.Fatalf("claim after 24 hours: %v, %v", kept, err)
		}
	})

	t.Run("a released key, or one whose lease ended, is claimed afresh", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		ctx := t.Context()
		c := w.claim("k", "first", "DELETE /d")
		if _, err := w.s.ClaimIdempotencyKey(ctx, c, w.now, w.lease); err != nil {
			t.Fatal(err)
		}
		if err := w.s.ReleaseIdempotencyKey(ctx, c); err != nil {
			t.Fatal(err)
		}
		if kept, err := w.s.ClaimIdempotencyKey(ctx, w.claim("k", "second", "DELETE /d"), w.now, w.lease); err != nil || kept != nil {
			t.Fatalf("claim after release: %v, %v", kept, err)
		}
		// The second claim's node dies; at the end of its lease a third
		// takes the key, and the second can no longer complete it.
		third := w.claim("k", "third", "DELETE /d")
		if kept, err := w.s.ClaimIdempotencyKey(ctx, third, w.now.Add(w.lease), w.lease); err != nil || kept != nil {
			t.Fatalf("claim after the lease: %v, %v", kept, err)
		}
		if err := w.s.CompleteIdempotencyKey(ctx, w.claim("k", "second", "DELETE /d"), quire.IdempotentAnswer{Status: 200}); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.ClaimIdempotencyKey(ctx, w.claim("k", "fourth", "DELETE /d"), w.now.Add(w.lease), w.lease)
		wantCode(t, err, quire.EIDEMPOTENCYINPROGRESS)
	})

	t.Run("the answer is written in the change's transaction", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		ctx := t.Context()
		keep := func(key string, r quire.Reply) *quire.Keep {
			t.Helper()
			c := w.claim(key, "t", key)
			if _, err := w.s.ClaimIdempotencyKey(ctx, c, w.now, w.lease); err != nil {
				t.Fatal(err)
			}
			return &quire.Keep{Claim: c, Reply: r}
		}
		// kept checks that k's answer was kept with the change: the
		// answer package wire renders of result, byte for byte.
		kept := func(k *quire.Keep, result any) {
			t.Helper()
			c := k.Claim
			c.Token = "repeat"
			got, err := w.s.ClaimIdempotencyKey(ctx, c, w.now, w.lease)
			if err != nil || got == nil {
				t.Fatalf("kept answer of %s: %v, %v", c.Key, got, err)
			}
			want, err := wire.Answer(k.Reply, result)
			if err != nil {
				t.Fatal(err)
			}
			if !k.Kept() {
				t.Errorf("%s: Kept() is false", c.Key)
			}
			if diff := cmp.Diff(want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: kept answer (-want +got):\n%s", c.Key, diff)
			}
		}
		saved := quire.Reply{Kind: quire.ReplySavedDocument}
		message := func(m string) quire.Reply { return quire.Reply{Kind: quire.ReplyMessage, Message: m} }

		k := keep("create", quire.Reply{Kind: quire.ReplyCreatedDocument})
		d := draft(w.owner, "Runbook")
		if err := w.s.Keeping(k).CreateDocument(ctx, d, w.now); err != nil {
			t.Fatal(err)
		}
		kept(k, d)

		k = keep("update", saved)
		d, err := w.s.Keeping(k).UpdateDocument(ctx, seeAll, d.ID, time.Time{}, w.owner.ID, w.now.Add(time.Second), func(d *quire.Document) (bool, error) {
			d.Title = "Runbook 2"
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		kept(k, d)

		k = keep("folder", quire.Reply{Kind: quire.ReplyCreatedFolder})
		f := &quire.Folder{Name: "Ops"}
		if err := w.s.Keeping(k).CreateFolder(ctx, f, w.now); err != nil {
			t.Fatal(err)
		}
		kept(k, f)
		k = keep("folder-rename", quire.Reply{Kind: quire.ReplySavedFolder})
		f.Name = "Operations"
		if err := w.s.Keeping(k).UpdateFolder(ctx, f, w.now); err != nil {
			t.Fatal(err)
		}
		kept(k, f)
		k = keep("folder-delete", message("Folder deleted"))
		if err := w.s.Keeping(k).DeleteFolder(ctx, f.ID); err != nil {
			t.Fatal(err)
		}
		kept(k, nil)

		// A store recording events keeps the answer too, and the other
		// way round.
		k = keep("delete", message("Document deleted"))
		ev := quire.NewEvent(quire.ActionDocumentDeleted, w.now, nil, quire.RequestInfo{})
		if err := w.s.Keeping(k).Recording(ev).DeleteDocument(ctx, seeAll, d.ID, w.owner.ID, w.now); err != nil {
			t.Fatal(err)
		}
		kept(k, nil)
		k = keep("restore", saved)
		if d, err = w.s.Recording().Keeping(k).RestoreDocument(ctx, seeAll, d.ID); err != nil {
			t.Fatal(err)
		}
		kept(k, d)
		if err := w.s.DeleteDocument(ctx, seeAll, d.ID, w.owner.ID, w.now); err != nil {
			t.Fatal(err)
		}
		k = keep("purge", message("Document permanently deleted"))
		if err := w.s.Keeping(k).PurgeDocument(ctx, seeAll, d.ID); err != nil {
			t.Fatal(err)
		}
		kept(k, nil)
	})

	t.Run("a change whose claim was taken over is refused and not made", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		ctx := t.Context()
		doc := w.create(t, draft(w.owner, "Before"), w.now)
		old := w.claim("k", "slow", "update")
		if _, err := w.s.ClaimIdempotencyKey(ctx, old, w.now, w.lease); err != nil {
			t.Fatal(err)
		}
		// The slow request outlived its lease; a retry holds the key now.
		if _, err := w.s.ClaimIdempotencyKey(ctx, w.claim("k", "retry", "update"), w.now.Add(w.lease), w.lease); err != nil {
			t.Fatal(err)
		}
		ks := w.s.Keeping(&quire.Keep{Claim: old, Reply: quire.Reply{Kind: quire.ReplySavedDocument}})
		_, err := ks.UpdateDocument(ctx, seeAll, doc.ID, time.Time{}, w.owner.ID, w.now.Add(time.Second), func(d *quire.Document) (bool, error) {
			d.Title = "After"
			return true, nil
		})
		wantCode(t, err, quire.EIDEMPOTENCYINPROGRESS)
		err = w.s.Keeping(&quire.Keep{Claim: old, Reply: quire.Reply{Kind: quire.ReplyCreatedDocument}}).CreateDocument(ctx, draft(w.owner, "Twin"), w.now)
		wantCode(t, err, quire.EIDEMPOTENCYINPROGRESS)
		err = w.s.Keeping(&quire.Keep{Claim: old, Reply: quire.Reply{Kind: quire.ReplyMessage}}).DeleteDocument(ctx, seeAll, doc.ID, w.owner.ID, w.now)
		wantCode(t, err, quire.EIDEMPOTENCYINPROGRESS)
		got, err := w.s.Document(ctx, seeAll, doc.ID)
		if err != nil || got.Title != "Before" || got.Version != 1 {
			t.Fatalf("document after the refused update: %+v, %v", got, err)
		}
		_, total, err := w.s.ListDocuments(ctx, quire.DocumentFilter{Visibility: seeAll})
		if err != nil || total != 1 {
			t.Fatalf("documents: %d, %v; want 1", total, err)
		}
	})

	t.Run("of concurrent claims of one key exactly one runs", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		const n = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			claimed int
			errs    []error
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kept, err := w.s.ClaimIdempotencyKey(context.Background(), w.claim("race", string(rune('a'+i)), "POST"), w.now, w.lease)
				mu.Lock()
				defer mu.Unlock()
				if err == nil && kept == nil {
					claimed++
				} else if quire.ErrorCode(err) != quire.EIDEMPOTENCYINPROGRESS {
					errs = append(errs, err)
				}
			}()
		}
		wg.Wait()
		if claimed != 1 || len(errs) > 0 {
			t.Fatalf("%d claims won (want 1); other errors: %v", claimed, errs)
		}
	})

	t.Run("prune deletes the kept answers that ended, in bounded rounds", func(t *testing.T) {
		w := &idemWorld{docWorld: newDocWorld(t, open), now: baseTime, lease: time.Minute}
		ctx := t.Context()
		keep := func(key string, at time.Time) {
			t.Helper()
			c := w.claim(key, "t", key)
			c.KeepUntil = at.Add(24 * time.Hour)
			if _, err := w.s.ClaimIdempotencyKey(ctx, c, at, w.lease); err != nil {
				t.Fatal(err)
			}
			if err := w.s.CompleteIdempotencyKey(ctx, c, quire.IdempotentAnswer{Status: 201, Body: []byte(key)}); err != nil {
				t.Fatal(err)
			}
		}
		keep("old-1", w.now)
		keep("old-2", w.now.Add(time.Second))
		keep("live", w.now.Add(time.Hour))
		// A running claim whose node died: pruned or forgotten with the
		// rest, and free again either way.
		if _, err := w.s.ClaimIdempotencyKey(ctx, w.claim("dead", "t", "dead"), w.now, w.lease); err != nil {
			t.Fatal(err)
		}
		later := w.now.Add(24*time.Hour + time.Minute)
		n1 := must(w.s.PruneIdempotencyKeys(ctx, later, 1))(t)
		n2, err := w.s.PruneIdempotencyKeys(ctx, later, 10)
		if err != nil || n1 != 1 || n2 < 1 {
			t.Fatalf("pruned %d then %d (%v), want 1 then at least 1", n1, n2, err)
		}
		// The live one stays and is still answered.
		if kept, err := w.s.ClaimIdempotencyKey(ctx, w.claim("live", "u", "live"), later, w.lease); err != nil || kept == nil || string(kept.Body) != "live" {
			t.Fatalf("the live answer after the prune: %v, %v", kept, err)
		}
		// The pruned ones are free again, for any request.
		for _, key := range []string{"old-1", "old-2", "dead"} {
			if kept, err := w.s.ClaimIdempotencyKey(ctx, w.claim(key, "u", "other"), later, w.lease); err != nil || kept != nil {
				t.Fatalf("claim of pruned %s: %v, %v", key, kept, err)
			}
		}
	})

	t.Run("a version's time is the document's updated_at at that save, with its author", func(t *testing.T) {
		// The resent-save rule of package docs relies on it.
		w := newDocWorld(t, open)
		d := w.create(t, draft(w.owner, "v1"), baseTime)
		d2, err := w.s.UpdateDocument(t.Context(), seeAll, d.ID, d.UpdatedAt, w.outsider.ID, baseTime, func(d *quire.Document) (bool, error) {
			d.Title = "v2"
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []*quire.Document{d, d2} {
			v, err := w.s.Version(t.Context(), seeAll, d.ID, want.Version)
			if err != nil || !v.CreatedAt.Equal(want.UpdatedAt) {
				t.Fatalf("version %d: created %v (%v), want %v", want.Version, v.CreatedAt, err, want.UpdatedAt)
			}
		}
		if v, _ := w.s.Version(t.Context(), seeAll, d.ID, 2); v.CreatedByID != w.outsider.ID {
			t.Fatalf("version 2 by %s, want %s", v.CreatedByID, w.outsider.ID)
		}
	})
}
