package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"quire"
	"quire/pgtest"
	"quire/postgres"
	"quire/storetest"
)

// indexNode is one node's view for these tests: a search for word, which
// must be answered by the node's index, and its total.
func searchByIndex(t *testing.T, db *postgres.DB, word string) int {
	t.Helper()
	before := must(db.Stats(t.Context())).Index.ListsByIndex
	docs, total, err := db.ListDocuments(t.Context(), quire.DocumentFilter{Visibility: quire.Visibility{All: true},
		Search: word, SortBy: "relevance", Desc: true, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if after := must(db.Stats(t.Context())).Index.ListsByIndex; after != before+1 {
		t.Fatalf("search %q: not answered by the index", word)
	}
	if len(docs) != total {
		t.Fatalf("search %q: %d documents, total %d", word, len(docs), total)
	}
	return total
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// newDoc writes a public document titled title on db.
func newDoc(t *testing.T, db *postgres.DB, owner *quire.User, title string) *quire.Document {
	t.Helper()
	d := &quire.Document{ID: uuid.Must(uuid.NewV7()).String(), Title: title, ContentType: "markdown", Status: "draft",
		Visibility: "public", OwnerID: owner.ID, Tags: []string{"ops"}}
	if err := db.CreateDocument(t.Context(), d, t0); err != nil {
		t.Fatal(err)
	}
	return d
}

// lastChange is the id of the last row of document_changes.
func lastChange(t *testing.T, db *postgres.DB) int64 {
	t.Helper()
	var last int64
	if err := db.Pool().QueryRow(t.Context(), `SELECT COALESCE(max(id), 0) FROM document_changes`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	return last
}

// waitCursor waits, without any list on db, until db's index holds change
// last: its follower caught up by itself. The deadline is a hang's, not a
// speed's.
func waitCursor(t *testing.T, db *postgres.DB, last int64, how string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for db.IndexCursor() < last {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the index holds change %d, not %d", how, db.IndexCursor(), last)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDocumentChangesInCommitOrder: of two transactions that change
// documents, the one that wrote first but commits last gets the later
// change id, so a node that read the log up to the first commit still
// finds the second: its index follows both.
func TestDocumentChangesInCommitOrder(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.StartFrom(t, "migrated", migrate))
	ctx := t.Context()
	owner := storetest.NewEditor(t, db, "ada@example.com")
	first, second := newDoc(t, db, owner, "first"), newDoc(t, db, owner, "second")
	if err := db.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	// A writes first and commits last.
	a, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Rollback(context.Background())
	if _, err := a.Exec(ctx, `UPDATE documents SET title = 'zebra' WHERE id = $1`, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE documents SET title = 'yak' WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	// The node reads the log up to B's commit.
	if err := db.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	if n := searchByIndex(t, db, "yak"); n != 1 {
		t.Fatalf("yak: %d", n)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	if n := searchByIndex(t, db, "zebra"); n != 1 {
		t.Fatalf("zebra, committed after yak but written before it: %d found by the index", n)
	}
	if n := searchByIndex(t, db, "first"); n != 0 {
		t.Fatalf("first, renamed: %d found by the index", n)
	}
}

// TestTwoNodesIndex: a document written on node A is found by the first
// search on node B after the write returns, answered by B's index; B's
// index follows A's writes by itself, woken by the notification of each
// commit, or by its poll when it does not listen; a node started after
// the writes builds its index with them.
func TestTwoNodesIndex(t *testing.T) {
	t.Parallel()
	url := pgtest.StartFrom(t, "migrated", migrate)
	a, b, c := open(t, url), open(t, url), open(t, url)
	ctx := t.Context()
	// b listens and polls once an hour: only a notification wakes it; c
	// does not listen and polls often.
	b.FollowIndex(time.Hour, 10000, true)
	c.FollowIndex(50*time.Millisecond, 10000, false)
	owner := storetest.NewEditor(t, a, "ada@example.com")
	newDoc(t, a, owner, "before")
	for _, node := range []*postgres.DB{a, b, c} {
		if err := node.SearchIndexReady(ctx); err != nil {
			t.Fatal(err)
		}
	}

	newDoc(t, a, owner, "kestrel notes")
	if n := searchByIndex(t, b, "kestrel"); n != 1 {
		t.Fatalf("node B, right after the write on A: %d found", n)
	}
	newDoc(t, a, owner, "osprey notes")
	last := lastChange(t, a)
	waitCursor(t, b, last, "node B, woken by the notification")
	waitCursor(t, c, last, "node C, by its poll")
	for _, node := range []*postgres.DB{b, c} {
		if n := searchByIndex(t, node, "osprey"); n != 1 {
			t.Fatalf("osprey: %d found", n)
		}
	}

	// A node restarted: c closes, A writes, c opens again.
	c.Close()
	newDoc(t, a, owner, "heron notes")
	c = open(t, url)
	if err := c.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	if n := searchByIndex(t, c, "notes"); n != 3 {
		t.Fatalf("node C restarted: %d notes found", n)
	}
}

// TestIndexBehindTrimmedLogBuildsAgain: a node whose index is older than
// the changes another node deleted builds it again rather than miss them.
func TestIndexBehindTrimmedLogBuildsAgain(t *testing.T) {
	t.Parallel()
	url := pgtest.StartFrom(t, "migrated", migrate)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()
	a.FollowIndex(10*time.Millisecond, 2, false) // keeps 2 changes only
	b.FollowIndex(time.Hour, 10000, false)       // follows only when asked
	owner := storetest.NewEditor(t, a, "ada@example.com")
	newDoc(t, a, owner, "before")
	for _, node := range []*postgres.DB{a, b} {
		if err := node.SearchIndexReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		newDoc(t, a, owner, fmt.Sprint("plover ", i))
	}
	last := lastChange(t, a)
	waitCursor(t, a, last, "node A")
	// A's goroutine trims below last-2 at its next tick.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var below int64
		if err := a.Pool().QueryRow(ctx, `SELECT below FROM document_changes_trimmed`).Scan(&below); err != nil {
			t.Fatal(err)
		}
		if below >= last-2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log was not trimmed: below %d, last %d", below, last)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	if n := searchByIndex(t, b, "plover"); n != 10 {
		t.Fatalf("node B, behind the trimmed log: %d found", n)
	}
}
