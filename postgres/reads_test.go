package postgres_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"quire"
	"quire/pgtest"
	"quire/postgres"
	"quire/storetest"
)

// TestIndexListTwoStatements: a search the index answers, when it holds
// the last change, costs two statements (the last change with the
// caller's projects, then the page's rows), without a transaction, and
// its page still keeps to the caller's visibility, projects included,
// with the first characters of each content.
func TestIndexListTwoStatements(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.Start(t))
	ctx := t.Context()
	owner := storetest.NewEditor(t, db, "ada@example.com")
	reader := storetest.NewEditor(t, db, "bob@example.com")
	proj := must(db.CreateProject(ctx, "atlas"))
	if err := db.AddProjectMember(ctx, proj.ID, reader.ID); err != nil {
		t.Fatal(err)
	}
	for _, vis := range []string{"public", "private", "project"} {
		d := &quire.Document{ID: uuid.Must(uuid.NewV7()).String(), Title: "heron " + vis, ContentType: "markdown",
			Status: "draft", Visibility: vis, OwnerID: owner.ID, Content: "heron " + strings.Repeat("x", 500)}
		if vis == "project" {
			d.ProjectID = proj.ID
		}
		if err := db.CreateDocument(ctx, d, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SearchIndexReady(ctx); err != nil {
		t.Fatal(err)
	}
	before := must(db.Stats(ctx)).Index.ListsByIndex
	cctx, n := postgres.Counting(ctx)
	docs, total, err := db.ListDocuments(cctx, quire.DocumentFilter{Visibility: quire.Visibility{UserID: reader.ID},
		Search: "heron", SortBy: "relevance", Desc: true, Limit: 20, ContentPrefix: 100})
	if err != nil {
		t.Fatal(err)
	}
	if after := must(db.Stats(ctx)).Index.ListsByIndex; after != before+1 {
		t.Fatal("not answered by the index")
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d statements, want 2", got)
	}
	if total != 2 || len(docs) != 2 {
		t.Fatalf("total %d, %d documents; want the public and the project's", total, len(docs))
	}
	for _, d := range docs {
		if d.Visibility == "private" {
			t.Errorf("the private document %q is listed", d.Title)
		}
		if want := "heron " + strings.Repeat("x", 94); d.Content != want {
			t.Errorf("%q: content %q, want its first 100 characters", d.Title, d.Content)
		}
	}
}
