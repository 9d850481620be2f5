package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDocumentPaging walks every page of every order, both ways: each
// document the caller sees comes exactly once, none it does not see comes at
// all, the pagination adds up, and the sort key never goes backwards. Many
// documents share a time, a title (ignoring case) or a status, so the order
// rests on the id for ties.
func TestDocumentPaging(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	bob := fx.person("bob@example.com", "editor", "Sales", false)

	titles := []string{"alpha", "Alpha", "ALPHA", "beta", "Gamma", "gamma", "delta", "Epsilon", "zeta", "eta"}
	statuses := []string{"draft", "review", "published", "archived"}
	visible := map[string]bool{}
	var hidden []string
	for i := range 31 {
		if i%4 == 0 {
			// Every fourth document shares its time with the one before.
			fx.clock.Advance(time.Second)
		}
		words := strings.Repeat("common ", 1+i%5)
		d := fx.create(ada, map[string]any{"title": titles[i%len(titles)], "status": statuses[i%len(statuses)],
			"content": words, "visibility": []string{"private", "department", "public"}[i%3]})
		visible[d.ID] = true
		if i%3 == 0 {
			// Later edits reorder updated_at against created_at.
			fx.clock.Advance(time.Millisecond)
			decodeDoc(t, fx.do("PUT", docsPath+"/"+d.ID, bearer(ada), jsonBody(map[string]any{"summary": "edited common"})))
		}
	}
	for i := range 6 {
		vis := []string{"private", "department"}[i%2]
		d := fx.create(bob, map[string]any{"title": "alpha hidden", "content": "common", "visibility": vis})
		hidden = append(hidden, d.ID)
	}
	pub := fx.create(bob, map[string]any{"title": "Beta public", "content": "common", "visibility": "public"})
	visible[pub.ID] = true

	type order struct{ sortBy, search string }
	orders := []order{
		{"", ""}, {"updated_at", ""}, {"updatedAt", ""}, {"created_at", ""}, {"createdAt", ""}, {"title", ""},
		{"status", ""}, {"relevance", ""}, {"relevance", "common"}, {"", "common"}, {"title", "common"},
	}
	statusRank := map[string]int{"draft": 0, "review": 1, "published": 2, "archived": 3}
	for _, o := range orders {
		for _, dir := range []string{"asc", "desc"} {
			for _, limit := range []int{7, 1} {
				if limit == 1 && o.sortBy != "title" && o.sortBy != "relevance" {
					continue
				}
				name := fmt.Sprintf("sortBy=%q search=%q %s limit %d walks every visible document once", o.sortBy, o.search, dir, limit)
				t.Run(name, func(t *testing.T) {
					fx := fx.in(t)
					var got []docWire
					total := len(visible)
					pages := (total + limit - 1) / limit
					for page := 1; page <= pages+1; page++ {
						q := fmt.Sprintf("?page=%d&limit=%d&sortOrder=%s&sortBy=%s&search=%s", page, limit, dir, o.sortBy, o.search)
						list := decodeList(t, fx.do("GET", docsPath+q, bearer(ada)))
						want := paginationWire{CurrentPage: page, Limit: limit, Total: total, TotalPages: pages, HasMore: page < pages}
						if diff := cmp.Diff(want, list.Pagination); diff != "" {
							t.Fatalf("page %d pagination (-want +got)\n%s", page, diff)
						}
						wantLen := min(limit, max(total-(page-1)*limit, 0))
						if len(list.Documents) != wantLen {
							t.Fatalf("page %d has %d documents, want %d", page, len(list.Documents), wantLen)
						}
						got = append(got, list.Documents...)
					}
					seen := map[string]int{}
					for _, d := range got {
						seen[d.ID]++
					}
					for id := range visible {
						if seen[id] != 1 {
							t.Errorf("document %s listed %d times", id, seen[id])
						}
					}
					for _, id := range hidden {
						if seen[id] != 0 {
							t.Errorf("hidden document %s listed", id)
						}
					}
					for i := 1; i < len(got); i++ {
						a, b := got[i-1], got[i]
						var cmpv int
						switch o.sortBy {
						case "", "updated_at", "updatedAt":
							if o.search != "" && o.sortBy == "" {
								continue // relevance
							}
							cmpv = strings.Compare(a.UpdatedAt, b.UpdatedAt)
						case "created_at", "createdAt":
							cmpv = strings.Compare(a.CreatedAt, b.CreatedAt)
						case "title":
							cmpv = strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title))
						case "status":
							cmpv = statusRank[a.Status] - statusRank[b.Status]
						case "relevance":
							if o.search != "" {
								continue
							}
							cmpv = strings.Compare(a.UpdatedAt, b.UpdatedAt)
						}
						if dir == "desc" {
							cmpv = -cmpv
						}
						if cmpv > 0 {
							t.Fatalf("out of order at %d: %+v then %+v", i, a, b)
						}
					}
				})
			}
		}
	}
}
