package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("links", testLinks) }

// backlinks returns the titles of the documents that link to id as vis
// sees them, and the total.
func (w *docWorld) backlinks(t *testing.T, vis quire.Visibility, id string) ([]string, int) {
	t.Helper()
	docs, total, err := w.s.Backlinks(t.Context(), quire.BacklinkFilter{Visibility: vis, TargetID: id, Limit: 100})
	if err != nil {
		t.Fatalf("Backlinks: %v", err)
	}
	for _, d := range docs {
		if d.Content != "" {
			t.Errorf("backlink %q carries its content", d.Title)
		}
	}
	return docTitles(docs), total
}

func testLinks(t *testing.T, open Opener) {
	w := newDocWorld(t, open)
	ctx := t.Context()
	at := baseTime
	next := func() time.Time { at = at.Add(time.Minute); return at }
	mk := func(title, typ, content, visibility string) *quire.Document {
		d := draft(w.owner, title)
		d.ContentType, d.Content, d.Visibility, d.DepartmentID = typ, content, visibility, w.eng.ID
		return w.create(t, d, next())
	}
	target := mk("Target", "markdown", "", "public")
	link := "/documents/" + target.ID
	md := mk("Markdown", "markdown", "See [the target]("+link+"#top).", "public")
	html := mk("HTML", "html", `<p><a href="`+link+`">target</a></p>`, "department")
	plain := mk("Plain", "plain", "[not a link]("+link+")", "public")
	private := mk("Private", "markdown", "[x]("+link+")", "private")
	self := mk("Self", "markdown", "", "public")
	w.update(t, self.ID, next(), func(d *quire.Document) { d.Content = "[me](/documents/" + self.ID + ")" })

	check := func(t *testing.T, vis quire.Visibility, id string, want []string) {
		t.Helper()
		got, total := w.backlinks(t, vis, id)
		if diff := cmp.Diff(want, got); diff != "" || total != len(want) {
			t.Fatalf("backlinks (-want +got), total %d:\n%s", total, diff)
		}
	}
	t.Run("links are read from Markdown and HTML content on create, newest update first", func(t *testing.T) {
		check(t, seeAll, target.ID, []string{"Private", "HTML", "Markdown"})
	})
	t.Run("each caller sees only the linking documents it may see", func(t *testing.T) {
		check(t, sees(w.owner), target.ID, []string{"Private", "HTML", "Markdown"})
		check(t, sees(w.colleague), target.ID, []string{"HTML", "Markdown"})
		check(t, sees(w.outsider), target.ID, []string{"Markdown"})
	})
	t.Run("a document's link to itself is not a backlink", func(t *testing.T) {
		check(t, seeAll, self.ID, []string{})
	})
	t.Run("an update replaces the links: removed, added, or by a change of format", func(t *testing.T) {
		w.update(t, md.ID, next(), func(d *quire.Document) { d.Content = "No link any more." })
		w.update(t, plain.ID, next(), func(d *quire.Document) { d.ContentType = "markdown" })
		check(t, seeAll, target.ID, []string{"Plain", "Private", "HTML"})
	})
	t.Run("a restored version's content gives its links again", func(t *testing.T) {
		v1 := must(w.s.Version(ctx, seeAll, md.ID, 1))(t)
		w.update(t, md.ID, next(), func(d *quire.Document) { d.Content = v1.Content })
		check(t, seeAll, target.ID, []string{"Markdown", "Plain", "Private", "HTML"})
	})
	t.Run("a page and the total", func(t *testing.T) {
		docs, total, err := w.s.Backlinks(ctx, quire.BacklinkFilter{Visibility: seeAll, TargetID: target.ID, Offset: 1, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"Plain", "Private"}, docTitles(docs)); diff != "" || total != 4 {
			t.Fatalf("page (-want +got), total %d:\n%s", total, diff)
		}
		docs, total, err = w.s.Backlinks(ctx, quire.BacklinkFilter{Visibility: seeAll, TargetID: target.ID, Offset: 10, Limit: 2})
		if err != nil || len(docs) != 0 || docs == nil || total != 4 {
			t.Fatalf("past the end: %v %d %v", docs, total, err)
		}
	})
	t.Run("a document in the trash links to nothing until it is restored; purged, its links are gone", func(t *testing.T) {
		w.trash(t, html.ID, w.owner, next())
		check(t, seeAll, target.ID, []string{"Markdown", "Plain", "Private"})
		if _, err := w.s.RestoreDocument(ctx, seeAll, html.ID); err != nil {
			t.Fatal(err)
		}
		check(t, seeAll, target.ID, []string{"Markdown", "Plain", "Private", "HTML"})
		w.trash(t, private.ID, w.owner, next())
		if err := w.s.PurgeDocument(ctx, seeAll, private.ID); err != nil {
			t.Fatal(err)
		}
		check(t, seeAll, target.ID, []string{"Markdown", "Plain", "HTML"})
	})
	t.Run("absolute links count under the public URL only", func(t *testing.T) {
		if err := w.s.SetSetting(ctx, quire.SettingPublicURL, "https://docs.example.com/quire"); err != nil {
			t.Fatal(err)
		}
		mk("Absolute", "markdown", "<https://docs.example.com/quire/documents/"+target.ID+">", "public")
		mk("Elsewhere", "markdown", "[x](https://elsewhere.example/quire/documents/"+target.ID+")", "public")
		check(t, seeAll, target.ID, []string{"Absolute", "Markdown", "Plain", "HTML"})
	})
	t.Run("a target nobody links to, or that does not exist, has none", func(t *testing.T) {
		check(t, seeAll, md.ID, []string{})
		check(t, seeAll, unknownID, []string{})
	})
}
