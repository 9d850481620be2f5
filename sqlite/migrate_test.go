package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"quire"
	"quire/internal/sqlitetest"
	"quire/sqlite"
	"quire/storetest"
)

// TestMigrationFindsExistingTags: migration 0015 rebuilds the full-text
// index from every document saved before it, so that their tags are found
// at once.
func TestMigrationFindsExistingTags(t *testing.T) {
	t.Parallel()
	path := sqlitetest.Migrated(t)
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u := storetest.NewEditor(t, db, "ada@example.com")
	d := &quire.Document{Title: "Cluster notes", ContentType: "markdown", Status: "draft", Visibility: "private",
		OwnerID: u.ID, Tags: []string{"Kubernetes-Ops"}}
	if err := db.CreateDocument(ctx, d, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The database as it was before 0015: the index of title, summary and
	// content, and the migration not applied.
	execRaw(t, path,
		`DROP TABLE documents_fts`,
		`DROP VIEW documents_fts_source`,
		`CREATE VIRTUAL TABLE documents_fts USING fts5(title, summary, content, content = 'documents',
			content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2')`,
		`INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')`,
		`DELETE FROM schema_migrations WHERE name = '0015_search_tags.sql'`)
	db = openDB(t, path) // applies 0015 again
	_, total, err := db.ListDocuments(ctx, quire.DocumentFilter{Visibility: quire.Visibility{All: true}, Search: "kubernetes ops", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 {
		t.Errorf("after the migration a search for the tag finds %d documents, want 1", total)
	}
}

// TestLinksBackfill: a database whose documents were saved before
// document_links existed (migration 0014 marks it) has their links read at
// the next Open.
func TestLinksBackfill(t *testing.T) {
	t.Parallel()
	path := sqlitetest.Migrated(t)
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	u := storetest.NewEditor(t, db, "a@example.com")
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	target := &quire.Document{Title: "Target", ContentType: "markdown", Status: "draft", Visibility: "public", OwnerID: u.ID}
	if err := db.CreateDocument(t.Context(), target, now); err != nil {
		t.Fatal(err)
	}
	// More documents than one batch of the backfill (backfillBatch, 200),
	// by eight writers at once, which the writer commits together.
	const n = 250
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				d := &quire.Document{Title: "Source", ContentType: "markdown", Status: "draft", Visibility: "public", OwnerID: u.ID,
					Content: "[t](/documents/" + target.ID + ")"}
				if i%2 == 1 {
					d.ContentType = "html"
					d.Content = `<a href="/documents/` + target.ID + `">t</a>`
				}
				if err := db.CreateDocument(t.Context(), d, now); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// As the database was before: no links, and the mark of migration 0014.
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM document_links; INSERT INTO settings (key, value) VALUES ('document_links_backfill', 'pending')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
	path := sqlitetest.Migrated(t)
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	author, docs := storetest.TwoDocumentsWithThreads(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The database as it was before 0030: the other threads, up to one
	// place short of the limit in each, written without a count, the first
	// document without a comments version, and the migration not applied.
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).UnixMicro()
	fill := func(d string, n int) string {
		return fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
			INSERT INTO comments (id, document_id, author_id, body, created_at, updated_at)
			SELECT '%s-' || i, '%s', '%s', 'old', %d, %d FROM n`, n, d, d, author, now, now)
	}
	execRaw(t, path,
		fill(docs[0], quire.MaxThreads-1),
		fill(docs[1], quire.MaxThreads-2),
		`ALTER TABLE comment_versions DROP COLUMN threads`,
		`DELETE FROM comment_versions WHERE document_id = '`+docs[0]+`'`,
		`DELETE FROM schema_migrations WHERE name = '0030_comment_threads.sql'`)
	db = openDB(t, path) // applies 0030 again
	storetest.WantThreadsFull(t, db, author, docs[0], quire.CommentsVersion{})
	storetest.WantThreadsFull(t, db, author, docs[1], quire.CommentsVersion{All: 2, Threads: 2})
}

// execRaw runs queries on the SQLite file at path, outside the store: a
// database as an older quire left it.
func execRaw(t *testing.T, path string, queries ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range queries {
		if _, err := raw.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationKeysLiveClientsByPerson: migration 0034 gives a client's
// row of live_clients whose last change is still kept its person's key
// (quire.LiveClientKey), so that the client's numbers hold across the
// upgrade.
func TestMigrationKeysLiveClientsByPerson(t *testing.T) {
	t.Parallel()
	path := sqlitetest.Migrated(t)
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	author, docs := storetest.TwoDocumentsWithThreads(t, db)
	change := quire.LiveChange{Change: json.RawMessage(`[5,[0,"!"]]`), ClientID: "tab-1", ClientSeq: 3, UserID: author}
	if err := db.AppendLive(ctx, quire.Visibility{All: true}, docs[0], 0, []quire.LiveChange{change}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The row as quire kept it before 0034: keyed by the client id alone.
	execRaw(t, path,
		`UPDATE live_clients SET client_id = 'tab-1'`,
		`DELETE FROM schema_migrations WHERE name = '0034_live_clients_by_person.sql'`)
	db = openDB(t, path) // applies 0034 again
	got, err := db.LiveClient(ctx, docs[0], author, "tab-1")
	if err != nil || got != (quire.LiveClient{Seq: 3, At: 1}) {
		t.Errorf("tab-1 of its author after the migration: %+v, %v", got, err)
	}
}
