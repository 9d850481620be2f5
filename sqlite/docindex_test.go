package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"quire"
)

// listBoth answers f from the index and from the store's own queries, and
// fails unless both give the same total and ids, and the index answered.
func listBoth(t *testing.T, db *DB, f quire.DocumentFilter) int {
	t.Helper()
	ctx := t.Context()
	if err := db.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	before := db.index.ByIndex.Load()
	a, at, err := db.ListDocuments(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if db.index.ByIndex.Load() != before+1 {
		t.Fatalf("%+v: not answered by the index", f)
	}
	db.UseSearchIndex(false)
	defer db.UseSearchIndex(true)
	b, bt, err := db.ListDocuments(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ds []quire.Document) (s []string) {
		for _, d := range ds {
			s = append(s, d.ID)
		}
		return s
	}
	if at != bt || !slices.Equal(ids(a), ids(b)) {
		t.Fatalf("%+v: index %d %v, store %d %v", f, at, ids(a), bt, ids(b))
	}
	return at
}

// TestDocIndexRebuildAndTrim: an index holding more replaced states than
// documents is built afresh (and answers as before), and the changes it
// applied are deleted from document_changes but the last.
func TestDocIndexRebuildAndTrim(t *testing.T) {
	t.Parallel()
	db, owner := openWithOwner(t)
	ctx := t.Context()
	db.index.RebuildMin.Store(1 << 40) // none while the states pile up
	db.index.TrimEvery.Store(1)
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		d := &quire.Document{Title: fmt.Sprint("release notes ", i), Content: "deploy the release", Status: "published",
			Visibility: "public", ContentType: "markdown", OwnerID: owner.ID, Tags: []string{"ops"}}
		if err := db.CreateDocument(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	all := quire.Visibility{All: true}
	f := quire.DocumentFilter{Visibility: all, Search: "rele", SortBy: "relevance", Desc: true, Limit: 3}
	if n := listBoth(t, db, f); n != 5 {
		t.Fatalf("total %d", n)
	}
	first := db.index.Index()
	for i := range 12 {
		now = now.Add(time.Second)
		_, err := db.UpdateDocument(ctx, all, ids[i%5], time.Time{}, owner.ID, now, func(d *quire.Document) (bool, error) {
			d.Content += " release"
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Caught up after each: one dead state per update.
		if err := db.SearchIndexReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := db.index.Index().Stats(); st.Dead < 12 || db.index.Index() != first {
		t.Fatalf("before the build: %+v", st)
	}
	db.index.RebuildMin.Store(1)
	if err := db.indexTick(ctx); err != nil { // builds afresh: 12 dead states, 5 documents
		t.Fatal(err)
	}
	if db.index.Index() == first {
		t.Fatal("the index was not built again")
	}
	if st := db.index.Index().Stats(); st.Dead != 0 || st.Rows != 5 {
		t.Fatalf("after the build: %+v", st)
	}
	listBoth(t, db, f)
	listBoth(t, db, quire.DocumentFilter{Visibility: all, Tags: []string{"ops"}, Status: "published", Limit: 2})
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM document_changes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d changes kept, want the last one", n)
	}
}

// TestDocIndexOtherWriter: a document written by another connection to the
// file (an admin command beside the server) is found by the index of a
// server that did not write it.
func TestDocIndexOtherWriter(t *testing.T) {
	t.Parallel()
	path := migratedCopy(t)
	ctx := context.Background()
	server, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	owner := &quire.User{Email: "owner@example.com", Name: "Owner", Role: quire.Role{Key: "editor"},
		Status: quire.UserActive, PasswordHash: "h"}
	if err := server.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	all := quire.Visibility{All: true}
	f := quire.DocumentFilter{Visibility: all, Search: "café", SortBy: "relevance", Desc: true}
	if n := listBoth(t, server, f); n != 0 {
		t.Fatalf("total %d before", n)
	}
	admin, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	d := &quire.Document{Title: "Le Café", Content: "un café crème", Status: "draft", Visibility: "public",
		ContentType: "markdown", OwnerID: owner.ID}
	if err := admin.CreateDocument(ctx, d, time.Now()); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	if n := listBoth(t, server, f); n != 1 {
		t.Fatalf("total %d after another process wrote", n)
	}
	if n := listBoth(t, server, quire.DocumentFilter{Visibility: all, Search: "CAFE cre"}); n != 1 {
		t.Fatalf("folded: total %d", n)
	}
}
