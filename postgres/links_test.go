package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/pgtest"
	"quire/storetest"
)

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
	const n = 450 // more than one batch of the backfill
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
