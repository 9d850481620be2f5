// Package transfer moves a team's documents in and out of quire (product.md
// section 16): an export is a zip of Markdown files with YAML front matter,
// folders as directories, links between the documents rewritten to relative
// paths; an import reads such a zip (or a directory, from the CLI), Obsidian
// vaults and other wikis' Markdown exports included, and makes folders and
// documents of it, rewriting the relative links between its files back to
// document links.
//
// Both directions stream: an export holds one page of documents at a time
// (and the path of each, to rewrite links), an import one file at a time.
// An archive is untrusted input: each entry is checked on its own (its
// name, its kind, its size as read, not as declared, its encoding, its
// front matter) and refused alone with its reason; the rest is imported.
package transfer

import (
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"quire/attachments"
	"quire/documents"
)

// Limits of an import.
const (
	// MaxArchive is the size of an uploaded archive.
	MaxArchive = 256 << 20
	// MaxFiles is the number of entries an archive may hold.
	MaxFiles = 10000
	// MaxFile is the size of one Markdown file (the request body limit of
	// a document).
	MaxFile = 2 << 20
	// MaxTotal is what an archive may unpack to, in all.
	MaxTotal = 1 << 30
	// MaxRatio is how much larger than its compressed size an entry may
	// unpack to, once past minRatioCheck bytes: beyond is a zip bomb.
	MaxRatio      = 100
	minRatioCheck = 1 << 20
	// MaxDepth is how many directories deep a file may be, and MaxPath how
	// long its name: each directory may become a folder.
	MaxDepth = 32
	MaxPath  = 1024
	// maxFrontMatter bounds the front matter read of one file.
	maxFrontMatter = 64 << 10
)

// Service imports and exports over the documents service, and the files
// of documents over the attachments service.
type Service struct {
	docs  *documents.Service
	files *attachments.Service // nil: no files in or out
	// publicURL is the base under which absolute document links are
	// recognised ("" for relative links only).
	publicURL string
	// slots holds one token per import running (TryImport).
	slots chan struct{}
}

// MaxImports is how many imports one Service lets run at once: quire serve
// makes one Service, which the API and the Import page share, so that the
// limit is the node's. An import holds its slot from its first byte
// received to its answer: the archive spooled (up to MaxArchive of disk
// each), then read and saved.
const MaxImports = 2

// TryImport takes a slot for one import, without waiting: ok is false when
// MaxImports imports are running already. release frees the slot; call it
// once, when the import has answered.
func (s *Service) TryImport() (release func(), ok bool) {
	select {
	case s.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-s.slots }) }, true
	default:
		return nil, false
	}
}

// New returns the service; publicURL is quire's public URL, under which
// links to documents are also recognised.
// The first call of a process also sweeps the spool folders that crashed
// processes left (SpoolDir).
func New(d *documents.Service, files *attachments.Service, publicURL string) *Service {
	SpoolDir() // an error is an import's, when it spools
	return &Service{docs: d, files: files, publicURL: strings.TrimRight(publicURL, "/"), slots: make(chan struct{}, MaxImports)}
}

// safeName makes a title or folder name a file name that every common
// file system accepts: no separators or reserved characters, no control
// characters, no leading or trailing dots and spaces, at most 100 bytes.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '/' || r == '\\' || r == ':' || r == '*' || r == '?' || r == '"' || r == '<' || r == '>' || r == '|':
			b.WriteRune('-')
		case unicode.IsControl(r) || r == utf8.RuneError:
		default:
			b.WriteRune(r)
		}
	}
	out := strings.Trim(b.String(), " .")
	if len(out) > 100 {
		cut := 100
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimRight(out[:cut], " .")
	}
	if out == "" {
		out = "Untitled"
	}
	return out
}

// uniqueName returns name (in dir) or, when used already, name (2), (3)...
// before the extension; it records the one returned.
func uniqueName(used map[string]bool, dir, name, ext string) string {
	p := path.Join(dir, name+ext)
	for i := 2; used[strings.ToLower(p)]; i++ {
		p = path.Join(dir, name+" ("+strconv.Itoa(i)+")"+ext)
	}
	used[strings.ToLower(p)] = true
	return p
}
