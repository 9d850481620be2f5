package transfer

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"quire"
	"quire/attachments"
	"quire/documents"
)

// Done is a file imported as the document ID.
type Done struct {
	Path string `json:"path"`
	ID   string `json:"id"`
	// DocumentID is set for a file stored as a file of that document (ID
	// is then the file's).
	DocumentID string `json:"documentId,omitempty"`
}

// Refusal is a file not imported, and why.
type Refusal struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Report is what an import did with each file of the archive, in the
// archive's order.
type Report struct {
	Created []Done    `json:"created"`
	Updated []Done    `json:"updated"`
	Refused []Refusal `json:"refused"`
}

// entry is one file of an archive or a directory.
type entry struct {
	name       string
	dir        bool
	symlink    bool
	regular    bool
	compressed uint64 // 0 when unknown (a directory's file)
	open       func() (io.ReadCloser, error)
	refused    string // why it is refused before it is read (archive.go, nested.go)
}

// zipEntry is the archive's file f as an entry named name, refused for the
// reason refused ("" for none).
func zipEntry(f *zip.File, name, refused string) entry {
	mode := f.Mode()
	return entry{
		name:       name,
		dir:        mode.IsDir(),
		symlink:    mode&fs.ModeSymlink != 0,
		regular:    mode.IsRegular() || mode.Type() == 0,
		compressed: f.CompressedSize64,
		open:       f.Open,
		refused:    refused,
	}
}

// ErrNotZip is the refusal of an upload that is not a zip archive.
var ErrNotZip = quire.Invalid(map[string]string{"file": "is not a zip archive"})

// ImportZip imports the zip archive r of size bytes with the options opts.
//
// The archive is measured before it is read (archive.go): more than
// MaxFiles entries, or entries declaring more than MaxRatio times the
// archive's size in all, refuse it whole; entries sharing their bytes are
// refused by name.
func (s *Service) ImportZip(ctx context.Context, a quire.Actor, r io.ReaderAt, size int64, opts Options) (*Report, error) {
	if err := checkArchive(r, size); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// An insecure name is refused by entry below, with the others
		// imported; anything else is not a zip at all.
		return nil, ErrNotZip
	}
	if len(zr.File) > MaxFiles {
		return nil, checkArchive(r, size) // not reached: counted as archive/zip reads
	}
	overlaps := overlapping(zr.File)
	if err := checkExpansion(zr.File, overlaps, size); err != nil {
		return nil, err
	}
	entries := make([]entry, 0, len(zr.File))
	for i, f := range zr.File {
		entries = append(entries, zipEntry(f, f.Name, overlaps[i]))
	}
	entries, closeZips := expandZips(entries)
	defer closeZips()
	return s.importEntries(ctx, a, entries, opts, expansionBudget(size))
}

// ImportDir imports the files under the directory root (the CLI's import
// of a folder of Markdown, an Obsidian vault). Symbolic links are refused
// like any other entry that could lead outside it.
func (s *Service) ImportDir(ctx context.Context, a quire.Actor, root string, opts Options) (*Report, error) {
	var entries []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		e := entry{name: name, dir: d.IsDir(), symlink: d.Type()&fs.ModeSymlink != 0, regular: d.Type().IsRegular()}
		if e.dir {
			name += "/"
			e.name = name
		}
		e.open = func() (io.ReadCloser, error) {
			// Opened without following a link that replaced the file since
			// the walk: Lstat first.
			if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
				return nil, errors.New("is no longer a regular file")
			}
			return os.Open(p)
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", root, err)
	}
	return s.importEntries(ctx, a, entries, opts, 0)
}

// plan is a Markdown file that passed the first pass: its document ID
// (new, or one the actor sees and the import updates).
type plan struct {
	e        *entry
	path     string
	id       string
	existing bool
	fm       frontMatter // parsed once, on the first pass
}

// other is an entry that is not Markdown.
type other struct {
	e    *entry
	path string
	name string
}

// filePlan is a file a Markdown file links to: spooled on the first pass,
// stored as a file of its owner's document on the second, under id.
type filePlan struct {
	upload *attachments.Upload
	id     string
	owner  string // the path of the Markdown file that owns it
	name   string
	reused bool // an identical file of the document was there already
	done   bool
}

