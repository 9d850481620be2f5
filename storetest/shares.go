package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"quire"
)

func init() { register("shares", testShares) }

// newShare stores a share of doc by creator whose token is token, expiring
// at expires (zero: never), at at.
func newShare(t *testing.T, s quire.Store, vis quire.Visibility, doc *quire.Document, creator *quire.User, token string,
	expires, at time.Time) *quire.Share {
	t.Helper()
	sh := &quire.Share{DocumentID: doc.ID, CreatedByID: creator.ID, TokenHash: tokenHash(token),
		TokenSealed: []byte("sealed " + token), ExpiresAt: expires}
	if err := s.CreateShare(t.Context(), vis, sh, at); err != nil {
		t.Fatalf("create share: %v", err)
	}
	return sh
}

// working says whether the share of token works at now, failing the test
// on an error other than NOT_FOUND.
func working(t *testing.T, s quire.Store, token string, now time.Time) bool {
	t.Helper()
	sh, u, err := s.WorkingShare(t.Context(), tokenHash(token), now)
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if sh == nil || u == nil || u.ID != sh.CreatedByID {
		t.Fatalf("working share %+v of creator %+v", sh, u)
	}
	return true
}

func testShares(t *testing.T, open Opener) {
	t.Run("a share reads back whole, in its document's list and the administrators' list, and goes", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Runbook")
		ctx := t.Context()
		expires := baseTime.Add(48*time.Hour + 123456*time.Microsecond)
		sh := newShare(t, w.s, sees(w.owner), doc, w.owner, "token-1", expires, baseTime)
		if sh.ID == "" || !sh.CreatedAt.Equal(baseTime) {
			t.Fatalf("created %+v", sh)
		}
		got := must(w.s.ShareByID(ctx, sh.ID))(t)
		want := quire.Share{ID: sh.ID, DocumentID: doc.ID, DocumentTitle: "Runbook", OwnerID: w.owner.ID,
			CreatedByID: w.owner.ID, CreatedByName: w.owner.Name, TokenHash: tokenHash("token-1"),
			TokenSealed: []byte("sealed token-1"), CreatedAt: baseTime, ExpiresAt: expires}
		if !sameShare(*got, want) {
			t.Fatalf("read back %+v, want %+v", *got, want)
		}
		other := newShare(t, w.s, seeAll, doc, w.outsider, "token-2", time.Time{}, baseTime.Add(time.Second))
		if ids := pluck(must(w.s.DocumentShares(ctx, doc.ID, ""))(t), shareID); !slices.Equal(ids, []string{sh.ID, other.ID}) {
			t.Fatalf("document's shares %v", ids)
		}
		if ids := pluck(must(w.s.DocumentShares(ctx, doc.ID, w.outsider.ID))(t), shareID); !slices.Equal(ids, []string{other.ID}) {
			t.Fatalf("the outsider's shares %v", ids)
		}
		page, total, err := w.s.Shares(ctx, 0, 1)
		if err != nil || total != 2 || len(page) != 1 || page[0].ID != other.ID {
			t.Fatalf("first page %v of %d, %v", pluck(page, shareID), total, err)
		}
		page, _, _ = w.s.Shares(ctx, 1, 1)
		if len(page) != 1 || page[0].ID != sh.ID {
			t.Fatalf("second page %v", pluck(page, shareID))
		}
		if err := w.s.DeleteShare(ctx, sh.ID); err != nil {
			t.Fatal(err)
		}
		_, err = w.s.ShareByID(ctx, sh.ID)
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, w.s.DeleteShare(ctx, sh.ID), quire.ENOTFOUND)
		wantCode(t, w.s.DeleteShare(ctx, "a\x00b"), quire.ENOTFOUND)
		if working(t, w.s, "token-1", baseTime) {
			t.Error("a revoked share still works")
		}
		if !working(t, w.s, "token-2", baseTime) {
			t.Error("the other share stopped working")
		}
	})

	t.Run("a share is created only on a visible document outside the trash, checked in the insert", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Private")
		ctx := t.Context()
		for _, c := range []struct {
			name string
			vis  quire.Visibility
			id   string
		}{
			{"a document the creator cannot see", sees(w.outsider), doc.ID},
			{"an unknown document", seeAll, unknownID},
			{"an id with a NUL", seeAll, "a\x00b"},
		} {
			sh := &quire.Share{DocumentID: c.id, CreatedByID: w.outsider.ID, TokenHash: tokenHash(c.name), TokenSealed: []byte("x")}
			wantCode(t, w.s.CreateShare(ctx, c.vis, sh, baseTime), quire.ENOTFOUND)
		}
		if err := w.s.DeleteDocument(ctx, seeAll, doc.ID, w.owner.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		sh := &quire.Share{DocumentID: doc.ID, CreatedByID: w.owner.ID, TokenHash: tokenHash("t"), TokenSealed: []byte("x")}
		wantCode(t, w.s.CreateShare(ctx, seeAll, sh, baseTime), quire.ENOTFOUND)
		if _, total, _ := w.s.Shares(ctx, 0, 10); total != 0 {
			t.Fatalf("%d shares written", total)
		}
	})

	t.Run("a share works only while unexpired, its document out of the trash, sharing on and its creator active", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Guide")
		ctx := t.Context()
		expires := baseTime.Add(time.Hour)
		newShare(t, w.s, seeAll, doc, w.owner, "tok", expires, baseTime)
		if !working(t, w.s, "tok", baseTime) || !working(t, w.s, "tok", expires.Add(-time.Microsecond)) {
			t.Fatal("a fresh share does not work")
		}
		if working(t, w.s, "tok", expires) {
			t.Error("a share works at its expiry")
		}
		if working(t, w.s, "unknown", baseTime) {
			t.Error("an unknown token works")
		}
		step := func(name string, stop, undo func() error) {
			t.Helper()
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if working(t, w.s, "tok", baseTime) {
				t.Errorf("the share works %s", name)
			}
			if err := undo(); err != nil {
				t.Fatal(err)
			}
			if !working(t, w.s, "tok", baseTime) {
				t.Errorf("the share does not work again after %s", name)
			}
		}
		step("while its document is in the trash",
			func() error { return w.s.DeleteDocument(ctx, seeAll, doc.ID, w.owner.ID, baseTime) },
			func() error { _, err := w.s.RestoreDocument(ctx, seeAll, doc.ID); return err })
		step("while sharing is off",
			func() error { return w.s.SetSetting(ctx, quire.SettingSharing, "off") },
			func() error { return w.s.SetSetting(ctx, quire.SettingSharing, "on") })
		step("while its creator is disabled",
			func() error { return w.s.DisableUser(ctx, w.owner.ID, baseTime) },
			func() error { return w.s.EnableUser(ctx, w.owner.ID, baseTime) })
	})

	t.Run("the working shares of linked documents are found, the others not", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "One")
		ctx := t.Context()
		two := w.create(t, draft(w.owner, "Two"), baseTime)
		three := w.create(t, draft(w.owner, "Three"), baseTime)
		a := newShare(t, w.s, seeAll, doc, w.owner, "a", time.Time{}, baseTime)
		newShare(t, w.s, seeAll, two, w.owner, "b", baseTime.Add(time.Minute), baseTime) // expired by then
		shares, users, err := w.s.WorkingSharesOf(ctx, seeAll, []string{doc.ID, two.ID, three.ID, unknownID}, baseTime.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if ids := pluck(shares, shareID); !slices.Equal(ids, []string{a.ID}) || len(users) != 1 || users[0].ID != w.owner.ID {
			t.Fatalf("working shares %v by %v", ids, users)
		}
		if shares, _, err := w.s.WorkingSharesOf(ctx, seeAll, nil, baseTime); err != nil || len(shares) != 0 {
			t.Fatalf("no ids: %v, %v", shares, err)
		}
	})

	t.Run("a document has at most MaxSharesPerDocument shares", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Often shared")
		for i := range quire.MaxSharesPerDocument {
			newShare(t, w.s, seeAll, doc, w.owner, fmt.Sprint("cap", i), time.Time{}, baseTime)
		}
		one := func(vis quire.Visibility) error {
			return w.s.CreateShare(t.Context(), vis, &quire.Share{DocumentID: doc.ID, CreatedByID: w.owner.ID,
				TokenHash: tokenHash("one more"), TokenSealed: []byte("sealed")}, baseTime)
		}
		if err := one(sees(w.owner)); quire.ErrorCode(err) != quire.ELIMITREACHED {
			t.Errorf("one share more: %v, want LIMIT_REACHED", err)
		}
		if err := one(sees(w.outsider)); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("one share more of a document the caller cannot see: %v, want NOT_FOUND", err)
		}
		shares, err := w.s.DocumentShares(t.Context(), doc.ID, "")
		if err != nil || len(shares) != quire.MaxSharesPerDocument {
			t.Errorf("%d shares (%v), want %d", len(shares), err, quire.MaxSharesPerDocument)
		}
	})

	t.Run("the working shares of linked documents are those of documents the reader sees, a few a document", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Private") // the owner's private draft
		ctx := t.Context()
		var made []string
		for i := range quire.MaxSharesOf + 2 {
			sh := newShare(t, w.s, seeAll, doc, w.owner, fmt.Sprint("many", i), time.Time{}, baseTime.Add(time.Duration(i)*time.Second))
			made = append(made, sh.ID)
		}
		at := baseTime.Add(time.Hour)
		if shares, _, err := w.s.WorkingSharesOf(ctx, sees(w.outsider), []string{doc.ID}, at); err != nil || len(shares) != 0 {
			t.Errorf("a reader who cannot see the document got its shares %v (%v)", pluck(shares, shareID), err)
		}
		shares, users, err := w.s.WorkingSharesOf(ctx, sees(w.owner), []string{doc.ID}, at)
		if err != nil {
			t.Fatal(err)
		}
		if ids := pluck(shares, shareID); !slices.Equal(ids, made[:quire.MaxSharesOf]) || len(users) != len(ids) {
			t.Errorf("the owner got shares %v, want the %d oldest of %v", ids, quire.MaxSharesOf, made)
		}
	})

	t.Run("views add up in batches and the last view never moves back", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Counted")
		ctx := t.Context()
		sh := newShare(t, w.s, seeAll, doc, w.owner, "v", time.Time{}, baseTime)
		later := baseTime.Add(time.Minute + 654321*time.Microsecond)
		if err := w.s.AddShareViews(ctx, map[string]quire.ShareViews{sh.ID: {Count: 3, Last: later}, unknownID: {Count: 1, Last: later}}); err != nil {
			t.Fatal(err)
		}
		if err := w.s.AddShareViews(ctx, map[string]quire.ShareViews{sh.ID: {Count: 2, Last: baseTime.Add(time.Second)}}); err != nil {
			t.Fatal(err)
		}
		got := must(w.s.ShareByID(ctx, sh.ID))(t)
		if got.Views != 5 || !got.LastViewedAt.Equal(later) {
			t.Fatalf("views %d, last %v; want 5, %v", got.Views, got.LastViewedAt, later)
		}
	})

	t.Run("a purged document takes its shares with it", func(t *testing.T) {
		w, doc := newDocWorldWithDraft(t, open, "Gone")
		ctx := t.Context()
		sh := newShare(t, w.s, seeAll, doc, w.owner, "p", time.Time{}, baseTime)
		if err := w.s.DeleteDocument(ctx, seeAll, doc.ID, w.owner.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		if err := w.s.PurgeDocument(ctx, seeAll, doc.ID); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.ShareByID(ctx, sh.ID)
		wantCode(t, err, quire.ENOTFOUND)
	})
}

func shareID(s quire.Share) string { return s.ID }

func sameShare(a, b quire.Share) bool {
	return a.ID == b.ID && a.DocumentID == b.DocumentID && a.DocumentTitle == b.DocumentTitle && a.OwnerID == b.OwnerID &&
		a.CreatedByID == b.CreatedByID && a.CreatedByName == b.CreatedByName && string(a.TokenHash) == string(b.TokenHash) &&
		string(a.TokenSealed) == string(b.TokenSealed) && a.CreatedAt.Equal(b.CreatedAt) && a.ExpiresAt.Equal(b.ExpiresAt) &&
		a.Views == b.Views && a.LastViewedAt.Equal(b.LastViewedAt)
}
