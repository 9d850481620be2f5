package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/idempotency"
)

func idemKey(k string) reqOpt { return header("Idempotency-Key", k) }

// countDocs returns how many documents the token's user sees.
func (fx *docsFixture) countDocs(token string) int {
	fx.t.Helper()
	return decodeList(fx.t, fx.do("GET", docsPath, bearer(token))).Pagination.Total
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	sam := fx.person("sam@example.com", "editor", "Engineering", false)

	t.Run("a repeated create answers the kept answer and makes no second document", func(t *testing.T) {
		fx := fx.in(t)
		body := map[string]any{"title": "Runbook", "content": "step one"}
		first := fx.do("POST", docsPath, bearer(ada), jsonBody(body), idemKey("create-1"))
		if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d replayed=%q %s", first.Status, first.Header.Get("Idempotent-Replayed"), first.Body)
		}
		before := fx.countDocs(ada)
		again := fx.do("POST", docsPath, bearer(ada), jsonBody(body), idemKey("create-1"))
		if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("repeat: %d replayed=%q %s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
		}
		if !bytes.Equal(first.Body, again.Body) {
			t.Fatalf("the repeat's body differs:\n%s\n%s", first.Body, again.Body)
		}
		for _, h := range []string{"Location", "ETag"} {
			if first.Header.Get(h) == "" || first.Header.Get(h) != again.Header.Get(h) {
				t.Fatalf("%s: first %q, repeat %q", h, first.Header.Get(h), again.Header.Get(h))
			}
		}
		if after := fx.countDocs(ada); after != before {
			t.Fatalf("documents: %d after the repeat, %d before", after, before)
		}
	})

	t.Run("the same key with another body is IDEMPOTENCY_KEY_REUSED", func(t *testing.T) {
		fx := fx.in(t)
		fx.create(ada, map[string]any{"title": "warm-up"})
		r := fx.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "A"}), idemKey("reuse"))
		if r.Status != http.StatusCreated {
			t.Fatalf("first: %d %s", r.Status, r.Body)
		}
		before := fx.countDocs(ada)
		fx.wantError(fx.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "B"}), idemKey("reuse")),
			http.StatusUnprocessableEntity, quire.EIDEMPOTENCYKEYREUSED)
		doc := decodeDoc(t, r)
		fx.wantError(fx.do("DELETE", docsPath+"/"+doc.ID, bearer(ada), idemKey("reuse")),
			http.StatusUnprocessableEntity, quire.EIDEMPOTENCYKEYREUSED)
		if after := fx.countDocs(ada); after != before {
			t.Fatalf("documents: %d, want %d", after, before)
		}
	})

	t.Run("keys are per user", func(t *testing.T) {
		fx := fx.in(t)
		body := map[string]any{"title": "Mine"}
		a := decodeDoc(t, fx.do("POST", docsPath, bearer(ada), jsonBody(body), idemKey("shared")))
		r := fx.do("POST", docsPath, bearer(sam), jsonBody(body), idemKey("shared"))
		s := decodeDoc(t, r)
		if r.Header.Get("Idempotent-Replayed") != "" || s.ID == a.ID || s.Owner.ID == a.Owner.ID {
			t.Fatalf("sam's request got ada's answer: %s", r.Body)
		}
	})

	t.Run("a repeat while the first runs is IDEMPOTENCY_IN_PROGRESS; after the lease a retry runs", func(t *testing.T) {
		fx := fx.in(t)
		body := `{"title":"Slow"}`
		// A node that claimed the key and died: a running record.
		c := quire.IdempotencyClaim{
			UserID: fx.users["ada@example.com"].ID, Key: "in-flight", Token: "dead-node",
			Fingerprint: idempotency.Fingerprint("POST", docsPath, []byte(body)),
			KeepUntil:   fx.clock.Now().Add(idempotency.TTL),
		}
		if kept, err := fx.store.ClaimIdempotencyKey(context.Background(), c, fx.clock.Now(), idempotency.DefaultLease); err != nil || kept != nil {
			t.Fatalf("claim: %v %v", kept, err)
		}
		send := func() *resp {
			return fx.do("POST", docsPath, bearer(ada), rawBody(body), header("Content-Type", "application/json"), idemKey("in-flight"))
		}
		r := send()
		fx.wantError(r, http.StatusConflict, quire.EIDEMPOTENCYINPROGRESS)
		if got := r.Header.Get("Retry-After"); got != "90" {
			t.Fatalf("Retry-After %q, want 90 (the rest of the lease)", got)
		}
		before := fx.countDocs(ada)
		fx.clock.Advance(idempotency.DefaultLease)
		if r := send(); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("after the lease: %d %s", r.Status, r.Body)
		}
		if r := send(); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("repeat after the retry: %d %s", r.Status, r.Body)
		}
		if after := fx.countDocs(ada); after != before+1 {
			t.Fatalf("documents: %d, want %d", after, before+1)
		}
	})

	t.Run("a refusal is kept as the answer too", func(t *testing.T) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "Guarded"})
		decodeDoc(t, fx.do("PUT", docsPath+"/"+doc.ID, bearer(ada), jsonBody(map[string]any{"title": "moved on"})))
		body := map[string]any{"title": "mine", "baseUpdatedAt": doc.UpdatedAt}
		first := fx.do("PUT", docsPath+"/"+doc.ID, bearer(ada), jsonBody(body), idemKey("stale"))
		fx.wantError(first, http.StatusConflict, quire.EDOCUMENTCONFLICT)
		again := fx.do("PUT", docsPath+"/"+doc.ID, bearer(ada), jsonBody(body), idemKey("stale"))
		fx.wantError(again, http.StatusConflict, quire.EDOCUMENTCONFLICT)
		if again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, again.Body) {
			t.Fatalf("the refusal was not replayed: %q\n%s\n%s", again.Header.Get("Idempotent-Replayed"), first.Body, again.Body)
		}
	})

	t.Run("update, restore and delete run once under a key", func(t *testing.T) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "v1"})
		path := docsPath + "/" + doc.ID
		upd := map[string]any{"title": "v2", "baseUpdatedAt": doc.UpdatedAt}
		for i := 0; i < 2; i++ {
			if r := fx.do("PUT", path, bearer(ada), jsonBody(upd), idemKey("upd")); r.Status != http.StatusOK {
				t.Fatalf("update %d: %d %s", i, r.Status, r.Body)
			}
		}
		for i := 0; i < 2; i++ {
			if r := fx.do("POST", path+"/versions/1/restore", bearer(ada), idemKey("restore")); r.Status != http.StatusOK {
				t.Fatalf("restore %d: %d %s", i, r.Status, r.Body)
			}
		}
		if vs := decodeVersions(t, fx.do("GET", path+"/versions", bearer(ada))); len(vs) != 3 {
			t.Fatalf("%d versions, want 3 (create, one update, one restore)", len(vs))
		}
		for i := 0; i < 2; i++ {
			r := fx.do("DELETE", path, bearer(ada), idemKey("del"))
			if r.Status != http.StatusOK || (i == 1) != (r.Header.Get("Idempotent-Replayed") == "true") {
				t.Fatalf("delete %d: %d replayed=%q %s", i, r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
			}
		}
	})

	t.Run("restore from the trash and delete for good run once under a key", func(t *testing.T) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "binned"})
		trash := "/api/documentation/trash/" + doc.ID
		if r := fx.do("DELETE", docsPath+"/"+doc.ID, bearer(ada)); r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		var first []byte
		for i := 0; i < 2; i++ {
			r := fx.do("POST", trash+"/restore", bearer(ada), idemKey("untrash"))
			if r.Status != http.StatusOK || (i == 1) != (r.Header.Get("Idempotent-Replayed") == "true") {
				t.Fatalf("restore %d: %d replayed=%q %s", i, r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
			}
			if i == 0 {
				first = r.Body
			} else if !bytes.Equal(first, r.Body) {
				t.Fatalf("the repeat's body differs:\n%s\n%s", first, r.Body)
			}
		}
		// Back in the trash, then deleted for good: the repeat is the
		// kept answer, not a 404 for a document already gone.
		if r := fx.do("DELETE", docsPath+"/"+doc.ID, bearer(ada)); r.Status != http.StatusOK {
			t.Fatalf("delete again: %d %s", r.Status, r.Body)
		}
		for i := 0; i < 2; i++ {
			r := fx.do("DELETE", trash, bearer(ada), idemKey("purge"))
			if r.Status != http.StatusOK || (i == 1) != (r.Header.Get("Idempotent-Replayed") == "true") {
				t.Fatalf("purge %d: %d replayed=%q %s", i, r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
			}
		}
		if r := fx.do("GET", docsPath+"/"+doc.ID, bearer(ada)); r.Status != http.StatusNotFound {
			t.Fatalf("after the purge: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a repeat of each change is the first answer's bytes, ETag and Location included", func(t *testing.T) {
		fx := fx.in(t)
		admin := fx.person("keeper@example.com", "admin", "", false)
		doc := fx.create(admin, map[string]any{"title": "kept", "content": "one"})
		path := docsPath + "/" + doc.ID
		twice := func(name string, status int, method, path string, opts ...reqOpt) *resp {
			t.Helper()
			opts = append(opts, bearer(admin), idemKey(name))
			first := fx.do(method, path, opts...)
			again := fx.do(method, path, opts...)
			if first.Status != status || again.Status != status || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("%s: %d then %d (replayed %q), want %d: %s", name, first.Status, again.Status,
					again.Header.Get("Idempotent-Replayed"), status, again.Body)
			}
			if !bytes.Equal(first.Body, again.Body) {
				t.Errorf("%s: the repeat's body differs:\n%s\n%s", name, first.Body, again.Body)
			}
			for _, h := range []string{"Location", "ETag", "Content-Type"} {
				if first.Header.Get(h) != again.Header.Get(h) {
					t.Errorf("%s: %s first %q, repeat %q", name, h, first.Header.Get(h), again.Header.Get(h))
				}
			}
			return first
		}
		upd := twice("update", http.StatusOK, "PUT", path, jsonBody(map[string]any{"title": "kept 2", "baseUpdatedAt": doc.UpdatedAt}))
		if upd.Header.Get("ETag") == "" {
			t.Fatal("update: no ETag")
		}
		if r := twice("restore", http.StatusOK, "POST", path+"/versions/1/restore"); r.Header.Get("ETag") == upd.Header.Get("ETag") {
			t.Fatalf("restore: the ETag of the update, %s", r.Header.Get("ETag"))
		}
		var f struct {
			Folder struct {
				ID string `json:"id"`
			} `json:"folder"`
		}
		twice("folder", http.StatusCreated, "POST", "/api/documentation/folders", jsonBody(map[string]any{"name": "Kept"})).decode(t, &f)
		twice("folder-rename", http.StatusOK, "PUT", "/api/documentation/folders/"+f.Folder.ID, jsonBody(map[string]any{"name": "Kept 2"}))
		twice("folder-delete", http.StatusOK, "DELETE", "/api/documentation/folders/"+f.Folder.ID)
		var at struct {
			Attachment struct {
				ID string `json:"id"`
			} `json:"attachment"`
		}
		if r := twice("attach", http.StatusCreated, "POST", path+"/attachments", fileBody("a.txt", []byte("hello"))); r.Header.Get("Location") == "" {
			t.Fatal("attachment: no Location")
		} else {
			r.decode(t, &at)
		}
		twice("detach", http.StatusOK, "DELETE", "/api/documentation/attachments/"+at.Attachment.ID)
		twice("delete", http.StatusOK, "DELETE", path)
	})

	t.Run("a write refused to the caller's role is 403 before its body is read, and is not kept", func(t *testing.T) {
		fx := fx.in(t)
		viewer := fx.person("vic@example.com", "viewer", "Engineering", false)
		for i := 0; i < 2; i++ {
			r := fx.do("POST", docsPath, bearer(viewer), rawBody("{"), header("Content-Type", "application/json"), idemKey("not-mine"))
			fx.wantError(r, http.StatusForbidden, quire.EFORBIDDEN)
			if r.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("try %d: the refusal was replayed", i)
			}
		}
	})

	t.Run("a folder created twice under a key is one folder", func(t *testing.T) {
		fx := fx.in(t)
		admin := fx.person("root@example.com", "admin", "", false)
		for i := 0; i < 2; i++ {
			if r := fx.do("POST", "/api/documentation/folders", bearer(admin), jsonBody(map[string]any{"name": "Ops"}), idemKey("f")); r.Status != http.StatusCreated {
				t.Fatalf("create folder %d: %d %s", i, r.Status, r.Body)
			}
		}
		var list struct {
			Folders []struct {
				Name string `json:"name"`
			} `json:"folders"`
		}
		fx.do("GET", "/api/documentation/folders", bearer(admin)).decode(t, &list)
		n := 0
		for _, f := range list.Folders {
			if f.Name == "Ops" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d folders named Ops, want 1", n)
		}
	})

	t.Run("a malformed key is a VALIDATION_ERROR naming it", func(t *testing.T) {
		fx := fx.in(t)
		for _, k := range []string{strings.Repeat("k", 256), "caf\u00e9", "tab\tkey"} {
			fx.wantFields(fx.do("POST", docsPath, bearer(ada), jsonBody(map[string]any{"title": "x"}), idemKey(k)),
				map[string]string{"Idempotency-Key": "must be 1 to 255 printable ASCII characters"})
		}
	})
}

