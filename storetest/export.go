package storetest

import (
	"slices"
	"testing"
	"time"

	"quire"
)

func init() { register("export", testExport) }

func testExport(t *testing.T, open Opener) {
	t.Run("DocumentsAfter walks every visible live document once, in id order, content included", func(t *testing.T) {
		w := newDocWorld(t, open)
		var mine, public []string
		for i := range 7 {
			d := draft(w.owner, "Mine")
			d.Content = "body of mine"
			if i%2 == 0 {
				d.Visibility = "public"
			}
			w.create(t, d, baseTime.Add(time.Duration(i)*time.Second))
			mine = append(mine, d.ID)
			if d.Visibility == "public" {
				public = append(public, d.ID)
			}
		}
		gone := draft(w.owner, "Gone")
		gone.Visibility = "public"
		w.create(t, gone, baseTime)
		if err := w.s.DeleteDocument(t.Context(), seeAll, gone.ID, w.owner.ID, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		walk := func(vis quire.Visibility, limit int) []string {
			var ids []string
			after := ""
			for {
				page := must(w.s.DocumentsAfter(t.Context(), vis, after, limit))(t)
				for _, d := range page {
					if d.Content != "body of mine" || d.Title != "Mine" || d.OwnerName == "" {
						t.Fatalf("document %+v lacks its content or fields", d)
					}
					ids = append(ids, d.ID)
				}
				if len(page) < limit {
					return ids
				}
				after = page[len(page)-1].ID
			}
		}
		slices.Sort(mine)
		slices.Sort(public)
		if got := walk(sees(w.owner), 3); !slices.Equal(got, mine) {
			t.Errorf("owner walked %v, want %v", got, mine)
		}
		if got := walk(sees(w.outsider), 2); !slices.Equal(got, public) {
			t.Errorf("outsider walked %v, want the public ones %v", got, public)
		}
	})

	t.Run("an import keeps a document's id and dates", func(t *testing.T) {
		w := newDocWorld(t, open)
		d := draft(w.owner, "Imported")
		d.ID = "0190b2a4-1111-7000-8000-000000000001"
		d.CreatedAt = baseTime.Add(-48 * time.Hour)
		d.UpdatedAt = baseTime.Add(-24 * time.Hour)
		if err := w.s.CreateDocument(t.Context(), d, baseTime); err != nil {
			t.Fatal(err)
		}
		got := must(w.s.Document(t.Context(), seeAll, "0190b2a4-1111-7000-8000-000000000001"))(t)
		if !got.CreatedAt.Equal(baseTime.Add(-48*time.Hour)) || !got.UpdatedAt.Equal(baseTime.Add(-24*time.Hour)) {
			t.Errorf("dates %v / %v, want the imported ones", got.CreatedAt, got.UpdatedAt)
		}
		// The next save moves updated_at on from the kept one.
		u := w.update(t, got.ID, baseTime, func(d *quire.Document) { d.Title = "Changed" })
		if !u.UpdatedAt.Equal(baseTime) || u.Version != 2 {
			t.Errorf("after a save: updated %v, version %d", u.UpdatedAt, u.Version)
		}
	})
}
