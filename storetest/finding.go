package storetest

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"quire"
	"quire/textsearch"
)

func init() { register("finding", testFinding) }

// testFinding covers what product.md section 14 adds to finding documents:
// tags searched as words, the start of each body read for highlights (the
// same highlights from every store), and a folder filter that takes the
// folders below.
func testFinding(t *testing.T, open Opener) {
	t.Run("a search word matches a document's tags as words", func(t *testing.T) {
		w := newDocWorld(t, open)
		mk := func(title, content string, tags ...string) *quire.Document {
			d := draft(w.owner, title)
			d.Content, d.Tags = content, tags
			return w.create(t, d, baseTime)
		}
		pager := mk("Pager duty", "Who answers at night.", "On-Call", "Runbooks")
		mk("Release notes", "What changed.", "releases")
		mk("Kubernetes", "Clusters.", "Café")
		trashed := mk("Old pager", "Gone.", "oncall")
		if err := w.s.DeleteDocument(t.Context(), seeAll, trashed.ID, w.owner.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		w.wantSearches(t, []searchCase{
			{"a word of a tag", "call", []string{"Pager duty"}},
			{"the start of a tag", "runbook", []string{"Pager duty"}},
			{"a tag, ignoring case and accents", "CAFE", []string{"Kubernetes"}},
			{"words of the tags and the text together", "runbooks night", []string{"Pager duty"}},
			{"every word is still needed", "runbooks releases", nil},
			{"a tag of a document in the trash is not found", "oncall", nil},
		})

		t.Run("a change of tags alone is followed", func(t *testing.T) {
			w.update(t, pager.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Tags = []string{"Escalation"} })
			for search, want := range map[string]int{"runbooks": 0, "call": 0, "escalation": 1, "night": 1} {
				if _, total := w.searchTitles(t, seeAll, search); total != want {
					t.Errorf("search %q after the tags changed: total %d, want %d", search, total, want)
				}
			}
		})

		t.Run("a purged document's tags leave the index", func(t *testing.T) {
			if err := w.s.PurgeDocument(t.Context(), seeAll, trashed.ID); err != nil {
				t.Fatal(err)
			}
			d := mk("New pager", "Here.", "oncall")
			titles, total := w.searchTitles(t, seeAll, "oncall")
			if diff := cmp.Diff([]string{d.Title}, titles); diff != "" || total != 1 {
				t.Errorf("search oncall after a purge: total %d (-want +got):\n%s", total, diff)
			}
		})

		t.Run("a title match still ranks above a tag match", func(t *testing.T) {
			mk("Escalation policy", "Steps.")
			best, total := w.searchTitles(t, seeAll, "escalation")
			if total != 2 || len(best) != 2 || best[0] != "Escalation policy" {
				t.Errorf("relevance = %q (total %d), want Escalation policy first of 2", best, total)
			}
		})
	})

	t.Run("a list reads the start of each body when asked, and all of it with content", func(t *testing.T) {
		w := newDocWorld(t, open)
		d := draft(w.owner, "Body")
		d.Content = "héllo wörld"
		w.create(t, d, baseTime)
		for _, tc := range []struct {
			name string
			f    quire.DocumentFilter
			want string
		}{
			{"characters, not bytes", quire.DocumentFilter{ContentPrefix: 4}, "héll"},
			{"with a search", quire.DocumentFilter{ContentPrefix: 7, Search: "hello"}, "héllo w"},
			{"a prefix longer than the body", quire.DocumentFilter{ContentPrefix: 100, Search: "hello"}, "héllo wörld"},
			{"includeContent wins", quire.DocumentFilter{ContentPrefix: 2, IncludeContent: true, Search: "world"}, "héllo wörld"},
		} {
			f := tc.f
			f.Visibility = seeAll
			docs, _ := w.list(t, f)
			if len(docs) != 1 || docs[0].Content != tc.want {
				t.Errorf("%s: %d documents, content %q, want %q", tc.name, len(docs), docsContent(docs), tc.want)
			}
		}
	})

	t.Run("highlights of a page are the same from every store", func(t *testing.T) {
		w := newDocWorld(t, open)
		mk := func(title, summary, content string, tags ...string) {
			d := draft(w.owner, title)
			d.Summary, d.Content, d.Tags = summary, content, tags
			w.create(t, d, baseTime)
		}
		filler := strings.Repeat("Nothing to see in this line. ", 20)
		mk("Deploy <guide>", "", filler+"Run `make deploy` & watch the <b>dashboards</b>.\n\nThen "+filler)
		mk("Incident review", "How we deploy after an incident", "No match in the body.")
		mk("Pager", "", "Who answers at night.", "deploy-team")
		q := "deploy"
		docs, total := w.list(t, quire.DocumentFilter{Visibility: seeAll, Search: q, SortBy: "title",
			ContentPrefix: textsearch.ContentWindow})
		if total != 3 {
			t.Fatalf("search %q: total %d, want 3", q, total)
		}
		query := textsearch.NewQuery(q)
		var got []textsearch.Highlight
		for _, d := range docs {
			got = append(got, query.Highlight(d.Title, d.Summary, d.Content))
		}
		want := []textsearch.Highlight{
			{Title: "<mark>Deploy</mark> &lt;guide&gt;",
				Snippet: "… this line. Run `make <mark>deploy</mark>` &amp; watch the &lt;b&gt;dashboards&lt;/b&gt;. Then Nothing to see in this line. Nothing to see in this line. Nothing to see in this line. Nothing to see in this line. Nothing to see in …"},
			{Title: "Incident review", Snippet: "How we <mark>deploy</mark> after an incident"},
			{Title: "Pager", Snippet: "Who answers at night."},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("highlights (-want +got):\n%s", diff)
		}
	})

	t.Run("a folder filter can take the folders below it", func(t *testing.T) {
		w := newDocWorld(t, open)
		top := newFolder(t, w.s, "Engineering", "", baseTime)
		mid := newFolder(t, w.s, "Runbooks", top.ID, baseTime)
		low := newFolder(t, w.s, "Database", mid.ID, baseTime)
		other := newFolder(t, w.s, "Sales", "", baseTime)
		mk := func(title, folderID, visibility string) {
			d := draft(w.owner, title)
			d.FolderID, d.Visibility, d.DepartmentID = folderID, visibility, w.eng.ID
			w.create(t, d, baseTime)
		}
		mk("in mid", mid.ID, "department")
		mk("in low", low.ID, "private")
		mk("in low too", low.ID, "public")
		mk("in other", other.ID, "public")
		mk("in none", "", "public")
		for _, tc := range []struct {
			name string
			f    quire.DocumentFilter
			want []string
		}{
			{"a parent holding no document of its own", quire.DocumentFilter{FolderID: top.ID}, nil},
			{"the parent and every folder below", quire.DocumentFilter{FolderID: top.ID, Subfolders: true},
				[]string{"in low", "in low too", "in mid"}},
			{"a folder in the middle", quire.DocumentFilter{FolderID: mid.ID, Subfolders: true},
				[]string{"in low", "in low too", "in mid"}},
			{"a folder at the bottom", quire.DocumentFilter{FolderID: low.ID, Subfolders: true}, []string{"in low", "in low too"}},
			{"with a search", quire.DocumentFilter{FolderID: top.ID, Subfolders: true, Search: "too"}, []string{"in low too"}},
			{"with a status", quire.DocumentFilter{FolderID: top.ID, Subfolders: true, Status: "published"}, nil},
			{"an unknown folder", quire.DocumentFilter{FolderID: unknownID, Subfolders: true}, nil},
			{"in no folder", quire.DocumentFilter{NoFolder: true}, []string{"in none"}},
			{"in no folder, with a search", quire.DocumentFilter{NoFolder: true, Search: "none"}, []string{"in none"}},
			{"in no folder, with a tag", quire.DocumentFilter{NoFolder: true, Tags: []string{"none"}}, nil},
		} {
			f := tc.f
			f.Visibility, f.SortBy = seeAll, "title"
			docs, total := w.list(t, f)
			if diff := cmp.Diff(tc.want, docTitles(docs), cmpopts.EquateEmpty()); diff != "" || total != len(tc.want) {
				t.Errorf("%s: total %d, titles (-want +got):\n%s", tc.name, total, diff)
			}
		}
		// Visibility still applies: the outsider sees only the public one.
		docs, total := w.list(t, quire.DocumentFilter{Visibility: sees(w.outsider), FolderID: top.ID, Subfolders: true, SortBy: "title"})
		if diff := cmp.Diff([]string{"in low too"}, docTitles(docs)); diff != "" || total != 1 {
			t.Errorf("outsider: total %d, titles (-want +got):\n%s", total, diff)
		}
	})
}

func docsContent(docs []quire.Document) string {
	if len(docs) == 0 {
		return ""
	}
	return docs[0].Content
}

// searchCase is a search and the titles it finds, for wantSearches.
type searchCase struct {
	name, search string
	want         []string
}

// wantSearches runs each case as a subtest that fails unless a search by
// someone who sees everything finds exactly the titles of the case, in
// any order, and counts as many.
func (w *docWorld) wantSearches(t *testing.T, cases []searchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			titles, total := w.searchTitles(t, seeAll, tc.search)
			sort.Strings(titles)
			if diff := cmp.Diff(tc.want, titles, cmpopts.EquateEmpty()); diff != "" || total != len(tc.want) {
				t.Errorf("search %q: total %d, titles (-want +got):\n%s", tc.search, total, diff)
			}
		})
	}
}
