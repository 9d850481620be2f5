package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"quire"
)

func init() { register("documents", testDocuments) }

// docWorld is a store with the people of the visibility rules: an owner and
// a colleague in Engineering, an outsider in Sales, a member of the project
// Apollo without department, and a loner with neither.
type docWorld struct {
	s                                         quire.Store
	eng, sales                                *quire.Department
	apollo                                    *quire.Project
	owner, colleague, outsider, member, loner *quire.User
}

func newDocWorld(t *testing.T, open Opener) *docWorld {
	t.Helper()
	ctx := t.Context()
	w := &docWorld{s: open(t)}
	var err error
	if w.eng, err = w.s.EnsureDepartment(ctx, "Engineering"); err != nil {
		t.Fatal(err)
	}
	if w.sales, err = w.s.EnsureDepartment(ctx, "Sales"); err != nil {
		t.Fatal(err)
	}
	w.owner = newUser(t, w.s, "owner@example.com", "editor", w.eng.ID)
	w.colleague = newUser(t, w.s, "colleague@example.com", "viewer", w.eng.ID)
	w.outsider = newUser(t, w.s, "outsider@example.com", "editor", w.sales.ID)
	w.member = newUser(t, w.s, "member@example.com", "viewer", "")
	w.loner = newUser(t, w.s, "loner@example.com", "viewer", "")
	if w.apollo, err = w.s.CreateProject(ctx, "Apollo"); err != nil {
		t.Fatal(err)
	}
	for _, u := range []*quire.User{w.owner, w.member} {
		if err := w.s.AddProjectMember(ctx, w.apollo.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// seeAll is the visibility of roles that see every document.
var seeAll = quire.Visibility{All: true}

// sees is the visibility package docs builds for u.
func sees(u *quire.User) quire.Visibility {
	return quire.Visibility{UserID: u.ID, DepartmentID: u.DepartmentID}
}

// draft is a private markdown draft of owner with the given title.
func draft(owner *quire.User, title string) *quire.Document {
	return &quire.Document{Title: title, ContentType: "markdown", Status: "draft", Visibility: "private",
		OwnerID: owner.ID, Tags: []string{}}
}

// visibilityTitles are the titles of the documents of visibilityDocs, in order.
var visibilityTitles = []string{"apollo", "engineering", "private", "public", "sales"}

// visibilityDocs makes, through mk, one document of each visibility, titled
// and keyed by what they show: the owner's private, department
// ("engineering"), project ("apollo") and public documents, and the
// outsider's document of their department ("sales"). mk receives a draft
// with its title, visibility, department and project set, and its owner, and
// returns it once stored (and, if it likes, changed).
func (w *docWorld) visibilityDocs(t *testing.T, mk func(d *quire.Document, owner *quire.User) *quire.Document) map[string]*quire.Document {
	t.Helper()
	docs := map[string]*quire.Document{}
	for _, c := range []struct {
		title, visibility string
		owner             *quire.User
		dept, project     string
	}{
		{"private", "private", w.owner, w.eng.ID, ""},
		{"engineering", "department", w.owner, w.eng.ID, ""},
		{"apollo", "project", w.owner, w.eng.ID, w.apollo.ID},
		{"public", "public", w.owner, w.eng.ID, ""},
		{"sales", "department", w.outsider, w.sales.ID, ""},
	} {
		d := draft(c.owner, c.title)
		d.Visibility, d.DepartmentID, d.ProjectID = c.visibility, c.dept, c.project
		docs[c.title] = mk(d, c.owner)
	}
	return docs
}

// visibilityCase is who sees which titles of visibilityDocs.
type visibilityCase struct {
	who  string
	vis  quire.Visibility
	want []string
}

// visibilityCases are the people of the world and the documents of
// visibilityDocs each sees.
func (w *docWorld) visibilityCases() []visibilityCase {
	return []visibilityCase{
		{"the owner", sees(w.owner), []string{"apollo", "engineering", "private", "public"}},
		{"a colleague of the department", sees(w.colleague), []string{"engineering", "public"}},
		{"someone of another department", sees(w.outsider), []string{"public", "sales"}},
		{"a project member", sees(w.member), []string{"apollo", "public"}},
		{"someone with neither department nor project", sees(w.loner), []string{"public"}},
		{"a role that sees all", seeAll, visibilityTitles},
	}
}

func (w *docWorld) create(t *testing.T, d *quire.Document, now time.Time) *quire.Document {
	t.Helper()
	if err := w.s.CreateDocument(t.Context(), d, now); err != nil {
		t.Fatalf("create document %q: %v", d.Title, err)
	}
	return d
}

// update applies fn through UpdateDocument, as seeAll and without guard,
// and fails the test on an error.
func (w *docWorld) update(t *testing.T, id string, now time.Time, fn func(d *quire.Document)) *quire.Document {
	t.Helper()
	d, err := w.s.UpdateDocument(t.Context(), seeAll, id, time.Time{}, w.owner.ID, now,
		func(d *quire.Document) (bool, error) { fn(d); return true, nil })
	if err != nil {
		t.Fatalf("update document %s: %v", id, err)
	}
	return d
}

// list returns the page and total of f, failing the test on an error. A
// zero f.Limit is taken as 100, more than any case here holds.
func (w *docWorld) list(t *testing.T, f quire.DocumentFilter) ([]quire.Document, int) {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = 100
	}
	docs, total, err := w.s.ListDocuments(t.Context(), f)
	if err != nil {
		t.Fatalf("ListDocuments(%+v): %v", f, err)
	}
	return docs, total
}

// docTitles returns the titles of docs in order.
func docTitles(docs []quire.Document) []string {
	titles := make([]string, len(docs))
	for i, d := range docs {
		titles[i] = d.Title
	}
	return titles
}

// searchTitles returns the titles found by search (best first) and the total.
func (w *docWorld) searchTitles(t *testing.T, vis quire.Visibility, search string) ([]string, int) {
	t.Helper()
	docs, total := w.list(t, quire.DocumentFilter{Visibility: vis, Search: search, SortBy: "relevance", Desc: true, Limit: 100})
	return docTitles(docs), total
}

// wantFields fails the test unless err is a VALIDATION_ERROR naming exactly
// the fields of want with those messages.
func wantFields(t *testing.T, err error, want map[string]string) {
	t.Helper()
	var e *quire.Error
	if !errors.As(err, &e) || e.Code != quire.EVALIDATION {
		t.Fatalf("error = %v, want %s", err, quire.EVALIDATION)
	}
	if diff := cmp.Diff(want, e.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func testDocuments(t *testing.T, open Opener) {
	t.Run("a created document reads back whole, at microsecond precision", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		folder := &quire.Folder{Name: "Guides"}
		if err := w.s.CreateFolder(ctx, folder, baseTime); err != nil {
			t.Fatal(err)
		}
		now := baseTime.Add(1234567 * time.Nanosecond)
		d := w.create(t, &quire.Document{Title: "Onboarding", Content: "# Welcome\n\nRead this first.",
			ContentType: "markdown", Summary: "How to start", Status: "review", Visibility: "project",
			FolderID: folder.ID, Tags: []string{"HR", "start here"}, DepartmentID: w.eng.ID,
			ProjectID: w.apollo.ID, OwnerID: w.owner.ID}, now)
		at := now.Truncate(time.Microsecond)
		want := quire.Document{ID: d.ID, Title: "Onboarding", Content: "# Welcome\n\nRead this first.",
			ContentType: "markdown", Summary: "How to start", Status: "review", Visibility: "project",
			FolderID: folder.ID, Tags: []string{"HR", "start here"}, DepartmentID: w.eng.ID,
			ProjectID: w.apollo.ID, OwnerID: w.owner.ID, OwnerName: w.owner.Name, Version: 1,
			CreatedAt: at, UpdatedAt: at}
		if d.ID == "" {
			t.Fatal("CreateDocument left ID empty")
		}
		if diff := cmp.Diff(want, *d); diff != "" {
			t.Errorf("created document (-want +got):\n%s", diff)
		}
		got := must(w.s.Document(ctx, sees(w.owner), d.ID))(t)
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Errorf("Document (-want +got):\n%s", diff)
		}
		v := must(w.s.Version(ctx, sees(w.owner), d.ID, 1))(t)
		wantV := quire.Version{DocumentID: d.ID, Number: 1, Title: "Onboarding", Content: "# Welcome\n\nRead this first.",
			ContentType: "markdown", Summary: "How to start", Status: "review", Visibility: "project",
			Tags: []string{"HR", "start here"}, FolderID: folder.ID, DepartmentID: w.eng.ID, ProjectID: w.apollo.ID,
			CreatedAt: at, CreatedByID: w.owner.ID, CreatedByName: w.owner.Name}
		if diff := cmp.Diff(wantV, *v); diff != "" {
			t.Errorf("version 1 (-want +got):\n%s", diff)
		}
	})

	t.Run("an unknown id is not found", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		_, err := w.s.Document(ctx, seeAll, "0193b3a0-0000-7000-8000-000000000000")
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.Versions(ctx, seeAll, "no such id")
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, w.s.DeleteDocument(ctx, seeAll, "no such id", w.owner.ID, baseTime), quire.ENOTFOUND)
		_, err = w.s.UpdateDocument(ctx, seeAll, "no such id", time.Time{}, w.owner.ID, baseTime,
			func(d *quire.Document) (bool, error) { return true, nil })
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("an unknown folder, department or project is a validation error naming it", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		for _, tc := range []struct {
			field string
			set   func(d *quire.Document)
		}{
			{"folder_id", func(d *quire.Document) { d.FolderID = "0193b3a0-0000-7000-8000-000000000001" }},
			{"department_id", func(d *quire.Document) { d.DepartmentID = "0193b3a0-0000-7000-8000-000000000002" }},
			{"project_id", func(d *quire.Document) { d.ProjectID = "0193b3a0-0000-7000-8000-000000000003" }},
		} {
			d := draft(w.owner, "Bad "+tc.field)
			tc.set(d)
			wantFields(t, w.s.CreateDocument(ctx, d, baseTime), map[string]string{tc.field: "does not exist"})

			ok := w.create(t, draft(w.owner, "Good "+tc.field), baseTime)
			_, err := w.s.UpdateDocument(ctx, seeAll, ok.ID, time.Time{}, w.owner.ID, baseTime.Add(time.Second),
				func(d *quire.Document) (bool, error) { tc.set(d); return true, nil })
			wantFields(t, err, map[string]string{tc.field: "does not exist"})
			got := must(w.s.Document(ctx, seeAll, ok.ID))(t)
			if diff := cmp.Diff(ok, got); diff != "" {
				t.Errorf("refused update changed the document (-want +got):\n%s", diff)
			}
		}
		if _, total := w.list(t, quire.DocumentFilter{Visibility: seeAll}); total != 3 {
			t.Errorf("%d documents stored, want only the 3 good ones", total)
		}
	})

	t.Run("visibility decides what is listed, counted, searched, read, versioned, updated and deleted", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		docs := w.visibilityDocs(t, func(d *quire.Document, _ *quire.User) *quire.Document {
			d.Content = "shared words in every document"
			return w.create(t, d, baseTime)
		})
		everything := visibilityTitles
		cases := append(w.visibilityCases(), visibilityCase{"a visibility without user", quire.Visibility{}, []string{"public"}})
		for _, tc := range cases {
			t.Run(tc.who+" sees "+strings.Join(tc.want, ", "), func(t *testing.T) {
				page, total := w.list(t, quire.DocumentFilter{Visibility: tc.vis, SortBy: "title"})
				if diff := cmp.Diff(tc.want, docTitles(page)); diff != "" || total != len(tc.want) {
					t.Errorf("list: total %d, titles (-want +got):\n%s", total, diff)
				}
				found, total := w.list(t, quire.DocumentFilter{Visibility: tc.vis, Search: "shared words", SortBy: "title"})
				if diff := cmp.Diff(tc.want, docTitles(found)); diff != "" || total != len(tc.want) {
					t.Errorf("search: total %d, titles (-want +got):\n%s", total, diff)
				}
				for _, title := range everything {
					d := docs[title]
					visible := slices.Contains(tc.want, title)
					_, err := w.s.Document(ctx, tc.vis, d.ID)
					if checkVisible(t, "Document", title, visible, err) {
						continue
					}
					_, err = w.s.Versions(ctx, tc.vis, d.ID)
					checkVisible(t, "Versions", title, visible, err)
					_, err = w.s.Version(ctx, tc.vis, d.ID, 1)
					checkVisible(t, "Version", title, visible, err)
					if visible {
						continue
					}
					called := false
					_, err = w.s.UpdateDocument(ctx, tc.vis, d.ID, time.Time{}, w.owner.ID, baseTime.Add(time.Hour),
						func(d *quire.Document) (bool, error) { called = true; d.Title = "hijacked"; return true, nil })
					checkVisible(t, "UpdateDocument", title, false, err)
					if called {
						t.Errorf("UpdateDocument called apply on invisible %q", title)
					}
					checkVisible(t, "DeleteDocument", title, false, w.s.DeleteDocument(ctx, tc.vis, d.ID, w.owner.ID, baseTime.Add(time.Hour)))
				}
			})
		}
		// Nothing refused above may have changed or removed anything.
		for title, d := range docs {
			got, err := w.s.Document(ctx, seeAll, d.ID)
			if err != nil {
				t.Fatalf("%s after refusals: %v", title, err)
			}
			if diff := cmp.Diff(d, got); diff != "" {
				t.Errorf("%s changed by a refused call (-want +got):\n%s", title, diff)
			}
		}
	})

	t.Run("the conflict guard", func(t *testing.T) {
		t.Run("a stale base is a conflict carrying the current document, and nothing is written", func(t *testing.T) {
			w := newDocWorld(t, open)
			ctx := t.Context()
			d := w.create(t, draft(w.owner, "Plan"), baseTime)
			base := d.UpdatedAt
			cur := w.update(t, d.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Content = "newer" })
			called := false
			_, err := w.s.UpdateDocument(ctx, sees(w.owner), d.ID, base, w.owner.ID, baseTime.Add(2*time.Second),
				func(d *quire.Document) (bool, error) { called = true; d.Content = "older"; return true, nil })
			var e *quire.Error
			if !errors.As(err, &e) || e.Code != quire.EDOCUMENTCONFLICT {
				t.Fatalf("error = %v, want %s", err, quire.EDOCUMENTCONFLICT)
			}
			if e.Message != "The document was changed by someone else" {
				t.Errorf("message = %q", e.Message)
			}
			if !e.UpdatedAt.Equal(cur.UpdatedAt) {
				t.Errorf("conflict UpdatedAt = %v, want %v", e.UpdatedAt, cur.UpdatedAt)
			}
			if diff := cmp.Diff(cur, e.Document); diff != "" {
				t.Errorf("conflict Document (-want +got):\n%s", diff)
			}
			if called {
				t.Error("apply was called despite the conflict")
			}
			got := must(w.s.Document(ctx, seeAll, d.ID))(t)
			if diff := cmp.Diff(cur, got); diff != "" {
				t.Errorf("document after conflict (-want +got):\n%s", diff)
			}
		})

		t.Run("the current base is accepted, also with nanoseconds below the microsecond", func(t *testing.T) {
			w := newDocWorld(t, open)
			d := w.create(t, draft(w.owner, "Plan"), baseTime.Add(5*time.Microsecond))
			for i, skew := range []time.Duration{0, 999 * time.Nanosecond} {
				guard := d.UpdatedAt.Add(skew).In(time.FixedZone("X", 3600))
				got, err := w.s.UpdateDocument(t.Context(), sees(w.owner), d.ID, guard, w.owner.ID, baseTime.Add(time.Duration(i+1)*time.Second),
					func(d *quire.Document) (bool, error) { d.Content = fmt.Sprint("edit ", i); return true, nil })
				if err != nil {
					t.Fatalf("update %d with guard %v: %v", i, guard, err)
				}
				d = got
			}
			if d.Version != 3 {
				t.Errorf("version = %d, want 3", d.Version)
			}
		})

		t.Run("a base one microsecond off either way is a conflict", func(t *testing.T) {
			w := newDocWorld(t, open)
			d := w.create(t, draft(w.owner, "Plan"), baseTime)
			for _, guard := range []time.Time{d.UpdatedAt.Add(-time.Microsecond), d.UpdatedAt.Add(time.Microsecond)} {
				_, err := w.s.UpdateDocument(t.Context(), sees(w.owner), d.ID, guard, w.owner.ID, baseTime.Add(time.Second),
					func(d *quire.Document) (bool, error) { d.Content = "x"; return true, nil })
				wantCode(t, err, quire.EDOCUMENTCONFLICT)
			}
		})

		t.Run("of concurrent updates with the same base exactly one succeeds", func(t *testing.T) {
			w := newDocWorld(t, open)
			d := w.create(t, draft(w.owner, "Race"), baseTime)
			const n = 8
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					_, errs[i] = w.s.UpdateDocument(t.Context(), sees(w.owner), d.ID, d.UpdatedAt, w.owner.ID,
						baseTime.Add(time.Second), func(d *quire.Document) (bool, error) {
							d.Content = fmt.Sprint("writer ", i)
							return true, nil
						})
				})
			}
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch {
				case err == nil:
					won++
				case quire.ErrorCode(err) != quire.EDOCUMENTCONFLICT:
					t.Errorf("writer %d: %v", i, err)
				}
			}
			if won != 1 {
				t.Errorf("%d updates succeeded, want exactly 1", won)
			}
			vs := must(w.s.Versions(t.Context(), seeAll, d.ID))(t)
			if len(vs) != 2 {
				t.Errorf("%d versions, want 2", len(vs))
			}
		})
	})

	t.Run("updated_at strictly increases even when saves share or go back in time", func(t *testing.T) {
		w := newDocWorld(t, open)
		d := w.create(t, draft(w.owner, "Clock"), baseTime)
		first := w.update(t, d.ID, baseTime, func(d *quire.Document) { d.Content = "one" })
		second := w.update(t, d.ID, baseTime, func(d *quire.Document) { d.Content = "two" })
		third := w.update(t, d.ID, baseTime.Add(-time.Hour), func(d *quire.Document) { d.Content = "three" })
		later := w.update(t, d.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Content = "four" })
		got := []time.Time{d.UpdatedAt, first.UpdatedAt, second.UpdatedAt, third.UpdatedAt, later.UpdatedAt}
		want := []time.Time{baseTime, baseTime.Add(time.Microsecond), baseTime.Add(2 * time.Microsecond),
			baseTime.Add(3 * time.Microsecond), baseTime.Add(time.Second)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("updated_at of five saves (-want +got):\n%s", diff)
		}
		if !later.CreatedAt.Equal(baseTime) {
			t.Errorf("created_at moved to %v", later.CreatedAt)
		}
		// The guard compares at the stored precision: the value one
		// microsecond after the previous save is a valid base.
		if _, err := w.s.UpdateDocument(t.Context(), seeAll, d.ID, later.UpdatedAt, w.owner.ID, baseTime.Add(time.Second),
			func(d *quire.Document) (bool, error) { d.Content = "five"; return true, nil }); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("every save records a numbered version with the state it saved", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		folder := &quire.Folder{Name: "Specs"}
		if err := w.s.CreateFolder(ctx, folder, baseTime); err != nil {
			t.Fatal(err)
		}
		d := w.create(t, draft(w.owner, "Spec v1"), baseTime)
		w.update(t, d.ID, baseTime.Add(time.Second), func(d *quire.Document) {
			d.Title, d.Content, d.Tags, d.FolderID = "Spec v2", "body two", []string{"API", "draft"}, folder.ID
		})
		other := w.outsider
		cur, err := w.s.UpdateDocument(ctx, seeAll, d.ID, time.Time{}, other.ID, baseTime.Add(2*time.Second),
			func(d *quire.Document) (bool, error) {
				d.Title, d.Status, d.Summary, d.Visibility, d.ContentType = "Spec v3", "published", "final", "public", "html"
				d.Tags = []string{"draft"}
				return true, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if cur.Version != 3 {
			t.Errorf("current version = %d, want 3", cur.Version)
		}
		vs := must(w.s.Versions(ctx, sees(w.owner), d.ID))(t)
		at := func(s int) time.Time { return baseTime.Add(time.Duration(s) * time.Second) }
		want := []quire.Version{
			{DocumentID: d.ID, Number: 3, Title: "Spec v3", ContentType: "html", Summary: "final", Status: "published",
				Visibility: "public", Tags: []string{"draft"}, FolderID: folder.ID, CreatedAt: at(2),
				CreatedByID: other.ID, CreatedByName: other.Name},
			{DocumentID: d.ID, Number: 2, Title: "Spec v2", ContentType: "markdown", Status: "draft",
				Visibility: "private", Tags: []string{"API", "draft"}, FolderID: folder.ID, CreatedAt: at(1),
				CreatedByID: w.owner.ID, CreatedByName: w.owner.Name},
			{DocumentID: d.ID, Number: 1, Title: "Spec v1", ContentType: "markdown", Status: "draft",
				Visibility: "private", Tags: []string{}, CreatedAt: at(0),
				CreatedByID: w.owner.ID, CreatedByName: w.owner.Name},
		}
		if diff := cmp.Diff(want, vs); diff != "" {
			t.Errorf("Versions, newest first and without content (-want +got):\n%s", diff)
		}
		v2 := must(w.s.Version(ctx, sees(w.owner), d.ID, 2))(t)
		want2 := want[1]
		want2.Content = "body two"
		if diff := cmp.Diff(want2, *v2); diff != "" {
			t.Errorf("Version 2 (-want +got):\n%s", diff)
		}
		for _, n := range []int{0, 4, -1} {
			_, err := w.s.Version(ctx, seeAll, d.ID, n)
			wantCode(t, err, quire.ENOTFOUND)
		}
		// The current document is the newest version.
		got := must(w.s.Document(ctx, seeAll, d.ID))(t)
		if diff := cmp.Diff(cur, got); diff != "" {
			t.Errorf("Document after three saves (-want +got):\n%s", diff)
		}
	})

	t.Run("a save that changes nothing records no version and keeps updated_at", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		d := w.create(t, draft(w.owner, "Still"), baseTime)
		got, err := w.s.UpdateDocument(ctx, seeAll, d.ID, d.UpdatedAt, w.owner.ID, baseTime.Add(time.Minute),
			func(d *quire.Document) (bool, error) { return false, nil })
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("unchanged save returned (-want +got):\n%s", diff)
		}
		vs := must(w.s.Versions(ctx, seeAll, d.ID))(t)
		if len(vs) != 1 {
			t.Errorf("%d versions after an unchanged save, want 1", len(vs))
		}
	})

	t.Run("an error from apply is returned as is and nothing is written", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		d := w.create(t, draft(w.owner, "Keep"), baseTime)
		refusal := quire.Invalid(map[string]string{"title": "is required"})
		_, err := w.s.UpdateDocument(ctx, seeAll, d.ID, time.Time{}, w.owner.ID, baseTime.Add(time.Minute),
			func(d *quire.Document) (bool, error) {
				d.Title = "Changed"
				d.Tags = []string{"x"}
				return true, refusal
			})
		if err != refusal {
			t.Fatalf("error = %v, want the error of apply", err)
		}
		got := must(w.s.Document(ctx, seeAll, d.ID))(t)
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("document after a refused apply (-want +got):\n%s", diff)
		}
	})

	t.Run("a deleted document leaves every read, list, count, search and filter", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		gone := w.create(t, draft(w.owner, "Obsolete zeppelin"), baseTime)
		w.update(t, gone.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Tags = []string{"old"} })
		kept := w.create(t, draft(w.owner, "Kept zeppelin"), baseTime)
		if err := w.s.DeleteDocument(ctx, sees(w.owner), gone.ID, w.owner.ID, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.Document(ctx, seeAll, gone.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.Versions(ctx, seeAll, gone.ID)
		wantCode(t, err, quire.ENOTFOUND)
		for _, n := range []int{1, 2} {
			_, err = w.s.Version(ctx, seeAll, gone.ID, n)
			wantCode(t, err, quire.ENOTFOUND)
		}
		wantCode(t, w.s.DeleteDocument(ctx, seeAll, gone.ID, w.owner.ID, baseTime.Add(time.Hour)), quire.ENOTFOUND)
		if titles, total := w.searchTitles(t, seeAll, "zeppelin"); !slices.Equal(titles, []string{kept.Title}) || total != 1 {
			t.Errorf("search after delete = %q (total %d), want only %q", titles, total, kept.Title)
		}
		if docs, total := w.list(t, quire.DocumentFilter{Visibility: seeAll, Tags: []string{"old"}}); len(docs) != 0 || total != 0 {
			t.Errorf("tag filter after delete found %d (total %d)", len(docs), total)
		}
	})

	t.Run("pages in every order hold every document exactly once, in order", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		titles := []string{"alpha", "Bravo", "charlie", "alpha", "Delta", "echo", "bravo", "Foxtrot", "golf", "Hotel", "india", "ALPHA"}
		statuses := []string{"draft", "review", "published", "archived"}
		var all []quire.Document
		for i, title := range titles {
			d := draft(w.owner, title)
			d.Status = statuses[i%len(statuses)]
			// Three documents share each creation time, so ties are broken by id.
			d = w.create(t, d, baseTime.Add(time.Duration(i/3)*time.Second))
			if i%2 == 0 {
				// Six documents saved in the same instant: ties by id again.
				d = w.update(t, d.ID, baseTime.Add(time.Minute), func(d *quire.Document) { d.Content = "edited" })
			}
			all = append(all, *d)
		}
		statusRank := map[string]int{"draft": 0, "review": 1, "published": 2, "archived": 3}
		less := map[string]func(a, b quire.Document) int{
			"updated_at": func(a, b quire.Document) int { return a.UpdatedAt.Compare(b.UpdatedAt) },
			"created_at": func(a, b quire.Document) int { return a.CreatedAt.Compare(b.CreatedAt) },
			"title": func(a, b quire.Document) int {
				return strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
			},
			"status": func(a, b quire.Document) int { return statusRank[a.Status] - statusRank[b.Status] },
		}
		for _, sortBy := range []string{"updated_at", "created_at", "title", "status", "relevance", ""} {
			for _, desc := range []bool{true, false} {
				key := sortBy
				if key == "" || key == "relevance" {
					key = "updated_at" // relevance without search is the default order
				}
				want := slices.Clone(all)
				slices.SortFunc(want, func(a, b quire.Document) int {
					c := less[key](a, b)
					if c == 0 {
						c = strings.Compare(a.ID, b.ID)
					}
					if desc {
						c = -c
					}
					return c
				})
				var got []quire.Document
				for page := 0; page < 4; page++ {
					docs, total := w.list(t, quire.DocumentFilter{Visibility: sees(w.owner), SortBy: sortBy, Desc: desc,
						Offset: page * 5, Limit: 5})
					if total != len(all) {
						t.Errorf("sortBy %q desc %v page %d: total %d, want %d", sortBy, desc, page, total, len(all))
					}
					got = append(got, docs...)
				}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(quire.Document{}, "Content")); diff != "" {
					t.Errorf("sortBy %q desc %v: pages (-want +got):\n%s", sortBy, desc, diff)
				}
			}
		}
		_, _, err := w.s.ListDocuments(ctx, quire.DocumentFilter{Visibility: seeAll, SortBy: "owner"})
		wantCode(t, err, quire.EVALIDATION)
	})

	t.Run("lists carry content only when asked", func(t *testing.T) {
		w := newDocWorld(t, open)
		d := draft(w.owner, "Body")
		d.Content = "the body"
		w.create(t, d, baseTime)
		without, _ := w.list(t, quire.DocumentFilter{Visibility: seeAll})
		with, _ := w.list(t, quire.DocumentFilter{Visibility: seeAll, IncludeContent: true})
		if len(without) != 1 || len(with) != 1 {
			t.Fatalf("pages of %d and %d documents, want 1 each", len(without), len(with))
		}
		if without[0].Content != "" || with[0].Content != "the body" {
			t.Errorf("content = %q without and %q with includeContent", without[0].Content, with[0].Content)
		}
		if diff := cmp.Diff(with[0], without[0], cmpopts.IgnoreFields(quire.Document{}, "Content")); diff != "" {
			t.Errorf("the two pages differ beyond content (-with +without):\n%s", diff)
		}
	})

	t.Run("filters narrow the page and the total", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		folder := &quire.Folder{Name: "Ops"}
		if err := w.s.CreateFolder(ctx, folder, baseTime); err != nil {
			t.Fatal(err)
		}
		mk := func(title, status, visibility, dept, project, folderID string) {
			d := draft(w.owner, title)
			d.Status, d.Visibility, d.DepartmentID, d.ProjectID, d.FolderID = status, visibility, dept, project, folderID
			w.create(t, d, baseTime)
		}
		mk("a", "draft", "private", w.eng.ID, "", "")
		mk("b", "published", "public", w.eng.ID, "", folder.ID)
		mk("c", "published", "project", w.eng.ID, w.apollo.ID, folder.ID)
		mk("d", "archived", "department", w.sales.ID, "", "")
		for _, tc := range []struct {
			name string
			f    quire.DocumentFilter
			want []string
		}{
			{"status", quire.DocumentFilter{Status: "published"}, []string{"b", "c"}},
			{"visibility", quire.DocumentFilter{VisibilityIs: "department"}, []string{"d"}},
			{"department", quire.DocumentFilter{DepartmentID: w.eng.ID}, []string{"a", "b", "c"}},
			{"folder", quire.DocumentFilter{FolderID: folder.ID}, []string{"b", "c"}},
			{"project", quire.DocumentFilter{ProjectID: w.apollo.ID}, []string{"c"}},
			{"status and folder", quire.DocumentFilter{Status: "published", FolderID: folder.ID, VisibilityIs: "public"}, []string{"b"}},
			{"nothing matching", quire.DocumentFilter{Status: "review"}, []string{}},
			{"search and folder", quire.DocumentFilter{Search: "c", FolderID: folder.ID}, []string{"c"}},
			{"search and a folder that does not hold the match", quire.DocumentFilter{Search: "d", FolderID: folder.ID}, []string{}},
			{"search, status and visibility", quire.DocumentFilter{Search: "b", Status: "published", VisibilityIs: "public"}, []string{"b"}},
		} {
			f := tc.f
			f.Visibility, f.SortBy = seeAll, "title"
			docs, total := w.list(t, f)
			if diff := cmp.Diff(tc.want, docTitles(docs)); diff != "" || total != len(tc.want) {
				t.Errorf("filter by %s: total %d, titles (-want +got):\n%s", tc.name, total, diff)
			}
		}
		// The department filter still applies visibility.
		docs, total := w.list(t, quire.DocumentFilter{Visibility: sees(w.colleague), DepartmentID: w.eng.ID, SortBy: "title"})
		if diff := cmp.Diff([]string{"b"}, docTitles(docs)); diff != "" || total != 1 {
			t.Errorf("colleague filtering by Engineering: total %d, titles (-want +got):\n%s", total, diff)
		}
	})

	t.Run("a page past the end is empty and still counts the total", func(t *testing.T) {
		w := newDocWorld(t, open)
		for i := range 3 {
			w.create(t, draft(w.owner, fmt.Sprint("doc ", i)), baseTime)
		}
		for _, search := range []string{"", "doc"} {
			docs, total := w.list(t, quire.DocumentFilter{Visibility: seeAll, Search: search, Offset: 20, Limit: 20})
			if len(docs) != 0 || total != 3 {
				t.Errorf("page past the end (search %q): %d documents, total %d; want an empty page and total 3",
					search, len(docs), total)
			}
		}
	})

	t.Run("tags keep their spelling and order, and a filter needs all of them", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		mk := func(title string, tags ...string) *quire.Document {
			d := draft(w.owner, title)
			d.Tags = tags
			return w.create(t, d, baseTime)
		}
		goSQL := mk("go and sql", "Go", "SQL")
		mk("go", "go")
		mk("sql and postgres", "SQL", "PostgreSQL")
		mk("none")
		got := must(w.s.Document(ctx, seeAll, goSQL.ID))(t)
		if diff := cmp.Diff([]string{"Go", "SQL"}, got.Tags); diff != "" {
			t.Errorf("tags read back (-want +got):\n%s", diff)
		}
		for _, tc := range []struct {
			tags []string
			want []string
		}{
			{[]string{"go"}, []string{"go", "go and sql"}},
			{[]string{"sql"}, []string{"go and sql", "sql and postgres"}},
			{[]string{"go", "sql"}, []string{"go and sql"}},
			{[]string{"sql", "go", "sql"}, []string{"go and sql"}},
			{[]string{"go", "postgresql"}, []string{}},
			{[]string{"postgres"}, []string{}},
		} {
			docs, total := w.list(t, quire.DocumentFilter{Visibility: seeAll, Tags: tc.tags, SortBy: "title"})
			if diff := cmp.Diff(tc.want, docTitles(docs)); diff != "" || total != len(tc.want) {
				t.Errorf("tags %q: total %d, titles (-want +got):\n%s", tc.tags, total, diff)
			}
		}
		w.update(t, goSQL.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Tags = []string{"Rust"} })
		docs, _ := w.list(t, quire.DocumentFilter{Visibility: seeAll, Tags: []string{"go"}, SortBy: "title"})
		if diff := cmp.Diff([]string{"go"}, docTitles(docs)); diff != "" {
			t.Errorf("tag go after retagging (-want +got):\n%s", diff)
		}
		docs, _ = w.list(t, quire.DocumentFilter{Visibility: seeAll, Tags: []string{"rust"}})
		if diff := cmp.Diff([]string{"go and sql"}, docTitles(docs)); diff != "" {
			t.Errorf("tag rust after retagging (-want +got):\n%s", diff)
		}
	})

	t.Run("search", func(t *testing.T) {
		w := newDocWorld(t, open)
		mk := func(title, summary, content string) {
			d := draft(w.owner, title)
			d.Summary, d.Content = summary, content
			w.create(t, d, baseTime)
		}
		mk("Deployment checklist", "", "Steps before a release.")
		mk("Café notes", "", "Where the team meets.")
		mk("Alpha beta", "", "")
		mk("Alpha gamma", "", "")
		mk("Quarterly report", "numbers for the board", "")
		mk("Runbook", "", "When the pager rings, check the dashboards first.")
		mk("Tricky text", "", `C'est "quoted" text with 100% coverage_rate and a\backslash.`)
		w.wantSearches(t, []searchCase{
			{"finds a whole word", "checklist", []string{"Deployment checklist"}},
			{"finds a word by its start", "deploy", []string{"Deployment checklist"}},
			{"does not find the middle of a word", "ploy", nil},
			{"ignores case", "DEPLOYMENT", []string{"Deployment checklist"}},
			{"ignores accents in the text", "cafe", []string{"Café notes"}},
			{"ignores accents and case in a prefix", "CAF", []string{"Café notes"}},
			{"ignores accents in the search", "rélease", []string{"Deployment checklist"}},
			{"needs every word", "alpha beta", []string{"Alpha beta"}},
			{"needs every word, whatever the order", "gamma ALPHA", []string{"Alpha gamma"}},
			{"finds words of the summary", "board", []string{"Quarterly report"}},
			{"finds words of the content", "dashboards pager", []string{"Runbook"}},
			{"finds a word that punctuation surrounds", "quoted", []string{"Tricky text"}},
			{"splits on punctuation in the search", "coverage_rate", []string{"Tricky text"}},
			{"takes OR as the word or, not an operator", "alpha OR beta", nil},
			{"takes a minus as a separator, not an exclusion", "-gamma alpha", []string{"Alpha gamma"}},
			{"takes a column filter as two words", "title:alpha", nil},
			{"takes quotes as separators, not a phrase", `"beta alpha"`, []string{"Alpha beta"}},
			{"takes a star as a separator", "alp*", []string{"Alpha beta", "Alpha gamma"}},
			{"finds nothing for a search without words", "!!!", nil},
		})

		t.Run("hostile strings are searched literally without error", func(t *testing.T) {
			hostile := []string{`"`, `""`, `"*`, `*`, `'`, `\`, `%`, `_`, `%_%`, `NEAR(alpha beta)`, `NEAR(`, `alpha AND`,
				`AND`, `NOT alpha`, `(`, `)`, `{title}: alpha`, `^alpha`, `alpha"`, `"alpha`, `a"b"c`, `'; DROP TABLE documents; --`,
				"\x00", "alpha\x00beta", "\xff\xfe\xfd", "e\u0301", "\u0301", "🙂 alpha", `\"alpha\"`, `title:"x" OR 1=1`,
				strings.Repeat("a", 10000), strings.Repeat("alpha ", 1000), manyWords(200), strings.Repeat(`"(`, 500), strings.Repeat("\u0301", 100),
			}
			for _, s := range hostile {
				if _, _, err := w.s.ListDocuments(t.Context(), quire.DocumentFilter{Visibility: seeAll, Search: s,
					SortBy: "relevance", Desc: true, Limit: 20}); err != nil {
					t.Errorf("search %.40q: %v", s, err)
				}
			}
			if titles, _ := w.searchTitles(t, seeAll, `NEAR(alpha beta)`); len(titles) != 0 {
				t.Errorf("NEAR(alpha beta) found %q; near is a word no document has", titles)
			}
			titles, _ := w.searchTitles(t, seeAll, `"alpha`)
			sort.Strings(titles)
			if diff := cmp.Diff([]string{"Alpha beta", "Alpha gamma"}, titles); diff != "" {
				t.Errorf(`search "alpha with a stray quote (-want +got):`+"\n%s", diff)
			}
		})
	})

	t.Run("search follows updates", func(t *testing.T) {
		w := newDocWorld(t, open)
		d := draft(w.owner, "Zebra handbook")
		d.Content, d.Summary = "stripes", "savanna"
		d = w.create(t, d, baseTime)
		w.update(t, d.ID, baseTime.Add(time.Second), func(d *quire.Document) {
			d.Title, d.Content, d.Summary = "Okapi handbook", "forest", "congo"
		})
		for search, want := range map[string]int{"zebra": 0, "stripes": 0, "savanna": 0, "okapi": 1, "forest": 1, "congo": 1, "handbook": 1} {
			if _, total := w.searchTitles(t, seeAll, search); total != want {
				t.Errorf("search %q after the update: total %d, want %d", search, total, want)
			}
		}
		// A save that leaves the text alone keeps it searchable.
		w.update(t, d.ID, baseTime.Add(2*time.Second), func(d *quire.Document) { d.Status = "published" })
		if _, total := w.searchTitles(t, seeAll, "okapi forest congo"); total != 1 {
			t.Errorf("search after a status change: total %d, want 1", total)
		}
	})

	t.Run("relevance puts title matches first, and other orders apply when asked", func(t *testing.T) {
		w := newDocWorld(t, open)
		body := strings.Repeat("Notes about clusters, nodes and the network. ", 8)
		mk := func(title, summary, content string, at time.Time) {
			d := draft(w.owner, title)
			d.Summary, d.Content = summary, content
			w.create(t, d, at)
		}
		// One hit in the title must outweigh three in the body.
		mk("Cluster notes", "", body+" Kubernetes, kubernetes and kubernetes again.", baseTime.Add(3*time.Second))
		mk("Kubernetes guide", "", body, baseTime)
		mk("Operations", "All about kubernetes", body, baseTime.Add(2*time.Second))
		mk("Unrelated", "", body, baseTime.Add(time.Second))
		best, total := w.searchTitles(t, seeAll, "kubernetes")
		if total != 3 || len(best) != 3 || best[0] != "Kubernetes guide" || slices.Index(best, "Cluster notes") < 1 {
			t.Errorf("relevance, best first = %q (total %d), want Kubernetes guide first and before Cluster notes", best, total)
		}
		docs, _ := w.list(t, quire.DocumentFilter{Visibility: seeAll, Search: "kubernetes", SortBy: "relevance", Limit: 10})
		worst := docTitles(docs)
		slices.Reverse(worst)
		if diff := cmp.Diff(best, worst); diff != "" {
			t.Errorf("relevance ascending is not descending reversed (-descending +ascending reversed):\n%s", diff)
		}
		docs, _ = w.list(t, quire.DocumentFilter{Visibility: seeAll, Search: "kubernetes", SortBy: "updated_at", Desc: true, Limit: 10})
		if diff := cmp.Diff([]string{"Cluster notes", "Operations", "Kubernetes guide"}, docTitles(docs)); diff != "" {
			t.Errorf("search ordered by updated_at (-want +got):\n%s", diff)
		}
		docs, _ = w.list(t, quire.DocumentFilter{Visibility: seeAll, Search: "kubernetes", SortBy: "title", Limit: 2, Offset: 1})
		if diff := cmp.Diff([]string{"Kubernetes guide", "Operations"}, docTitles(docs)); diff != "" {
			t.Errorf("search ordered by title, second page of two (-want +got):\n%s", diff)
		}
	})
}

// manyWords returns n distinct words: a search that no document matches
// in full but whose first words many do.
func manyWords(n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("alpha%d", i)
	}
	return "alpha " + strings.Join(words, " ")
}

// checkVisible reports a mismatch between visible and the outcome err of
// op on the document title, and reports whether the case failed.
func checkVisible(t *testing.T, op, title string, visible bool, err error) bool {
	t.Helper()
	switch {
	case visible && err != nil:
		t.Errorf("%s of visible %q: %v", op, title, err)
		return true
	case !visible && quire.ErrorCode(err) != quire.ENOTFOUND:
		t.Errorf("%s of invisible %q: error %v, want %s", op, title, err, quire.ENOTFOUND)
		return true
	}
	return false
}