// reuseFiles points the files of pl that the document it updates has
// already (the same name and bytes: the same archive imported again) at
// those, so that they are not stored twice.
func (s *Service) reuseFiles(ctx context.Context, a quire.Actor, pl plan, files map[string]*filePlan) {
	have, err := s.files.List(ctx, a, pl.id)
	if err != nil {
		return
	}
	for _, f := range files {
		if f.owner != pl.path {
			continue
		}
		for _, h := range have {
			if h.Name == f.upload.Name && h.SHA256 == f.upload.SHA256 {
				f.id, f.reused = h.ID, true
				break
			}
		}
	}
}

// importer is the state of one import.
type importer struct {
	s        *Service
	a        quire.Actor
	opts     Options
	total    int64  // bytes unpacked so far
	budget   int64  // what the archive may unpack to (0: MaxTotal only)
	over     string // why the rest is refused: the archive passed its budget
	spoolDir string // the folder of this import's spooled files, made when needed
	report   Report
	folders  map[string]string // "<parent id>\x00<name>" -> folder id
	dirs     map[string]string // directory of the archive -> folder id
	// candidates are the documents of a folder that a file may match, by
	// folder id, read once per folder.
	candidates map[string][]quire.Document
}

// match returns the document that the file at p, of the given title, made
// when the same archive was imported before: in the folder its directory
// maps to, a document of the importer's (not claimed by another file of
// this archive) whose title is the title, or whose title is the file's
// name (as an export names it). "" when there is none.
func (im *importer) match(ctx context.Context, p, title string, claimed map[string]string) (string, error) {
	folder, ok := im.existingFolder(path.Dir(p))
	if !ok {
		return "", nil
	}
	list, ok := im.candidates[folder]
	if !ok {
		var err error
		if list, err = im.s.docs.ImportCandidates(ctx, im.a, folder); err != nil {
			return "", err
		}
		im.candidates[folder] = list
	}
	base := path.Base(p)
	base = strings.TrimSuffix(base, path.Ext(base))
	for _, d := range list {
		if _, taken := claimed[d.ID]; !taken && (d.Title == title || safeName(d.Title) == base) {
			return d.ID, nil
		}
	}
	return "", nil
}

// existingFolder returns the folder the archive's directory dir maps to
// when it exists already (nothing is made).
func (im *importer) existingFolder(dir string) (string, bool) {
	if dir == "." {
		dir = ""
	}
	if id, ok := im.dirs[dir]; ok {
		return id, true
	}
	parentDir, name := path.Split(dir)
	parent, ok := im.existingFolder(strings.TrimSuffix(parentDir, "/"))
	if !ok {
		return "", false
	}
	id, ok := im.folders[parent+"\x00"+name]
	return id, ok
}

