package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/storetest"
)

// TestTagListsFollowDocuments checks the lists filtered by tags, which are
// answered from the copies of the documents' columns in document_tags
// (0020), against a model kept in Go, while documents are created,
// changed (status, visibility, department, project, tags), trashed,
// restored and purged: every page and every total, for several readers,
// in both directions, with and without other filters. It also checks a
// document that carries two spellings of one tag, which must be counted
// once.
func TestTagListsFollowDocuments(t *testing.T) {
	t.Parallel()
	db := schemaOpener(t)(t)
	ctx := t.Context()
	eng, err := db.CreateDepartment(ctx, "Engineering")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := db.CreateDepartment(ctx, "Operations")
	if err != nil {
		t.Fatal(err)
	}
	apollo, err := db.CreateProject(ctx, "Apollo")
	if err != nil {
		t.Fatal(err)
	}
	gemini, err := db.CreateProject(ctx, "Gemini")
	if err != nil {
		t.Fatal(err)
	}
	var users []*quire.User
	for i, dep := range []string{eng.ID, eng.ID, ops.ID} {
		u := storetest.NewEditor(t, db, fmt.Sprintf("u%d@example.com", i))
		if err := db.SetUserDepartment(ctx, u.ID, dep); err != nil {
			t.Fatal(err)
		}
		u.DepartmentID = dep
		users = append(users, u)
	}
	if err := db.AddProjectMember(ctx, apollo.ID, users[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := db.AddProjectMember(ctx, gemini.ID, users[2].ID); err != nil {
		t.Fatal(err)
	}
	member := map[string]map[string]bool{users[0].ID: {apollo.ID: true}, users[2].ID: {gemini.ID: true}}

	type doc struct {
		id, status, visibility, owner, dept, project string
		tags                                         []string
		updated                                      time.Time
		trashed                                      bool
	}
	model := map[string]*doc{}
	r := rand.New(rand.NewPCG(18, 20))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	tagNames := []string{"Ops", "release", "Runbook", "api", "Café"}
	randomTags := func() []string {
		var tags []string
		for _, tag := range tagNames {
			if r.IntN(3) == 0 {
				tags = append(tags, tag)
			}
		}
		return tags
	}
	randomize := func(d *quire.Document) {
		d.Status = pick("draft", "review", "published", "archived")
		d.Visibility = pick("private", "department", "project", "public")
		d.DepartmentID = pick("", eng.ID, ops.ID)
		d.ProjectID = pick("", apollo.ID, gemini.ID)
		d.Tags = randomTags()
	}
	now := t0
	tick := func() time.Time { now = now.Add(time.Second); return now }
	remember := func(d *quire.Document) {
		model[d.ID] = &doc{id: d.ID, status: d.Status, visibility: d.Visibility, owner: d.OwnerID,
			dept: d.DepartmentID, project: d.ProjectID, tags: slices.Clone(d.Tags), updated: d.UpdatedAt}
	}
	for i := range 60 {
		d := &quire.Document{Title: fmt.Sprintf("doc %d", i), ContentType: "markdown", OwnerID: users[i%3].ID}
		randomize(d)
		if i == 0 {
			d.Tags = []string{"Ops", "ops", " OPS "} // one tag, three spellings
		}
		if err := db.CreateDocument(ctx, d, tick()); err != nil {
			t.Fatal(err)
		}
		remember(d)
	}
	ids := make([]string, 0, len(model))
	for id := range model {
		ids = append(ids, id)
	}
	sort.Strings(ids)

	lower := func(tags []string) map[string]bool {
		out := map[string]bool{}
		for _, tag := range tags {
			out[strings.ToLower(strings.TrimSpace(tag))] = true
		}
		return out
	}
	check := func(step string) {
		t.Helper()
		readers := []quire.Visibility{{All: true}}
		for _, u := range users {
			readers = append(readers, quire.Visibility{UserID: u.ID, DepartmentID: u.DepartmentID})
		}
		filters := []quire.DocumentFilter{
			{Tags: []string{"ops"}},
			{Tags: []string{"ops"}, Status: "published"},
			{Tags: []string{"release", "runbook"}},
			{Tags: []string{"café", "api"}, Status: "draft"},
			{Tags: []string{"api"}, VisibilityIs: "project", ProjectID: apollo.ID},
			{Tags: []string{"runbook"}, DepartmentID: eng.ID},
			{Tags: []string{"ops"}, SortBy: "title"},
			{Tags: []string{"nothing"}},
		}
		for _, vis := range readers {
			for _, f := range filters {
				var want []*doc
				for _, d := range model {
					has := lower(d.tags)
					ok := !d.trashed && (f.Status == "" || d.status == f.Status) &&
						(f.VisibilityIs == "" || d.visibility == f.VisibilityIs) &&
						(f.DepartmentID == "" || d.dept == f.DepartmentID) &&
						(f.ProjectID == "" || d.project == f.ProjectID)
					for _, tag := range f.Tags {
						ok = ok && has[tag]
					}
					seen := vis.All || d.owner == vis.UserID || d.visibility == "public" ||
						(d.visibility == "department" && d.dept != "" && d.dept == vis.DepartmentID) ||
						(d.visibility == "project" && member[vis.UserID][d.project])
					if ok && seen {
						want = append(want, d)
					}
				}
				if f.SortBy == "" {
					sort.Slice(want, func(i, j int) bool {
						if !want[i].updated.Equal(want[j].updated) {
							return want[i].updated.After(want[j].updated)
						}
						return want[i].id > want[j].id
					})
				}
				for _, desc := range []bool{true, false} {
					f := f
					f.Visibility, f.Desc, f.Limit = vis, desc, 4
					var got []string
					for page := 0; ; page++ {
						f.Offset = page * f.Limit
						docs, total, err := db.ListDocuments(ctx, f)
						if err != nil {
							t.Fatalf("%s: list %+v: %v", step, f, err)
						}
						if total != len(want) {
							t.Fatalf("%s: list %+v: total %d, want %d", step, f, total, len(want))
						}
						for _, d := range docs {
							got = append(got, d.ID)
						}
						if len(docs) < f.Limit {
							break
						}
					}
					var wantIDs []string
					for _, d := range want {
						wantIDs = append(wantIDs, d.id)
					}
					if f.SortBy != "" {
						slices.Sort(got)
						slices.Sort(wantIDs)
					} else if !desc {
						slices.Reverse(wantIDs)
					}
					if !slices.Equal(got, wantIDs) {
						t.Fatalf("%s: list %+v:\n got %q\nwant %q", step, f, got, wantIDs)
					}
				}
			}
		}
	}
	check("created")

	all := quire.Visibility{All: true}
	for round := range 4 {
		for _, id := range ids {
			d := model[id]
			switch r.IntN(6) {
			case 0, 1: // a change of status, visibility, department, project and tags
				out, err := db.UpdateDocument(ctx, all, id, time.Time{}, d.owner, tick(), func(next *quire.Document) (bool, error) {
					randomize(next)
					if r.IntN(2) == 0 {
						next.Tags = d.tags // the tags alone unchanged
					}
					return true, nil
				})
				if err != nil {
					if d.trashed && quire.ErrorCode(err) == quire.ENOTFOUND {
						continue
					}
					t.Fatal(err)
				}
				remember(out)
			case 2: // to the trash and back
				if d.trashed {
					if _, err := db.RestoreDocument(ctx, all, id); err != nil {
						t.Fatal(err)
					}
					d.trashed = false
				} else {
					if err := db.DeleteDocument(ctx, all, id, d.owner, tick()); err != nil {
						t.Fatal(err)
					}
					d.trashed = true
				}
			}
		}
		check(fmt.Sprintf("round %d", round))
	}
	for _, id := range ids[:10] {
		d := model[id]
		if !d.trashed {
			if err := db.DeleteDocument(ctx, all, id, d.owner, tick()); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.PurgeDocument(ctx, all, id); err != nil {
			t.Fatal(err)
		}
		delete(model, id)
	}
	check("purged")
}
