package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/pgtest"
	"quire/storetest"
)

// TestMigrationFindsExistingTags: migration 0015 rebuilds the vectors of
// documents saved before it, so that their tags are found at once.
func TestMigrationFindsExistingTags(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t)
	db := open(t, url)
	ctx := t.Context()
	u := storetest.NewEditor(t, db, "ada@example.com")
	d := &quire.Document{Title: "Cluster notes", ContentType: "markdown", Status: "draft", Visibility: "private",
		OwnerID: u.ID, Tags: []string{"Kubernetes-Ops"}}
	if err := db.CreateDocument(ctx, d, t0); err != nil {
		t.Fatal(err)
	}
	// The database as it was before 0015: vectors without the tags' words
	// (weight D), and the migration not applied.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`UPDATE documents SET search = ts_filter(search, '{a,b,c}')`,
		`DELETE FROM schema_migrations WHERE name = '0015_search_tags.sql'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	search := func() int {
		_, total, err := db.ListDocuments(ctx, quire.DocumentFilter{Visibility: quire.Visibility{All: true}, Search: "kubernetes ops", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return total
	}
	if n := search(); n != 0 {
		t.Fatalf("before the migration the tag is found (%d): the setup is wrong", n)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := search(); n != 1 {
		t.Errorf("after the migration a search for the tag finds %d documents, want 1", n)
	}
}

// TestLinksBackfill: a database whose documents were saved before
// document_links existed (migration 0014 marks it) has their links read at
// the next Open.
func TestLinksBackfill(t *testing.T) {
	t.Parallel()
	url := pgtest.Start(t)
	db := open(t, url)
	u := storetest.NewEditor(t, db, "a@example.com")
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	target := &quire.Document{Title: "Target", ContentType: "markdown", Status: "draft", Visibility: "public", OwnerID: u.ID}
	if err := db.CreateDocument(t.Context(), target, now); err != nil {
		t.Fatal(err)
	}
	const n = 250 // more than one batch of the backfill (backfillBatch, 200)
	for range n {
		d := &quire.Document{Title: "Source", ContentType: "markdown", Status: "draft", Visibility: "public", OwnerID: u.ID,
			Content: "[t](/documents/" + target.ID + ")"}
		if err := db.CreateDocument(t.Context(), d, now); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	raw, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(t.Context(), `DELETE FROM document_links`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(t.Context(), `INSERT INTO settings (key, value) VALUES ('document_links_backfill', 'pending')`); err != nil {
		t.Fatal(err)
	}
	raw.Close(t.Context())

	db = open(t, url)
	_, total, err := db.Backlinks(t.Context(), quire.BacklinkFilter{Visibility: quire.Visibility{All: true}, TargetID: target.ID, Limit: 1})
	if err != nil || total != n {
		t.Fatalf("after the backfill: %d backlinks (%v), want %d", total, err, n)
	}
	if _, err := db.Setting(t.Context(), "document_links_backfill"); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Fatalf("the mark is still there: %v", err)
	}
}

// TestMigrationCountsThreads: migration 0030 counts the threads that
// documents had before it, also of a document whose comments were written
// before comment_versions existed (0026), so that quire.MaxThreads holds
// for them at once; a document's comments version stays as it was.
func TestMigrationCountsThreads(t *testing.T) {
	t.Parallel()
	url := pgtest.StartFrom(t, "migrated", migrate)
	db := open(t, url)
	ctx := t.Context()
	author, docs := storetest.TwoDocumentsWithThreads(t, db)
	// The database as it was before 0030: the other threads, up to one
	// place short of the limit in each, written without a count, the first
	// document without a comments version, and the migration not applied.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for i, d := range docs {
		if _, err := conn.Exec(ctx, `INSERT INTO comments (id, document_id, author_id, body, created_at, updated_at)
			SELECT $1 || '-' || i, $1, $2, 'old', $3, $3 FROM generate_series(1, $4::int) i`,
			d, author, t0, quire.MaxThreads-1-i); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`ALTER TABLE comment_versions DROP COLUMN threads`,
		`DELETE FROM comment_versions WHERE document_id = '` + docs[0] + `'`,
		`DELETE FROM schema_migrations WHERE name = '0030_comment_threads.sql'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	storetest.WantThreadsFull(t, db, author, docs[0], quire.CommentsVersion{})
	storetest.WantThreadsFull(t, db, author, docs[1], quire.CommentsVersion{All: 2, Threads: 2})
}