func (s *Service) importEntries(ctx context.Context, a quire.Actor, entries []entry, opts Options, budget int64) (*Report, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	folderID := opts.FolderID
	folders, err := s.docs.Folders(ctx, a)
	if err != nil {
		return nil, err
	}
	im := &importer{s: s, a: a, opts: opts, budget: budget, folders: map[string]string{}, dirs: map[string]string{"": folderID},
		candidates: map[string][]quire.Document{}}
	defer im.removeSpool()
	found := folderID == ""
	for _, f := range folders {
		im.folders[f.ParentID+"\x00"+f.Name] = f.ID
		found = found || f.ID == folderID
	}
	if !found {
		return nil, quire.Invalid(map[string]string{"folderId": "does not exist"})
	}
	// Pass 1: check every entry, read each Markdown file's front matter,
	// and choose its document ID, so that pass 2 can rewrite the links
	// between the files before it saves each.
	var (
		plans     []plan
		emptyDirs []string
		others    []other
	)
	linkedBy := map[string]string{} // a file's path -> the Markdown file that owns it
	ids := map[string]string{}      // path -> document ID
	byID := map[string]string{}
	chosen := map[string]string{} // an id the archive names -> the document's, when another
	// Every file the links of the archive may name, known before the
	// first file is read: a link may name a file further on.
	ix := newArchiveIndex()
	for i := range entries[:min(len(entries), MaxFiles)] {
		if e := &entries[i]; !e.dir {
			if p, reason := checkName(e); reason == "" {
				ix.add(p)
			}
		}
	}
	seen := make(map[string]bool, min(len(entries), MaxFiles)) // the paths of files
	for i := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e := &entries[i]
		name := strings.ToValidUTF8(e.name, "\uFFFD")
		if i >= MaxFiles {
			im.refuse(name, "the archive holds more than "+strconv.Itoa(MaxFiles)+" files; the rest is not read")
			continue
		}
		if e.refused != "" {
			im.refuse(name, e.refused)
			continue
		}
		p, reason := checkName(e)
		if reason == "" {
			reason = e.refused
		}
		if reason != "" {
			im.refuse(name, reason)
			continue
		}
		if !e.dir {
			// A second file of the same path would be read, and spooled,
			// again for nothing: one name repeated is a bomb too.
			if seen[p] {
				im.refuse(name, "another entry of the archive has the same path")
				continue
			}
			seen[p] = true
		}
		if e.dir {
			// A directory is a folder, even an empty one (a tool's own,
			// hidden ones aside).
			if d := path.Clean(strings.TrimSuffix(e.name, "/")); !hidden(d) {
				emptyDirs = append(emptyDirs, d)
			}
			continue
		}
		if !isMarkdown(p) {
			others = append(others, other{e: e, path: p, name: name})
			continue
		}
		fmText, body, ok := im.readMarkdown(e, name, true)
		if !ok {
			continue
		}
		fm, err := parseFrontMatter(fmText)
		if err != nil {
			im.refuse(name, err.Error())
			continue
		}
		if other, dup := byID[fm.ID]; dup && fm.ID != "" {
			im.refuse(name, "its id is that of "+other+", also in the archive")
			continue
		}
		id, existing, err := s.docs.ImportTarget(ctx, a, fm.ID, fm.CreatedAt, im.opts.Operator)
		if err != nil {
			return nil, err
		}
		if !existing && id != fm.ID {
			// No id of its own: the document this file made when the
			// same archive was imported before, if any.
			match, err := im.match(ctx, p, titleOf(fm, body, p), byID)
			if err != nil {
				return nil, err
			}
			if match != "" {
				id, existing = match, true
			}
		}
		if fm.ID != "" && id != fm.ID {
			chosen[fm.ID] = id
		}
		if other, dup := byID[id]; dup {
			im.refuse(name, "its id is that of "+other+", also in the archive")
			continue
		}
		byID[id] = name
		if fm.ID != "" {
			byID[fm.ID] = name
		}
		ids[p] = id
		plans = append(plans, plan{e: e, path: p, id: id, existing: existing, fm: fm})
		// The files it links to are imported as its own (the first file
		// that links to one owns it).
		eachTarget(body, path.Dir(p), ix, func(target string) {
			if !isMarkdown(target) {
				if _, taken := linkedBy[target]; !taken {
					linkedBy[target] = p
				}
			}
		})
	}
	// The other files: those a Markdown file links to are spooled, to be
	// stored as files of that document; the rest are refused.
	files := map[string]*filePlan{} // path -> plan
	var fileOrder []string
	defer func() {
		for _, f := range files {
			f.upload.Close()
		}
	}()
	for _, o := range others {
		owner, linked := linkedBy[o.path]
		switch {
		case s.files == nil:
			im.refuse(o.name, "it is not a Markdown file (.md)")
		case !linked:
			im.refuse(o.name, "it is not a Markdown file (.md), and no Markdown file of the archive links to it")
		default:
			u, reason := im.spool(o.e, path.Base(o.path))
			if reason != "" {
				im.refuse(o.name, reason)
				continue
			}
			fileOrder = append(fileOrder, o.path)
			files[o.path] = &filePlan{upload: u, id: uuid.Must(uuid.NewV7()).String(), owner: owner, name: o.name}
		}
	}
	// Pass 2: make the directories' folders, then save each file, its
	// relative links to the others rewritten.
	for _, d := range emptyDirs {
		if _, err := im.folder(ctx, d); err != nil {
			if quire.ErrorCode(err) == "" {
				return nil, err
			}
			im.refuse(d+"/", "its folder could not be made: "+reasonOf(err))
		}
	}
	for _, pl := range plans {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := strings.ToValidUTF8(pl.e.name, "\uFFFD")
		_, body, ok := im.readMarkdown(pl.e, name, false)
		if !ok {
			continue
		}
		fm := pl.fm
		dir := path.Dir(pl.path)
		if pl.existing {
			s.reuseFiles(ctx, a, pl, files)
		}
		body = rewriteBody(body, dir, ix, func(target string) (string, bool, bool) {
			if f, ok := files[target]; ok {
				return attachments.URL(f.id), true, true
			}
			id, ok := ids[target]
			return "/documents/" + id, false, ok
		}, func(dest string) (string, bool) {
			// A link to a document by an id the archive names, which its
			// document did not keep.
			id, rest, ok := documentLink(dest, s.publicURL)
			if !ok || chosen[id] == "" {
				return "", false
			}
			return "/documents/" + chosen[id] + rest, true
		})
		folder, err := im.folder(ctx, dir)
		if err != nil {
			im.refuse(name, "its folder could not be made: "+reasonOf(err))
			continue
		}
		in := documentInput(fm, body, pl.path, folder)
		if !fm.quireExport() {
			in.Content = documents.Some(dropTitleHeading(body, in.Title.Value))
		}
		im.opts.apply(&in, fm, pl.existing, a)
		created := fm.CreatedAt
		if created.IsZero() {
			created = fm.Date
		}
		d, updated, err := s.docs.Import(ctx, a, pl.id, in, created, fm.UpdatedAt)
		if err != nil {
			if quire.ErrorCode(err) == "" {
				return nil, err // the store failed: not this file's fault
			}
			im.refuse(name, reasonOf(err))
			continue
		}
		if d.ID != pl.id {
			// The ID chosen on the first pass was taken meanwhile: the links
			// of the files saved before this one point nowhere. Rare enough
			// to report rather than repair.
			im.refuse(name, "imported as "+d.ID+", not the "+pl.id+" other files link to")
		}
		if updated {
			im.report.Updated = append(im.report.Updated, Done{Path: name, ID: d.ID})
		} else {
			im.report.Created = append(im.report.Created, Done{Path: name, ID: d.ID})
		}
		for _, fp := range fileOrder {
			f := files[fp]
			if f.owner != pl.path || f.done {
				continue
			}
			f.done = true
			if f.reused {
				continue
			}
			at, err := s.files.CreateWithID(ctx, a, d.ID, f.id, f.upload)
			if err != nil {
				if quire.ErrorCode(err) == "" {
					return nil, err
				}
				im.refuse(f.name, reasonOf(err))
				continue
			}
			im.report.Created = append(im.report.Created, Done{Path: f.name, ID: at.ID, DocumentID: d.ID})
		}
	}
	// The files of documents that were refused.
	for _, fp := range fileOrder {
		if f := files[fp]; !f.done {
			im.refuse(f.name, "the document that links to it was not imported")
		}
	}
	if im.report.Created == nil {
		im.report.Created = []Done{}
	}
	if im.report.Updated == nil {
		im.report.Updated = []Done{}
	}
	if im.report.Refused == nil {
		im.report.Refused = []Refusal{}
	}
	return &im.report, nil
}

