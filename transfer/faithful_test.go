package transfer_test

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/transfer"
)

// imported is a corpus imported from testdata: its report and each
// Markdown file's document.
type imported struct {
	rep  *transfer.Report
	docs map[string]*quire.Document // path -> document
	ids  map[string]bool            // every document and file made
}

func importCorpus(t *testing.T, s *space, a quire.Actor, dir string, opts transfer.Options) imported {
	t.Helper()
	rep, err := s.xfer.ImportDir(context.Background(), a, filepath.Join("testdata", dir), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := imported{rep: rep, docs: map[string]*quire.Document{}, ids: map[string]bool{}}
	for _, c := range append(slices.Clone(rep.Created), rep.Updated...) {
		out.ids[c.ID] = true
		if c.DocumentID != "" {
			continue
		}
		d, err := s.docs.Get(context.Background(), a, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		out.docs[c.Path] = d
	}
	return out
}

var (
	// What a link to a Markdown file of the archive looks like when it was
	// not rewritten: inline, a reference definition, a wikilink.
	leftLink = regexp.MustCompile(`\]\([^)\s]*\.md[)#\s]|(?m)^ {0,3}\[[^\]]+\]:\s*<?[^\s>]*\.md|\[\[`)
	// The links an import writes.
	docLink  = regexp.MustCompile(`/documents/([0-9a-f-]{36})`)
	fileLink = regexp.MustCompile(`/api/documentation/attachments/([0-9a-f-]{36})/content`)
)

// resolves checks that no link of d names a Markdown file any more (but
// for the lines of want that are meant to stay) and that every document
// and file link names something the import made.
func (im imported) resolves(t *testing.T, p string, stay ...string) {
	t.Helper()
	content := im.docs[p].Content
	for _, s := range stay {
		content = strings.ReplaceAll(content, s, "")
	}
	if m := leftLink.FindString(content); m != "" {
		t.Errorf("%s: a link was not rewritten: %q in\n%s", p, m, im.docs[p].Content)
	}
	for _, m := range append(docLink.FindAllStringSubmatch(content, -1), fileLink.FindAllStringSubmatch(content, -1)...) {
		if !im.ids[m[1]] {
			t.Errorf("%s: %s names nothing imported", p, m[0])
		}
	}
}

// TestImportAHugoAndMkDocsTree imports a site's content tree whose pages
// link with reference definitions, site-absolute paths (/docs/install/,
// /content/docs/guides/setup.md) and directory links, and say their
// summary, date, keywords and draft state in front matter: every link
// resolves to the imported document or file.
func TestImportAHugoAndMkDocsTree(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	im := importCorpus(t, s, ann, "hugo-site", transfer.Options{})
	var refused []string
	for _, r := range im.rep.Refused {
		refused = append(refused, r.Path)
	}
	if diff := cmp.Diff([]string{"LICENSE"}, refused); diff != "" {
		t.Errorf("refused (-want +got):\n%s\n%+v", diff, im.rep.Refused)
	}
	if len(im.docs) != 5 {
		t.Fatalf("%d documents: %+v", len(im.docs), im.rep)
	}
	for p := range im.docs {
		im.resolves(t, p, "[not a link]: inside code.md", "[install]: not/a/definition.md")
	}
	id := func(p string) string { return im.docs["content/"+p].ID }
	home := im.docs["content/_index.md"]
	for _, want := range []string{
		"[installation][install]", "[guides](/documents/" + id("docs/guides/_index.md") + ")",
		"[whole documentation](/documents/" + id("docs/_index.md") + ")",
		"[setup page](/documents/" + id("docs/guides/setup.md") + "#first-steps)",
		"[project site](https://example.org/)",
		`[install]: /documents/` + id("docs/install.md") + ` "Installing"`,
	} {
		if !strings.Contains(home.Content, want) {
			t.Errorf("home lacks %q:\n%s", want, home.Content)
		}
	}
	if !strings.Contains(im.docs["content/docs/_index.md"].Content, "[Back home](/documents/"+home.ID+")") {
		t.Errorf("a link to the site's home:\n%s", im.docs["content/docs/_index.md"].Content)
	}
	install := im.docs["content/docs/install.md"]
	if !strings.Contains(install.Content, "[setup]: /documents/"+id("docs/guides/setup.md")+"#first-steps") ||
		!fileLink.MatchString(install.Content) {
		t.Errorf("install:\n%s", install.Content)
	}
	// The title is not repeated as the first heading, ATX or setext.
	for _, p := range []string{"content/_index.md", "content/docs/install.md", "content/docs/guides/setup.md"} {
		if d := im.docs[p]; strings.Contains(d.Content, "# "+d.Title+"\n") || strings.HasPrefix(d.Content, d.Title+"\n=") {
			t.Errorf("%s repeats its title:\n%s", p, d.Content)
		}
	}
	setup := im.docs["content/docs/guides/setup.md"]
	if !strings.HasPrefix(setup.Content, "## First steps") {
		t.Errorf("setup:\n%s", setup.Content)
	}
	// description, date, keywords, draft.
	type meta struct {
		Summary, Status string
		Created         time.Time
		Tags            []string
	}
	got := map[string]meta{}
	for p, d := range im.docs {
		got[p] = meta{d.Summary, d.Status, d.CreatedAt, d.Tags}
	}
	want := map[string]meta{
		"content/_index.md":      {"The start page of the handbook.", "published", time.Date(2021, 3, 4, 10, 0, 0, 0, time.UTC), []string{}},
		"content/docs/_index.md": {"", "published", time.Date(2021, 3, 5, 0, 0, 0, 0, time.UTC), []string{"handbook", "docs"}},
		"content/docs/install.md": {"How to install it.", "published", time.Date(2021, 3, 6, 0, 0, 0, 0, time.UTC),
			[]string{"setup", "install"}},
		"content/docs/guides/_index.md": {"", "published", s.now, []string{}},
		"content/docs/guides/setup.md":  {"", "draft", s.now, []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("front matter (-want +got):\n%s", diff)
	}
}

// TestImportAnObsidianVault imports a vault whose notes link with
// [[wikilinks]] by name, by path, with labels and headings, and embed a
// file: each becomes a Markdown link to the document or the file; a
// wikilink to no note, and those in code, stay text.
func TestImportAnObsidianVault(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	im := importCorpus(t, s, ann, "obsidian-vault", transfer.Options{})
	if len(im.docs) != 5 {
		t.Fatalf("%d documents: %+v", len(im.docs), im.rep)
	}
	home := im.docs["Home.md"]
	for p := range im.docs {
		im.resolves(t, p, "[[Nowhere]]", "[[Apollo]] in a fence", "`code with [[Apollo]]`")
	}
	id := func(p string) string { return im.docs[p].ID }
	for _, want := range []string{
		"[Projects/Apollo](/documents/" + id("Projects/Apollo.md") + ")",
		"[goals](/documents/" + id("Projects/Apollo.md") + "#h-goals)",
		"[notes](/documents/" + id("Meeting notes.md") + ")",
		"[2026-11-01](/documents/" + id("Daily/2026-11-01.md") + ")",
		"[area.sub](/documents/" + id("area.sub.md") + ")",
		"![diagram.png](/api/documentation/attachments/",
		"A link to nothing: [[Nowhere]] stays text.",
	} {
		if !strings.Contains(home.Content, want) {
			t.Errorf("home lacks %q:\n%s", want, home.Content)
		}
	}
	if home.Title != "Home" || strings.HasPrefix(home.Content, "# Home") {
		t.Errorf("home: %q\n%s", home.Title, home.Content)
	}
	apollo := im.docs["Projects/Apollo.md"].Content
	for _, want := range []string{
		"[Home](/documents/" + id("Home.md") + ")",
		"[Meeting notes > Decisions](/documents/" + id("Meeting notes.md") + "#h-decisions)",
		"![the diagram](/api/documentation/attachments/",
	} {
		if !strings.Contains(apollo, want) {
			t.Errorf("Apollo lacks %q:\n%s", want, apollo)
		}
	}
	if !strings.Contains(im.docs["Meeting notes.md"].Content, "| Ann | [the project](/documents/"+id("Projects/Apollo.md")+") |") {
		t.Errorf("table:\n%s", im.docs["Meeting notes.md"].Content)
	}
	if !strings.Contains(im.docs["area.sub.md"].Content, "[area.sub > ^block1](/documents/"+id("area.sub.md")+")") {
		t.Errorf("block reference:\n%s", im.docs["area.sub.md"].Content)
	}
}

// TestImportAZipOfZips imports a Notion-style export, a zip of Part-1.zip
// and Part-2.zip: their files are imported as if unpacked in place (links
// between the parts resolve); a zip inside those is a file like any other,
// and an inner zip that is not one is refused by name.
func TestImportAZipOfZips(t *testing.T) {
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	deeper := zipOf(t, [][2]string{{"Hidden.md", "three levels down"}})
	part1 := zipOf(t, [][2]string{
		{"Export/Alpha 1a2b.md", "# Alpha\n\nSee [Beta](Beta%203c4d.md)."},
		{"Export/deeper.zip", string(deeper)},
	})
	part2 := zipOf(t, [][2]string{{"Export/Beta 3c4d.md", "# Beta\n\nBack to [Alpha](Alpha%201a2b.md)."}})
	rep := s.importZip(ann, zipOf(t, [][2]string{
		{"Part-1.zip", string(part1)},
		{"Part-2.zip", string(part2)},
		{"more/Part-3.zip", string(zipOf(t, [][2]string{{"Gamma.md", "under the zip's directory"}}))},
		{"junk.zip", "not a zip at all"},
	}), "")
	got := map[string]string{}
	for _, c := range rep.Created {
		d, err := s.docs.Get(context.Background(), ann, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		got[c.Path] = d.Title + ": " + docLink.ReplaceAllString(d.Content, "/documents/ID")
	}
	want := map[string]string{
		"Export/Alpha 1a2b.md": "Alpha: See [Beta](/documents/ID).",
		"Export/Beta 3c4d.md":  "Beta: Back to [Alpha](/documents/ID).",
		"more/Gamma.md":        "Gamma: under the zip's directory",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documents (-want +got):\n%s\n%+v", diff, rep)
	}
	refused := map[string]string{}
	for _, r := range rep.Refused {
		refused[r.Path] = r.Reason
	}
	if !strings.Contains(refused["junk.zip"], "not a zip archive") || !strings.Contains(refused["Export/deeper.zip"], "not a Markdown file") ||
		len(refused) != 2 {
		t.Errorf("refused %v", refused)
	}
}
