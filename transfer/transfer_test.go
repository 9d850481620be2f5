package transfer_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/attachments"
	"quire/documents"
	"quire/internal/sqlitetest"
	"quire/sqlite"
	"quire/transfer"
)

// space is one quire: a SQLite file, its documents service and a writer.
type space struct {
	t     testing.TB
	store *sqlite.DB
	docs  *documents.Service
	xfer  *transfer.Service
	files *attachments.Service
	now   time.Time
}

func newSpace(t testing.TB) *space {
	t.Helper()
	// In memory (package tmpfs): these tests are about archives, not
	// durability. A copy of a file migrated once for the process: under the
	// race detector the migrations take seconds, a copy a fraction of that.
	db, err := sqlite.Open(context.Background(), sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &space{t: t, store: db, now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	s.docs = documents.New(db, documents.Config{Now: func() time.Time { return s.now }})
	s.files = attachments.New(db, attachments.Config{Now: func() time.Time { return s.now }})
	s.xfer = transfer.New(s.docs, s.files, "https://quire.example.com")
	return s
}

// user creates a user of role named name and returns it as an actor.
func (s *space) user(email, name, role string) quire.Actor {
	s.t.Helper()
	r, err := s.store.Role(context.Background(), role)
	if err != nil {
		s.t.Fatal(err)
	}
	u := &quire.User{Email: email, Name: name, Role: *r, Status: quire.UserActive}
	if err := s.store.CreateUser(context.Background(), u); err != nil {
		s.t.Fatal(err)
	}
	return quire.Actor{User: *u}
}

func (s *space) folder(a quire.Actor, name, parent string) string {
	s.t.Helper()
	f, err := s.docs.CreateFolder(context.Background(), a, documents.FolderInput{Name: documents.Some(name), ParentID: documents.Some(parent)})
	if err != nil {
		s.t.Fatal(err)
	}
	return f.ID
}

func (s *space) doc(a quire.Actor, title, content, folder string, more func(*documents.DocumentInput)) *quire.Document {
	s.t.Helper()
	s.now = s.now.Add(time.Minute)
	in := documents.DocumentInput{Title: documents.Some(title), Content: documents.Some(content), FolderID: documents.Some(folder)}
	if more != nil {
		more(&in)
	}
	d, err := s.docs.Create(context.Background(), a, in)
	if err != nil {
		s.t.Fatal(err)
	}
	return d
}

func (s *space) attach(a quire.Actor, docID, name string, content []byte) *quire.Attachment {
	s.t.Helper()
	u, err := s.files.Spool(bytes.NewReader(content), name)
	if err != nil {
		s.t.Fatal(err)
	}
	defer u.Close()
	at, err := s.files.Create(context.Background(), a, docID, u)
	if err != nil {
		s.t.Fatal(err)
	}
	return at
}

func (s *space) export(a quire.Actor, folder string) []byte {
	s.t.Helper()
	var buf bytes.Buffer
	if err := s.xfer.Export(context.Background(), a, folder, &buf); err != nil {
		s.t.Fatalf("export: %v", err)
	}
	return buf.Bytes()
}

func (s *space) importZip(a quire.Actor, zipped []byte, folder string) *transfer.Report {
	s.t.Helper()
	return s.importWith(a, zipped, transfer.Options{FolderID: folder})
}

func (s *space) importWith(a quire.Actor, zipped []byte, opts transfer.Options) *transfer.Report {
	s.t.Helper()
	rep, err := s.xfer.ImportZip(context.Background(), a, bytes.NewReader(zipped), int64(len(zipped)), opts)
	if err != nil {
		s.t.Fatalf("import: %v", err)
	}
	return rep
}

// files unpacks a zip into name -> content ("" for a directory).
func files(t *testing.T, zipped []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

// zipOf builds an archive of name -> content; a name ending in "@link"
// is stored as a symbolic link to content.
func zipOf(t testing.TB, entries [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// The fastest level: the tests' archives are large and repetitive
	// (20 MiB of one line, 200,000 entries), and deflate's default level
	// took a second of CPU under -race for no property of theirs.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	for _, e := range entries {
		name := e[0]
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if n, ok := strings.CutSuffix(name, "@link"); ok {
			h.Name = n
			h.SetMode(fs.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExportImportExportGivesTheSameFiles(t *testing.T) {
	t.Parallel()
	src := newSpace(t)
	ann := src.user("ann@example.com", "Ann Writer", "editor")
	guides := src.folder(ann, "Guides", "")
	deep := src.folder(ann, "Deep: nested/odd", guides)
	src.folder(ann, "Empty", "")
	target := src.doc(ann, "Install quire", "# Install\n\nRun it.\n", deep, func(in *documents.DocumentInput) {
		in.Tags = documents.Some([]string{"setup", "ops"})
		in.Status = documents.Some("published")
		in.Visibility = documents.Some("public")
		in.Summary = documents.Some(`How to "install", with quotes: and colons`)
	})
	// A screenshot stored as a file of the target, linked from its text.
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 3000)...)
	shot := src.attach(ann, target.ID, "shot.png", png)
	src.now = src.now.Add(time.Minute)
	if _, err := src.docs.Update(context.Background(), ann, target.ID, documents.DocumentInput{
		Content: documents.Some("# Install\n\nRun it.\n\n![shot](" + attachments.URL(shot.ID) + ")\n")}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	src.doc(ann, "Start here", "See [install](/documents/"+target.ID+"#run) and "+
		"[absolute](https://quire.example.com/documents/"+target.ID+") and <a href=\"/documents/"+target.ID+"\">html</a>.\n"+
		"Elsewhere: [site](https://example.org/x.md).\n", guides, nil)
	src.doc(ann, "Start here", "A second document of the same title.\n", guides, nil)
	src.doc(ann, "Top level", "No folder.\n", "", func(in *documents.DocumentInput) { in.ContentType = documents.Some("plain") })
	other := src.user("bob@example.com", "Bob", "editor")
	src.doc(other, "Bob's private note", "secret\n", "", nil) // private: not Ann's to export

	first := src.export(ann, "")
	got := files(t, first)
	names := slices.Sorted(maps.Keys(got))
	want := []string{"Empty/", "Guides/", "Guides/Deep- nested-odd/", "Guides/Deep- nested-odd/Install quire.files/shot.png",
		"Guides/Deep- nested-odd/Install quire.md", "Guides/Start here (2).md", "Guides/Start here.md", "Top level.md"}
	if !slices.Equal(names, want) {
		t.Fatalf("export holds %v, want %v", names, want)
	}
	// Which "Start here" got the plain name depends on their IDs (the walk's
	// order): find the one with the links.
	start := got["Guides/Start here.md"]
	if !strings.Contains(start, "[install]") {
		start = got["Guides/Start here (2).md"]
	}
	for _, link := range []string{"](Deep-%20nested-odd/Install%20quire.md#run)", "[absolute](Deep-%20nested-odd/Install%20quire.md)",
		`href="Deep-%20nested-odd/Install%20quire.md"`, "[site](https://example.org/x.md)"} {
		if !strings.Contains(start, link) {
			t.Errorf("the links were not rewritten to relative paths (%s):\n%s", link, start)
		}
	}
	install := got["Guides/Deep- nested-odd/Install quire.md"]
	if !strings.Contains(install, "![shot](Install%20quire.files/shot.png)") || got["Guides/Deep- nested-odd/Install quire.files/shot.png"] != string(png) {
		t.Errorf("the file is not beside its document, or its link not relative:\n%s", install)
	}
	for _, line := range []string{`id: "` + target.ID + `"`, `title: "Install quire"`, `status: "published"`, `visibility: "public"`,
		`tags: ["setup", "ops"]`, `summary: "How to \"install\", with quotes: and colons"`, `owner: "Ann Writer"`,
		"created_at: " + target.CreatedAt.Format("2006-01-02T15:04:05.000000Z")} {
		if !strings.Contains(install, line+"\n") {
			t.Errorf("front matter lacks %s:\n%s", line, install)
		}
	}

	// Into an empty quire, as an administrator of the same name: only an
	// administrator's import keeps the ids no document has (product.md
	// section 16), and with them the links.
	dst := newSpace(t)
	dst.now = src.now.Add(time.Hour)
	ann2 := dst.user("ann@example.org", "Ann Writer", "admin")
	rep := dst.importZip(ann2, first, "")
	if len(rep.Created) != 5 || len(rep.Updated) != 0 || len(rep.Refused) != 0 {
		t.Fatalf("import report %+v", rep)
	}
	second := dst.export(ann2, "")
	if diff := cmp.Diff(got, files(t, second)); diff != "" {
		t.Errorf("export, import, export changed the files (-first +second):\n%s", diff)
	}

	// An import of the same archive again updates every document in place.
	dst.now = dst.now.Add(time.Hour)
	rep = dst.importZip(ann2, first, "")
	if len(rep.Created) != 0 || len(rep.Updated) != 4 {
		t.Fatalf("second import %+v, want 4 updated", rep)
	}
	// The file was found already there, not stored twice.
	if fs, err := dst.files.List(context.Background(), ann2, target.ID); err != nil || len(fs) != 1 {
		t.Errorf("after a second import the document has %d files (%v), want 1", len(fs), err)
	}
}

func TestExportOfAFolder(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	f := s.folder(ann, "Team", "")
	sub := s.folder(ann, "Sub", f)
	s.doc(ann, "In team", "x", f, nil)
	s.doc(ann, "In sub", "y", sub, nil)
	s.doc(ann, "Outside", "z", "", nil)
	names := slices.Sorted(maps.Keys(files(t, s.export(ann, f))))
	if want := []string{"Team/", "Team/In team.md", "Team/Sub/", "Team/Sub/In sub.md"}; !slices.Equal(names, want) {
		t.Errorf("folder export %v, want %v", names, want)
	}
	var buf bytes.Buffer
	err := s.xfer.Export(context.Background(), ann, "0190b2a4-0000-7000-8000-000000000000", &buf)
	if quire.ErrorCode(err) != quire.ENOTFOUND || buf.Len() != 0 {
		t.Errorf("unknown folder: %v, %d bytes written", err, buf.Len())
	}
}

func TestHostileArchivesAreRefusedByName(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	big := strings.Repeat("a", transfer.MaxFile+1)
	bomb := strings.Repeat("\x00", 1536<<10) // 1.5 MiB of zeros: deflates about 1000 to 1
	archive := zipOf(t, [][2]string{
		{"good.md", "# Good one\n\nkept"},
		{"../escape.md", "x"},
		{"dir/../../escape2.md", "x"},
		{"/etc/passwd.md", "x"},
		{`dir\win.md`, "x"},
		{"C:/win.md", "x"},
		{"link.md@link", "/etc/passwd"},
		{"big.md", big},
		{"bomb.md", bomb},
		{"latin1.md", "caf\xe9"},
		{"bad\xffname.md", "x"},
		{"notyaml.md", "---\ntitle: [unclosed\n---\nbody"},
		{"unclosed.md", "---\ntitle: x\nbody without end"},
		{"tags.md", "---\ntags: {a: 1}\n---\nbody"},
		{"image.png", "\x89PNG"},
		{".obsidian/app.json", "{}"},
		{"__MACOSX/good.md", "x"},
		{"toolong.md", "---\ntitle: \"" + strings.Repeat("t", 400) + "\"\n---\n"},
		{strings.Repeat("d/", 40) + "deep.md", "x"},
	})
	rep := s.importZip(ann, archive, "")
	if len(rep.Created) != 1 || rep.Created[0].Path != "good.md" {
		t.Fatalf("created %+v, want good.md alone", rep.Created)
	}
	refused := map[string]string{}
	for _, r := range rep.Refused {
		refused[r.Path] = r.Reason
	}
	for name, reason := range map[string]string{
		"../escape.md":         "leaves the archive",
		"dir/../../escape2.md": "leaves the archive",
		"/etc/passwd.md":       "absolute",
		`dir\win.md`:           "backslash",
		"C:/win.md":            "absolute",
		"link.md":              "symbolic link",
		"big.md":               "larger than 2 MiB, the limit of one document: split it",
		"bomb.md":              "zip bomb",
		"latin1.md":            "not valid UTF-8",
		"bad\uFFFDname.md":     "name is not valid UTF-8",
		"notyaml.md":           "not YAML",
		"unclosed.md":          "no closing",
		"tags.md":              "tags are not a list",
		"image.png":            "not a Markdown file",
		".obsidian/app.json":   "hidden",
		"__MACOSX/good.md":     "hidden",
		"toolong.md":           "title",
	} {
		if got, ok := refused[name]; !ok || !strings.Contains(got, reason) {
			t.Errorf("%q: refused %v with %q, want a reason with %q", name, ok, got, reason)
		}
	}
	if len(rep.Refused) != 18 {
		t.Errorf("%d refusals, want 18: %+v", len(rep.Refused), rep.Refused)
	}
	// Nothing else was made: one document, no folder.
	page, err := s.docs.List(context.Background(), ann, documents.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 1 || page.Documents[0].Title != "Good one" {
		t.Errorf("the space holds %d documents: %+v", page.Total, page.Documents)
	}
	if fs, _ := s.docs.Folders(context.Background(), ann); len(fs) != 0 {
		t.Errorf("folders were made: %+v", fs)
	}
	if _, err := s.xfer.ImportZip(context.Background(), ann, strings.NewReader("not a zip"), 9, transfer.Options{}); quire.ErrorCode(err) != quire.EVALIDATION {
		t.Errorf("not a zip: %v", err)
	}
}

func TestImportHonoursFrontMatterTitlesAndIDs(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	bob := s.user("bob@example.com", "Bob", "editor")
	mine := s.doc(ann, "Mine", "old", "", nil)
	hidden := s.doc(bob, "Bob's", "private", "", nil) // Ann cannot see it
	archive := zipOf(t, [][2]string{
		{"update.md", "---\nid: " + mine.ID + "\ncreated_at: " + mine.CreatedAt.Format(time.RFC3339Nano) + "\ntitle: Mine, renamed\n---\nnew body"},
		{"hidden.md", "---\nid: " + hidden.ID + "\ntitle: Not Bob's\n---\nmine now"},
		{"notes/From heading.md", "intro\n\n```\n# not this\n```\n## The heading\n"},
		{"notes/File name only.md", "no heading here"},
		{"notes/dup.md", "---\nid: " + mine.ID + "\n---\nsecond file with the same id"},
		{"fm.md", "---\ntitle: Front\nstatus: published\nvisibility: public\ntags: a, b\naliases: [x]\n---\nbody"},
	})
	rep := s.importZip(ann, archive, "")
	if len(rep.Updated) != 1 || rep.Updated[0].ID != mine.ID {
		t.Fatalf("updated %+v, want %s", rep.Updated, mine.ID)
	}
	d, err := s.docs.Get(context.Background(), ann, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Mine, renamed" || d.Content != "new body" || d.Version != 2 {
		t.Errorf("updated document %+v", d)
	}
	byPath := map[string]string{}
	for _, c := range rep.Created {
		byPath[c.Path] = c.ID
	}
	if id := byPath["hidden.md"]; id == "" || id == hidden.ID {
		t.Errorf("an id Ann cannot see was reused: %q", id)
	}
	if b, _ := s.docs.Get(context.Background(), bob, hidden.ID); b.Title != "Bob's" {
		t.Errorf("Bob's document changed: %+v", b)
	}
	titles := map[string]string{}
	for p, id := range byPath {
		d, err := s.docs.Get(context.Background(), ann, id)
		if err != nil {
			t.Fatal(err)
		}
		titles[p] = d.Title
		if p == "fm.md" && (d.Status != "published" || d.Visibility != "public" || !slices.Equal(d.Tags, []string{"a", "b"})) {
			t.Errorf("front matter not honoured: %+v", d)
		}
	}
	want := map[string]string{"hidden.md": "Not Bob's", "notes/From heading.md": "The heading",
		"notes/File name only.md": "File name only", "fm.md": "Front"}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("titles (-want +got):\n%s", diff)
	}
	if len(rep.Refused) != 1 || rep.Refused[0].Path != "notes/dup.md" {
		t.Errorf("refused %+v, want the duplicate id", rep.Refused)
	}
}

// TestImportARealCorpus imports the documentation of go-yaml (vendored
// under testdata with its licence), which nobody here wrote: every file
// is imported, and every relative link from one of its Markdown files to
// another becomes a link to that file's document.
func TestImportARealCorpus(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	root := filepath.Join("testdata", "go-yaml-docs")
	rep, err := s.xfer.ImportDir(context.Background(), ann, root, transfer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mdFiles []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			mdFiles = append(mdFiles, filepath.ToSlash(rel))
		}
		return nil
	})
	ids := map[string]string{}
	for _, c := range rep.Created {
		ids[c.Path] = c.ID
	}
	for _, f := range mdFiles {
		if ids[f] == "" {
			t.Errorf("%s was not imported", f)
		}
	}
	for _, r := range rep.Refused {
		if strings.HasSuffix(r.Path, ".md") {
			t.Errorf("%s refused: %s", r.Path, r.Reason)
		}
	}
	// Every relative link between the corpus's Markdown files resolves.
	link := regexp.MustCompile(`\]\(([^)#\s]+\.md)(#[^)\s]*)?\)`)
	checked := 0
	for _, f := range mdFiles {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.docs.Get(context.Background(), ann, ids[f])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(raw), -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			target := path.Clean(path.Join(path.Dir(f), m[1]))
			id, ok := ids[target]
			if !ok {
				t.Errorf("%s links to %s, which is not in the corpus", f, target)
				continue
			}
			if !strings.Contains(d.Content, "](/documents/"+id+m[2]+")") {
				t.Errorf("%s: the link to %s was not rewritten to /documents/%s", f, m[1], id)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("only %d links checked: the corpus or the pattern changed", checked)
	}
	t.Logf("%d files imported, %d links between them checked", len(rep.Created), checked)
}

func TestImportStoresLinkedFilesWithTheirDocument(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	pic := append([]byte("GIF89a"), bytes.Repeat([]byte{1}, 100)...)
	archive := zipOf(t, [][2]string{
		{"img/pic.gif", string(pic)},
		{"notes/a.md", "# A\n![a pic](../img/pic.gif) and <img src=\"../img/pic.gif\">"},
		{"b.md", "# B\nthe same [picture](img/pic.gif#x)"},
		{"img/unused.gif", string(pic)},
		{"img/bomb.bin", strings.Repeat("\x00", 1536<<10)},
		{"c.md", "[bomb](img/bomb.bin)"},
	})
	rep := s.importZip(ann, archive, "")
	ids := map[string]transfer.Done{}
	for _, c := range rep.Created {
		ids[c.Path] = c
	}
	file, a, b := ids["img/pic.gif"], ids["notes/a.md"], ids["b.md"]
	if file.ID == "" || file.DocumentID != a.ID {
		t.Fatalf("the picture was not stored as a file of a.md: %+v", rep)
	}
	da, _ := s.docs.Get(context.Background(), ann, a.ID)
	db, _ := s.docs.Get(context.Background(), ann, b.ID)
	if url := attachments.URL(file.ID); !strings.Contains(da.Content, "![a pic]("+url+")") || !strings.Contains(da.Content, `src="`+url+`"`) ||
		!strings.Contains(db.Content, "[picture]("+url+"#x)") {
		t.Errorf("links not rewritten to the file:\n%s\n%s", da.Content, db.Content)
	}
	got, err := s.files.Get(context.Background(), ann, file.ID)
	if err != nil || got.Size != int64(len(pic)) || got.ContentType != "image/gif" {
		t.Errorf("stored file %+v, %v", got, err)
	}
	refused := map[string]string{}
	for _, r := range rep.Refused {
		refused[r.Path] = r.Reason
	}
	if !strings.Contains(refused["img/unused.gif"], "no Markdown file") || !strings.Contains(refused["img/bomb.bin"], "zip bomb") {
		t.Errorf("refusals %v", refused)
	}
}

func TestImportDirRefusesSymlinks(t *testing.T) {
	t.Parallel()
	s := newSpace(t)
	ann := s.user("ann@example.com", "Ann", "editor")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\nsee [b](b.md)"), 0o600)
	os.WriteFile(filepath.Join(dir, "b.md"), []byte("# B"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.md"))
	rep, err := s.xfer.ImportDir(context.Background(), ann, dir, transfer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Created) != 2 || len(rep.Refused) != 1 || !strings.Contains(rep.Refused[0].Reason, "symbolic link") {
		t.Fatalf("report %+v", rep)
	}
}

func FuzzImportZip(f *testing.F) {
	f.Add(zipOf(f, [][2]string{{"a.md", "---\ntitle: x\n---\n[b](b.md)"}, {"b.md", "# B"}}))
	f.Add([]byte("PK\x03\x04"))
	s := newSpace(f)
	ann := s.user("ann@example.com", "Ann", "editor")
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := s.xfer.ImportZip(context.Background(), ann, bytes.NewReader(data), int64(len(data)), transfer.Options{})
		if err != nil && quire.ErrorCode(err) != quire.EVALIDATION {
			t.Fatalf("import: %v", err)
		}
		if err == nil && rep == nil {
			t.Fatal("no report")
		}
	})
}