// TestResentSave: without a key, a guarded update resent after it
// succeeded (a proxy's resend, a retry after a lost answer) is answered
// 200 with the document, not 409: a resent save is not a conflict with
// itself. Anything else on a stale base is still a conflict.
func TestResentSave(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	sam := fx.person("sam@example.com", "admin", "Engineering", false)

	setup := func(t *testing.T) (path string, body map[string]any, saved docWire) {
		fx := fx.in(t)
		doc := fx.create(ada, map[string]any{"title": "Plan", "tags": []string{"a"}})
		path = docsPath + "/" + doc.ID
		body = map[string]any{"content": "the new plan", "tags": []string{"a", "b"}, "baseUpdatedAt": doc.UpdatedAt}
		fx.clock.Advance(time.Second)
		return path, body, decodeDoc(t, fx.do("PUT", path, bearer(ada), jsonBody(body)))
	}

	t.Run("the same save resent by its author is 200 with the document, and records nothing", func(t *testing.T) {
		fx := fx.in(t)
		path, body, saved := setup(t)
		fx.clock.Advance(time.Second)
		r := fx.do("PUT", path, bearer(ada), jsonBody(body))
		if diff := cmp.Diff(saved, decodeDoc(t, r)); diff != "" {
			t.Fatalf("the resend's document (-saved +resend)\n%s", diff)
		}
		if r.Header.Get("ETag") == "" {
			t.Fatal("no ETag")
		}
		if vs := decodeVersions(t, fx.do("GET", path+"/versions", bearer(ada))); len(vs) != 2 {
			t.Fatalf("%d versions, want 2", len(vs))
		}
	})

	t.Run("the same fields sent by someone else are a conflict", func(t *testing.T) {
		fx := fx.in(t)
		path, body, _ := setup(t)
		fx.wantError(fx.do("PUT", path, bearer(sam), jsonBody(body)), http.StatusConflict, quire.EDOCUMENTCONFLICT)
	})

	t.Run("other fields on the same stale base are a conflict", func(t *testing.T) {
		fx := fx.in(t)
		path, body, _ := setup(t)
		body["content"] = "another plan"
		fx.wantError(fx.do("PUT", path, bearer(ada), jsonBody(body)), http.StatusConflict, quire.EDOCUMENTCONFLICT)
	})

	t.Run("the same save on a base older than the version before it is a conflict", func(t *testing.T) {
		fx := fx.in(t)
		path, body, saved := setup(t)
		fx.clock.Advance(time.Second)
		again := map[string]any{"title": "Plan 2", "baseUpdatedAt": saved.UpdatedAt}
		third := decodeDoc(t, fx.do("PUT", path, bearer(ada), jsonBody(again)))
		fx.clock.Advance(time.Second)
		back := map[string]any{"title": "Plan", "baseUpdatedAt": third.UpdatedAt}
		decodeDoc(t, fx.do("PUT", path, bearer(ada), jsonBody(back)))
		// The newest version equals body applied to version 1, but is
		// not on top of it.
		fx.wantError(fx.do("PUT", path, bearer(ada), jsonBody(body)), http.StatusConflict, quire.EDOCUMENTCONFLICT)
	})
}
