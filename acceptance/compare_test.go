package acceptance

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"quire/documents"
)

// diffRows returns the changed rows of a diff table as "ins"/"del" and the
// line's inner HTML, where changed words are marked.
func diffRows(p *page) []string {
	var rows []string
	for _, tr := range findAll(p.Doc, func(n *html.Node) bool {
		return n.Data == "tr" && (attr(n, "class") == "ins" || attr(n, "class") == "del")
	}) {
		rows = append(rows, attr(tr, "class")+" "+innerHTML(find(tr, func(n *html.Node) bool { return attr(n, "class") == "code" })))
	}
	return rows
}

func TestVersionCompare(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	doc := e.document(ed, documents.DocumentInput{Title: documents.Some("Policy"), Content: documents.Some("intro\nThe quick brown fox.\nend")})
	ctx := context.Background()
	for _, in := range []documents.DocumentInput{
		{Content: documents.Some("intro\nThe quick red fox.\nend")},
		{Title: documents.Some("Policy 3"), Content: documents.Some("intro\nThe quick red fox.\nend\nmore")},
	} {
		e.clock.Advance(time.Minute)
		if _, err := e.docs.Update(ctx, e.actor(ed), doc.ID, in, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	b := e.signedIn("ed@example.com")
	path := "/documents/" + doc.ID

	t.Run("the versions page offers to compare the last two", func(t *testing.T) {
		p := b.get(path + "/versions")
		from, _ := p.value("from")
		to, _ := p.value("to")
		if from != "2" || to != "3" || attr(p.byID("compare-form"), "action") != path+"/compare" {
			t.Fatalf("form: from %q to %q action %q", from, to, attr(p.byID("compare-form"), "action"))
		}
	})
	t.Run("any two versions compare, changed words marked with del and ins", func(t *testing.T) {
		p := b.get(path + "/compare?from=1&to=3")
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		want := []string{"del The quick <del>brown</del> fox.", "ins The quick <ins>red</ins> fox.", "ins more"}
		if diff := cmp.Diff(want, diffRows(p)); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		if got := textOf(p.byID("field-changes")); got == "" {
			t.Error("the title's change is not shown")
		}
		from, _ := p.value("from")
		to, _ := p.value("to")
		if from != "1" || to != "3" {
			t.Errorf("the form shows from %q to %q", from, to)
		}
	})
	t.Run("backwards too", func(t *testing.T) {
		want := []string{"del The quick <del>red</del> fox.", "ins The quick <ins>brown</ins> fox."}
		if diff := cmp.Diff(want, diffRows(b.get(path+"/compare?from=2&to=1"))); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
	})
	t.Run("a number that is not one is 400, a version that does not exist 404", func(t *testing.T) {
		for q, status := range map[string]int{"from=x": 400, "to=0": 400, "from=-1": 400, "from=9": 404, "to=4": 404} {
			if p := b.get(path + "/compare?" + q); p.Status != status {
				t.Errorf("%s: status %d, want %d", q, p.Status, status)
			}
		}
	})
	t.Run("a document the reader cannot see is 404", func(t *testing.T) {
		_, other := e.signedInUser("sam@example.com", "editor", "Sales")
		if p := other.get(path + "/compare?from=1&to=2"); p.Status != http.StatusNotFound {
			t.Errorf("status %d", p.Status)
		}
	})
}

func TestBacklinksPanel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ed := e.user("ed@example.com", "editor", "Engineering")
	sam := e.user("sam@example.com", "editor", "Sales")
	target := e.document(ed, documents.DocumentInput{Title: documents.Some("Target"), Visibility: documents.Some("public")})
	link := "[the target](/documents/" + target.ID + ")"
	e.document(ed, documents.DocumentInput{Title: documents.Some("Private notes"), Content: documents.Some(link)})
	e.clock.Advance(time.Minute)
	e.document(sam, documents.DocumentInput{Title: documents.Some("Sales <plan>"), Content: documents.Some(link), Visibility: documents.Some("public")})

	titles := func(p *page) []string { return textsOf(p.byID("backlinks"), tagged("a")) }
	b := e.signedIn("ed@example.com")
	if diff := cmp.Diff([]string{"Sales <plan>", "Private notes"}, titles(b.get("/documents/"+target.ID))); diff != "" {
		t.Errorf("as the owner (-want +got):\n%s", diff)
	}
	other := e.signedIn("sam@example.com")
	p := other.get("/documents/" + target.ID)
	if diff := cmp.Diff([]string{"Sales <plan>"}, titles(p)); diff != "" {
		t.Errorf("as another department (-want +got):\n%s", diff)
	}
	if p := b.get("/documents/" + target.ID); p.Status != http.StatusOK {
		t.Fatal(p.Status)
	}
	// An imported document's links count as a saved one's.
	e.clock.Advance(time.Minute)
	if _, _, err := e.docs.Import(context.Background(), e.actor(ed), "", documents.DocumentInput{Title: documents.Some("Imported"),
		Content: documents.Some(link)}, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Imported", "Sales <plan>", "Private notes"}, titles(b.get("/documents/"+target.ID))); diff != "" {
		t.Errorf("after an import (-want +got):\n%s", diff)
	}
	empty := b.get("/documents/" + e.document(ed, documents.DocumentInput{Title: documents.Some("Alone")}).ID)
	if got := textOf(empty.byID("backlinks")); got == "" || len(titles(empty)) != 0 {
		t.Errorf("an unlinked document's panel: %q", got)
	}
}