func (im *importer) refuse(name, reason string) {
	im.report.Refused = append(im.report.Refused, Refusal{Path: name, Reason: reason})
}

// checkName returns the clean path of a file ("" for a directory) or why
// the entry is refused.
func checkName(e *entry) (string, string) {
	n := e.name
	switch {
	case !utf8.ValidString(n):
		return "", "its name is not valid UTF-8"
	case strings.ContainsRune(n, 0):
		return "", "its name holds a NUL byte"
	case strings.Contains(n, `\`):
		return "", "its name holds a backslash"
	case strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':'):
		return "", "its path is absolute"
	}
	segs := strings.Split(strings.TrimSuffix(n, "/"), "/")
	for _, seg := range segs {
		if seg == ".." {
			return "", "its path leaves the archive (..)"
		}
	}
	if len(n) > MaxPath || len(segs) > MaxDepth+1 {
		return "", "its path is longer than " + strconv.Itoa(MaxPath) + " bytes or deeper than " + strconv.Itoa(MaxDepth) + " directories"
	}
	if e.symlink {
		return "", "it is a symbolic link"
	}
	if e.dir {
		return "", ""
	}
	if !e.regular {
		return "", "it is not a regular file"
	}
	p := path.Clean(n)
	if hidden(p) {
		return "", "it is hidden (a tool's own file, such as .obsidian/ or .DS_Store): not imported"
	}
	return p, ""
}

// isMarkdown reports whether a path names a Markdown file.
func isMarkdown(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".md" || ext == ".markdown"
}

// hidden reports whether a path is, or is inside, a tool's own hidden file
// or directory.
func hidden(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if (strings.HasPrefix(seg, ".") && seg != ".") || seg == "__MACOSX" {
			return true
		}
	}
	return false
}

// readMarkdown reads a Markdown file as read does and splits off its front
// matter; when either refuses it, the refusal is recorded under name and ok
// is false.
func (im *importer) readMarkdown(e *entry, name string, count bool) (frontMatter, body string, ok bool) {
	text, reason := im.read(e, count)
	if reason != "" {
		im.refuse(name, reason)
		return "", "", false
	}
	frontMatter, body, err := splitFrontMatter(text)
	if err != nil {
		im.refuse(name, err.Error())
		return "", "", false
	}
	return frontMatter, body, true
}

// read reads a file whole, checking its size as read against MaxFile, the
// archive's total against its budget and MaxTotal (on the first pass),
// its ratio to its compressed size, and its encoding.
func (im *importer) read(e *entry, count bool) (string, string) {
	if im.over != "" {
		return "", im.over
	}
	rc, err := e.open()
	if err != nil {
		return "", "it could not be read: " + firstLine(err.Error())
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxFile+1))
	if err != nil {
		return "", "it could not be read: " + firstLine(err.Error())
	}
	n := int64(len(b))
	if count && im.count(n) {
		return "", im.over
	}
	if n > MaxFile {
		return "", "it is larger than " + strconv.Itoa(MaxFile>>20) + " MiB, the limit of one document: split it into smaller files (the rest of the archive is imported)"
	}
	if e.compressed > 0 && n > minRatioCheck && uint64(n) > e.compressed*MaxRatio {
		return "", "it unpacks to more than " + strconv.Itoa(MaxRatio) + " times its compressed size (a zip bomb)"
	}
	if !utf8.Valid(b) {
		return "", "it is not valid UTF-8 text"
	}
	return string(b), ""
}

// count adds n bytes unpacked to the archive's total and reports whether
// it passed MaxTotal or the archive's budget (im.over says which).
func (im *importer) count(n int64) bool {
	im.total += n
	switch {
	case im.total > MaxTotal:
		im.over = "the archive unpacks to more than " + strconv.Itoa(MaxTotal>>20) + " MiB; the rest is not read"
	case im.budget > 0 && im.total > im.budget:
		im.over = "the archive unpacks to more than " + strconv.Itoa(MaxRatio) + " times its size (a zip bomb); the rest is not read"
	}
	return im.over != ""
}

// spool reads a file that is not Markdown into an upload, under the
// limits of files and the archive's (its total, the bomb ratio), into
// this import's spool folder.
func (im *importer) spool(e *entry, name string) (*attachments.Upload, string) {
	if im.over != "" {
		return nil, im.over
	}
	if im.spoolDir == "" {
		dir, err := newSpool()
		if err != nil {
			return nil, "it could not be read: " + firstLine(err.Error())
		}
		im.spoolDir = dir
	}
	rc, err := e.open()
	if err != nil {
		return nil, "it could not be read: " + firstLine(err.Error())
	}
	defer rc.Close()
	g := &guard{im: im, e: e, r: rc}
	u, err := im.s.files.SpoolIn(im.spoolDir, g, name)
	switch {
	case g.reason != "":
		return nil, g.reason
	case quire.ErrorCode(err) == quire.EPAYLOADTOOLARGE:
		return nil, "it is larger than the limit of files, " + attachments.FormatSize(im.s.files.MaxUpload())
	case err != nil:
		return nil, "it could not be read: " + firstLine(err.Error())
	}
	return u, ""
}

// removeSpool removes this import's spool folder, and anything a failure
// left in it.
func (im *importer) removeSpool() {
	if im.spoolDir != "" {
		os.RemoveAll(im.spoolDir)
	}
}

// guard counts what an entry unpacks to and stops it past the archive's
// total or budget, or the bomb ratio.
type guard struct {
	im     *importer
	e      *entry
	r      io.Reader
	n      int64
	reason string
}

var errGuard = errors.New("refused")

func (g *guard) Read(p []byte) (int, error) {
	k, err := g.r.Read(p)
	g.n += int64(k)
	switch {
	case g.im.count(int64(k)):
		g.reason = g.im.over
		return k, errGuard
	case g.e.compressed > 0 && g.n > minRatioCheck && uint64(g.n) > g.e.compressed*MaxRatio:
		g.reason = "it unpacks to more than " + strconv.Itoa(MaxRatio) + " times its compressed size (a zip bomb)"
		return k, errGuard
	}
	return k, err
}

// folder returns the folder of the archive's directory dir, making the
// folders of its path that do not exist yet.
func (im *importer) folder(ctx context.Context, dir string) (string, error) {
	if dir == "." {
		dir = ""
	}
	if id, ok := im.dirs[dir]; ok {
		return id, nil
	}
	parentDir, name := path.Split(dir)
	parent, err := im.folder(ctx, strings.TrimSuffix(parentDir, "/"))
	if err != nil {
		return "", err
	}
	if id, ok := im.folders[parent+"\x00"+name]; ok {
		im.dirs[dir] = id
		return id, nil
	}
	f, err := im.s.docs.CreateFolder(ctx, im.a, documents.FolderInput{Name: documents.Some(name), ParentID: documents.Some(parent)})
	if err != nil {
		return "", err
	}
	im.folders[parent+"\x00"+f.Name] = f.ID
	im.dirs[dir] = f.ID
	return f.ID, nil
}

// titleOf is the title of the file at p: its front matter's, else its
// first heading's, else its file name.
func titleOf(fm frontMatter, body, p string) string {
	title := strings.TrimSpace(fm.Title)
	if title == "" {
		title = firstHeading(body)
	}
	if title == "" {
		base := path.Base(p)
		title = strings.TrimSuffix(base, path.Ext(base))
	}
	return title
}

// documentInput is the document a file makes: its front matter's fields
// where present, else the title of its first heading or its file name.
func documentInput(fm frontMatter, body, p, folder string) documents.DocumentInput {
	in := documents.DocumentInput{Content: documents.Some(body), FolderID: documents.Some(folder)}
	in.Title = documents.Some(titleOf(fm, body, p))
	if fm.Summary != "" {
		in.Summary = documents.Some(fm.Summary)
	} else if fm.Description != "" {
		in.Summary = documents.Some(fm.Description)
	}
	if fm.Status != "" {
		in.Status = documents.Some(fm.Status)
	}
	if fm.Visibility != "" {
		in.Visibility = documents.Some(fm.Visibility)
	}
	if fm.ContentType != "" {
		in.ContentType = documents.Some(fm.ContentType)
	}
	if fm.HasTags || len(fm.Keywords) > 0 {
		in.Tags = documents.Some(append(slices.Clone(fm.Tags), fm.Keywords...))
	}
	return in
}

// firstHeading is the text of the first ATX heading of a Markdown body
// outside fenced code, "" when there is none.
func firstHeading(body string) string {
	fence := ""
	for line := range strings.Lines(body) {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		if strings.HasPrefix(t, "#") {
			h := strings.TrimLeft(t, "#")
			if len(t)-len(h) <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t') {
				return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
			}
		}
	}
	return ""
}

// reasonOf is a refusal's message with the fields it names, as
// quire.Error spells them, without its code.
func reasonOf(err error) string {
	var e *quire.Error
	if !errors.As(err, &e) {
		return firstLine(err.Error())
	}
	return strings.TrimPrefix(e.Error(), e.Code+": ")
}
