package postgres_test

import (
	"encoding/json"
	"fmt"
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
	db := open(t, pgtest.StartFrom(t, "migrated", migrate))
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
	cctx, st := postgres.Counting(ctx)
	docs, total, err := db.ListDocuments(cctx, quire.DocumentFilter{Visibility: quire.Visibility{UserID: reader.ID},
		Search: "heron", SortBy: "relevance", Desc: true, Limit: 20, ContentPrefix: 100})
	if err != nil {
		t.Fatal(err)
	}
	if after := must(db.Stats(ctx)).Index.ListsByIndex; after != before+1 {
		t.Fatal("not answered by the index")
	}
	if got := len(st.All()); got != 2 {
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

// TestListReadsNamesAndTagsOfThePageAlone: a page of a plain list reads the
// owner's name and the tags of its own rows only, not of every row its
// offset skips (the plan of the list's statement, run again with EXPLAIN
// ANALYZE: the tags' lookup runs once a row of the page).
func TestListReadsNamesAndTagsOfThePageAlone(t *testing.T) {
	t.Parallel()
	db := open(t, pgtest.StartFrom(t, "migrated", migrate))
	ctx := t.Context()
	owner := storetest.NewEditor(t, db, "ada@example.com")
	for i := range 30 {
		newDoc(t, db, owner, fmt.Sprintf("doc %d", i))
	}
	cctx, st := postgres.Counting(ctx)
	docs, total, err := db.ListDocuments(cctx, quire.DocumentFilter{Visibility: quire.Visibility{UserID: owner.ID},
		SortBy: "updated_at", Desc: true, Offset: 20, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if total != 30 || len(docs) != 5 {
		t.Fatalf("total %d, %d documents; want 30 and a page of 5", total, len(docs))
	}
	all := st.All()
	if len(all) != 1 {
		t.Fatalf("%d statements, want 1", len(all))
	}
	var plan []byte
	if err := db.Pool().QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+all[0].SQL, all[0].Args...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	loops := map[string]float64{} // relation of a subplan -> its loops
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if rel, ok := n["Relation Name"].(string); ok && n["Parent Relationship"] == "SubPlan" {
			loops[rel] += n["Actual Loops"].(float64)
		}
		for _, c := range asMaps(n["Plans"]) {
			walk(c)
		}
	}
	var root []map[string]any
	if err := json.Unmarshal(plan, &root); err != nil {
		t.Fatal(err)
	}
	walk(root[0]["Plan"].(map[string]any))
	if loops["document_tags"] != 5 || loops["users"] != 5 {
		t.Errorf("subplans ran %v times, want 5 each (the page's rows); plan:\n%s", loops, plan)
	}
}

func asMaps(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
