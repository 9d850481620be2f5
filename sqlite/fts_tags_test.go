package sqlite

import (
	"testing"
	"time"

	"quire"
)

// TestFullTextTagsStayInStep: the index holds each document's tags as the
// view documents_fts_source gives them, through creates, changes of tags
// alone, and purges (whose delete must pass the tags as indexed):
// FTS5's integrity-check compares the index with the view row by row.
func TestFullTextTagsStayInStep(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, owner := openWithOwner(t)
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	all := quire.Visibility{All: true}
	var ids []string
	for _, tags := range [][]string{{"On-Call", "Runbooks"}, {"café"}, {}} {
		d := &quire.Document{Title: "doc", ContentType: "plain", Status: "draft", Visibility: "public",
			OwnerID: owner.ID, Tags: tags}
		if err := db.CreateDocument(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	if _, err := db.UpdateDocument(ctx, all, ids[1], time.Time{}, owner.ID, now, func(d *quire.Document) (bool, error) {
		d.Tags = []string{"tea", "Café"}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteDocument(ctx, all, ids[0], owner.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := db.PurgeDocument(ctx, all, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("full-text index out of step with documents: %v", err)
	}
}
