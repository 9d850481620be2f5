package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("trash", testTrash) }

// trash moves the document id to the trash as by at, failing the test on an
// error.
func (w *docWorld) trash(t *testing.T, id string, by *quire.User, at time.Time) {
	t.Helper()
	if err := w.s.DeleteDocument(t.Context(), seeAll, id, by.ID, at); err != nil {
		t.Fatalf("delete document %s: %v", id, err)
	}
}

// trashTitles returns the titles of the trash as vis sees it, newest
// deletion first, and the total.
func (w *docWorld) trashTitles(t *testing.T, vis quire.Visibility) ([]string, int) {
	t.Helper()
	docs, total, err := w.s.Trash(t.Context(), quire.TrashFilter{Visibility: vis, Limit: 100})
	if err != nil {
		t.Fatalf("Trash: %v", err)
	}
	return docTitles(docs), total
}

func testTrash(t *testing.T, open Opener) {
	t.Run("a deleted document is not read, listed, counted, searched, versioned, updated or filtered", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		folder := newFolder(t, w.s, "Guides", "", baseTime)
		mk := func(title string) *quire.Document {
			d := draft(w.owner, title)
			d.Content, d.Visibility, d.DepartmentID, d.FolderID, d.Tags = "zeppelin manual", "public", w.eng.ID, folder.ID, []string{"air"}
			return w.create(t, d, baseTime)
		}
		kept, gone := mk("Kept"), mk("Gone")
		w.trash(t, gone.ID, w.owner, baseTime.Add(time.Minute))

		for _, vis := range []quire.Visibility{seeAll, sees(w.owner), sees(w.colleague)} {
			for _, f := range []quire.DocumentFilter{
				{}, // a total summed from document_counts
				{Status: "draft"},
				{VisibilityIs: "public"},
				{DepartmentID: w.eng.ID},
				{FolderID: folder.ID},
				{Tags: []string{"air"}},
				{Search: "zeppelin"},
				{SortBy: "created_at"},
				{SortBy: "title"},
				{SortBy: "status"},
				{Search: "manual", SortBy: "relevance", Desc: true},
			} {
				f.Visibility = vis
				docs, total := w.list(t, f)
				if diff := cmp.Diff([]string{"Kept"}, docTitles(docs)); diff != "" || total != 1 {
					t.Errorf("ListDocuments(%+v): total %d, titles (-want +got):\n%s", f, total, diff)
				}
			}
		}
		_, err := w.s.Document(ctx, seeAll, gone.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.Versions(ctx, seeAll, gone.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.Version(ctx, seeAll, gone.ID, 1)
		wantCode(t, err, quire.ENOTFOUND)
		called := false
		_, err = w.s.UpdateDocument(ctx, seeAll, gone.ID, time.Time{}, w.owner.ID, baseTime.Add(time.Hour),
			func(d *quire.Document) (bool, error) { called = true; d.Title = "back"; return true, nil })
		wantCode(t, err, quire.ENOTFOUND)
		if called {
			t.Error("UpdateDocument called apply on a document in the trash")
		}
		wantCode(t, w.s.DeleteDocument(ctx, seeAll, gone.ID, w.owner.ID, baseTime.Add(time.Hour)), quire.ENOTFOUND)
		if _, err := w.s.Document(ctx, seeAll, kept.ID); err != nil {
			t.Errorf("the other document: %v", err)
		}
	})

	t.Run("the trash lists newest deletion first, with who deleted each and when, without content", func(t *testing.T) {
		w := newDocWorld(t, open)
		ids := map[string]string{}
		for _, title := range []string{"one", "two", "three", "four", "five"} {
			d := draft(w.owner, title)
			d.Content, d.Visibility = "body of "+title, "public"
			ids[title] = w.create(t, d, baseTime).ID
		}
		w.trash(t, ids["one"], w.owner, baseTime.Add(1*time.Minute))
		w.trash(t, ids["two"], w.outsider, baseTime.Add(3*time.Minute))
		w.trash(t, ids["three"], w.owner, baseTime.Add(2*time.Minute))
		// Deleted at the same instant: the larger id first.
		w.trash(t, ids["four"], w.owner, baseTime.Add(4*time.Minute))
		w.trash(t, ids["five"], w.owner, baseTime.Add(4*time.Minute))
		tied := []string{"four", "five"}
		if ids["five"] > ids["four"] {
			tied = []string{"five", "four"}
		}
		want := append(tied, "two", "three", "one")
		titles, total := w.trashTitles(t, sees(w.colleague))
		if diff := cmp.Diff(want, titles); diff != "" || total != 5 {
			t.Errorf("trash: total %d, titles (-want +got):\n%s", total, diff)
		}
		docs, total, err := w.s.Trash(t.Context(), quire.TrashFilter{Visibility: seeAll, Offset: 2, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"two", "three"}, docTitles(docs)); diff != "" || total != 5 {
			t.Errorf("second page: total %d, titles (-want +got):\n%s", total, diff)
		}
		two := docs[0]
		if two.Content != "" || !two.DeletedAt.Equal(baseTime.Add(3*time.Minute)) || two.DeletedByID != w.outsider.ID ||
			two.DeletedByName != w.outsider.Name || two.Version != 1 || two.OwnerID != w.owner.ID {
			t.Errorf("listed %+v, want no content, deleted at %v by %s (%s)", two, baseTime.Add(3*time.Minute), w.outsider.ID, w.outsider.Name)
		}
		docs, total, err = w.s.Trash(t.Context(), quire.TrashFilter{Visibility: seeAll, Offset: 10, Limit: 2})
		if err != nil || len(docs) != 0 || total != 5 {
			t.Errorf("page past the end: %d documents, total %d, err %v; want none of 5", len(docs), total, err)
		}
		got := must(w.s.TrashedDocument(t.Context(), seeAll, ids["two"]))(t)
		if got.Content != "body of two" || got.DeletedByName != w.outsider.Name || !got.DeletedAt.Equal(two.DeletedAt) {
			t.Errorf("TrashedDocument = %+v, want the content and who deleted it", got)
		}
		_, err = w.s.TrashedDocument(t.Context(), seeAll, unknownID)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("visibility applies in the trash as outside it", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		docs := w.visibilityDocs(t, func(d *quire.Document, owner *quire.User) *quire.Document {
			d = w.create(t, d, baseTime)
			w.trash(t, d.ID, owner, baseTime.Add(time.Minute))
			return d
		})
		everything := visibilityTitles
		for _, tc := range w.visibilityCases() {
			t.Run(tc.who+" sees "+strings.Join(tc.want, ", "), func(t *testing.T) {
				titles, total := w.trashTitles(t, tc.vis)
				slices.Sort(titles)
				if diff := cmp.Diff(tc.want, titles); diff != "" || total != len(tc.want) {
					t.Errorf("trash: total %d, titles (-want +got):\n%s", total, diff)
				}
				for _, title := range everything {
					if slices.Contains(tc.want, title) {
						continue
					}
					d := docs[title]
					_, err := w.s.TrashedDocument(ctx, tc.vis, d.ID)
					checkVisible(t, "TrashedDocument", title, false, err)
					_, err = w.s.RestoreDocument(ctx, tc.vis, d.ID)
					checkVisible(t, "RestoreDocument", title, false, err)
					checkVisible(t, "PurgeDocument", title, false, w.s.PurgeDocument(ctx, tc.vis, d.ID))
				}
			})
		}
		// Nothing refused above may have restored or purged anything.
		if titles, total := w.trashTitles(t, seeAll); total != len(everything) {
			t.Errorf("trash after refusals: %q", titles)
		}
	})

	t.Run("a restore brings the document back as it was, with its versions, counted and searched again", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		folder := newFolder(t, w.s, "Guides", "", baseTime)
		d := draft(w.owner, "Airship")
		d.Content, d.Visibility, d.FolderID, d.Tags = "zeppelin", "department", folder.ID, []string{"Air", "ship"}
		d.DepartmentID = w.eng.ID
		d = w.create(t, d, baseTime)
		d = w.update(t, d.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Content = "zeppelin manual" })
		versions := must(w.s.Versions(ctx, seeAll, d.ID))(t)
		w.trash(t, d.ID, w.owner, baseTime.Add(time.Hour))

		got := must(w.s.RestoreDocument(ctx, sees(w.colleague), d.ID))(t)
		if diff := cmp.Diff(d, got); diff != "" {
			t.Errorf("restored (-want +got):\n%s", diff)
		}
		if read, err := w.s.Document(ctx, sees(w.colleague), d.ID); err != nil || !cmp.Equal(d, read) {
			t.Errorf("read after restore: %v, %s", err, cmp.Diff(d, read))
		}
		after := must(w.s.Versions(ctx, seeAll, d.ID))(t)
		if diff := cmp.Diff(versions, after); diff != "" {
			t.Errorf("versions after restore (-before +after):\n%s", diff)
		}
		for _, f := range []quire.DocumentFilter{{Visibility: sees(w.colleague)}, {Visibility: seeAll, Search: "manual"},
			{Visibility: seeAll, FolderID: folder.ID}, {Visibility: seeAll, Tags: []string{"air"}}} {
			if docs, total := w.list(t, f); total != 1 || len(docs) != 1 {
				t.Errorf("ListDocuments(%+v) after restore: %d (total %d), want 1", f, len(docs), total)
			}
		}
		if titles, total := w.trashTitles(t, seeAll); total != 0 {
			t.Errorf("trash after restore: %q", titles)
		}
		_, err := w.s.RestoreDocument(ctx, seeAll, d.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.TrashedDocument(ctx, seeAll, d.ID)
		wantCode(t, err, quire.ENOTFOUND)
		// It can be deleted and restored again.
		w.trash(t, d.ID, w.outsider, baseTime.Add(2*time.Hour))
		if _, err := w.s.RestoreDocument(ctx, seeAll, d.ID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a folder holding only trashed documents may be deleted, and a restore then lands at the top", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		folder := newFolder(t, w.s, "Old", "", baseTime)
		d := draft(w.owner, "Inside")
		d.FolderID = folder.ID
		d = w.create(t, d, baseTime)
		live := draft(w.outsider, "Still here")
		live.FolderID = folder.ID
		live = w.create(t, live, baseTime)

		w.trash(t, d.ID, w.owner, baseTime.Add(time.Minute))
		// A private document of someone else, outside the trash, keeps it.
		wantCode(t, w.s.DeleteFolder(ctx, folder.ID), quire.EFOLDERNOTEMPTY)
		w.trash(t, live.ID, w.outsider, baseTime.Add(time.Minute))
		if err := w.s.DeleteFolder(ctx, folder.ID); err != nil {
			t.Fatalf("delete a folder holding only trashed documents: %v", err)
		}
		listed := must(w.s.TrashedDocument(ctx, seeAll, d.ID))(t)
		if listed.FolderID != "" {
			t.Errorf("in the trash: folder %q, want none once it is deleted", listed.FolderID)
		}
		got := must(w.s.RestoreDocument(ctx, sees(w.owner), d.ID))(t)
		if got.FolderID != "" || got.Version != 1 || !got.UpdatedAt.Equal(d.UpdatedAt) {
			t.Errorf("restored: folder %q, version %d, updated_at %v; want no folder, version 1, %v",
				got.FolderID, got.Version, got.UpdatedAt, d.UpdatedAt)
		}
		// The version keeps the folder it was saved in.
		if v, err := w.s.Version(ctx, seeAll, d.ID, 1); err != nil || v.FolderID != folder.ID {
			t.Errorf("version 1: %v, folder %q, want %q", err, v.FolderID, folder.ID)
		}
	})

	t.Run("a purge deletes a trashed document for good, and never one outside the trash", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		d := draft(w.owner, "Zeppelin")
		d.Content, d.Tags = "airship", []string{"air"}
		d = w.create(t, d, baseTime)
		w.update(t, d.ID, baseTime.Add(time.Second), func(d *quire.Document) { d.Content = "airship manual" })
		live := w.create(t, draft(w.owner, "Live zeppelin"), baseTime)

		wantCode(t, w.s.PurgeDocument(ctx, seeAll, live.ID), quire.ENOTFOUND)
		if _, err := w.s.Document(ctx, seeAll, live.ID); err != nil {
			t.Fatalf("a document outside the trash after a purge of it: %v", err)
		}
		w.trash(t, d.ID, w.owner, baseTime.Add(time.Minute))
		if err := w.s.PurgeDocument(ctx, sees(w.owner), d.ID); err != nil {
			t.Fatal(err)
		}
		_, err := w.s.TrashedDocument(ctx, seeAll, d.ID)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = w.s.RestoreDocument(ctx, seeAll, d.ID)
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, w.s.PurgeDocument(ctx, seeAll, d.ID), quire.ENOTFOUND)
		if titles, total := w.trashTitles(t, seeAll); total != 0 {
			t.Errorf("trash after purge: %q", titles)
		}
		if titles, total := w.searchTitles(t, seeAll, "zeppelin"); !slices.Equal(titles, []string{"Live zeppelin"}) || total != 1 {
			t.Errorf("search after purge = %q (total %d)", titles, total)
		}
		// The owner's other documents and the counts are intact.
		if docs, total := w.list(t, quire.DocumentFilter{Visibility: sees(w.owner)}); total != 1 || len(docs) != 1 {
			t.Errorf("list after purge: %d (total %d), want 1", len(docs), total)
		}
	})

	t.Run("PurgeTrash deletes what was trashed before the time, oldest first, a batch at a time", func(t *testing.T) {
		w := newDocWorld(t, open)
		ctx := t.Context()
		var ids []string
		for i := range 5 {
			d := w.create(t, draft(w.owner, fmt.Sprintf("trashed %d", i)), baseTime)
			w.trash(t, d.ID, w.owner, baseTime.Add(time.Duration(i+1)*time.Hour))
			ids = append(ids, d.ID)
		}
		old := w.create(t, draft(w.owner, "old but live"), baseTime.Add(-time.Hour))

		// Before hour 4: trashed 0, 1 and 2.
		before := baseTime.Add(4 * time.Hour)
		for i, want := range []int{2, 1, 0} {
			n := must(w.s.PurgeTrash(ctx, before, 2, purgeEvent))(t)
			if n != want {
				t.Errorf("purge %d: %d documents, want %d", i+1, n, want)
			}
		}
		// Each document purged has its event, written with the purge.
		var got []string
		for _, e := range auditEvents(t, w.s, quire.AuditFilter{Action: quire.ActionDocumentPurged}) {
			got = append(got, e.Target.ID+" "+e.Target.Name)
		}
		slices.Sort(got)
		want := []string{ids[0] + " trashed 0", ids[1] + " trashed 1", ids[2] + " trashed 2"}
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("document.purged events (-want +got):\n%s", diff)
		}
		titles, _ := w.trashTitles(t, seeAll)
		if diff := cmp.Diff([]string{"trashed 4", "trashed 3"}, titles); diff != "" {
			t.Errorf("trash after the purges (-want +got):\n%s", diff)
		}
		if _, err := w.s.Document(ctx, seeAll, old.ID); err != nil {
			t.Errorf("a live document after the purge: %v", err)
		}
		if n, err := w.s.PurgeTrash(ctx, baseTime.Add(10*time.Hour), 0, purgeEvent); err != nil || n != 0 {
			t.Errorf("purge with limit 0: %d, %v; want nothing", n, err)
		}
	})

	t.Run("purges running at once delete each document once", func(t *testing.T) {
		w := newDocWorld(t, open)
		const docs = 24
		for i := range docs {
			d := w.create(t, draft(w.owner, fmt.Sprintf("trashed %d", i)), baseTime)
			w.trash(t, d.ID, w.owner, baseTime.Add(time.Minute))
		}
		var (
			mu     sync.Mutex
			purged int
			wg     sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for range 100 {
					n, err := w.s.PurgeTrash(t.Context(), baseTime.Add(time.Hour), 5, purgeEvent)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					purged += n
					done := purged >= docs
					mu.Unlock()
					if done {
						return
					}
				}
			})
		}
		wg.Wait()
		if purged != docs {
			t.Errorf("purged %d documents, want each of %d once", purged, docs)
		}
		if evs := auditEvents(t, w.s, quire.AuditFilter{Action: quire.ActionDocumentPurged}); len(evs) != docs {
			t.Errorf("%d document.purged events, want one for each of %d documents", len(evs), docs)
		}
		if titles, total := w.trashTitles(t, seeAll); total != 0 {
			t.Errorf("left in the trash: %q", titles)
		}
	})
}

// purgeEvent is the event a retention purge records of a document.
func purgeEvent(id, title string) *quire.Event {
	return quire.NewEvent(quire.ActionDocumentPurged, baseTime, nil, quire.RequestInfo{}).
		On(quire.TargetDocument, id, title).With("via", "retention")
}
