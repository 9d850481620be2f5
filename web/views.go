package web

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire"
)

//go:embed templates
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// views holds every page's template, parsed once, and the fingerprints of
// the static files.
type views struct {
	pages  map[string]*template.Template
	static map[string]string // file name → URL with a content fingerprint
}

// sharedViews is newViews, run once per process: the templates and the
// fingerprints depend on nothing but the embedded files, and a parsed
// template is safe for concurrent use, so every handler New makes shares
// them (a test process makes hundreds, and parsing took a fraction of a
// second each under the race detector).
var sharedViews = sync.OnceValues(newViews)

func newViews() (*views, error) {
	v := &views{pages: map[string]*template.Template{}, static: map[string]string{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		name := strings.TrimPrefix(p, "static/")
		v.static[name] = "/static/" + name + "?v=" + hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	funcs := template.FuncMap{
		"static": func(name string) (string, error) {
			u, ok := v.static[name]
			if !ok {
				return "", fmt.Errorf("no static file %q", name)
			}
			return u, nil
		},
		"when":         when,
		"whenISO":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"stamp":        stamp,
		"label":        label,
		"join":         strings.Join,
		"add":          func(a, b int) int { return a + b },
		"field":        func(m map[string]string, name string) fieldRef { return fieldRef{m, name} },
		"newByName":    func(kind, action string, fields map[string]string) newByName { return newByName{kind, action, fields} },
		"errID":        func(k string) string { return "err-" + k },
		"isPrivate":    func(vis string) bool { return vis == "private" },
		"eventDetails": eventDetails,
		"byCLI":        func(e quire.Event) bool { return e.Details["via"] == "cli" },
		"list3":        func() []string { return []string{"none", "view", "write"} },
		"ssoStartURL":  ssoStartURL, // sso.go
		"choices":      choices,
		"newPassword": func(fields map[string]string, minLength int, focus bool) newPassword {
			return newPassword{fields, minLength, focus}
		},
		"plain": plainChoices,
		"selectField": func(id, name, label string, fields map[string]string, empty string, choices []choice, selected string) selectField {
			return selectField{ID: id, Name: name, Label: label, Fields: fields, Empty: empty, Choices: choices, Selected: selected}
		},
	}
	pages, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	for _, p := range pages {
		name := path.Base(p)
		if name == "layout.html" || name == "partials.html" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").
			ParseFS(templateFS, "templates/layout.html", "templates/partials.html", p)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		v.pages[name] = t
	}
	return v, nil
}

// show renders page with data and status as a handler's last step: render
// answers (and logs) its own failures, so there is no error left to return.
func (s *server) show(w http.ResponseWriter, r *http.Request, status int, page string, data any) error {
	s.views.render(w, r, status, page, data, s.logger)
	return nil
}

// render executes page into a buffer first, so that a template failure is
// a clean 500 rather than half a page.
func (v *views) render(w http.ResponseWriter, r *http.Request, status int, page string, data any, logger *slog.Logger) {
	t, ok := v.pages[page]
	// A new buffer per page, not one from a pool: the bounded-work tests
	// count the bytes a page allocates, and a pool (which the race
	// detector empties at random) made that count depend on luck.
	buf := new(bytes.Buffer)
	var err error
	if !ok {
		err = fmt.Errorf("no page template %q", page)
	} else {
		err = t.ExecuteTemplate(buf, "layout", data)
	}
	if err != nil {
		logger.Error("web: render", "page", page, "path", r.URL.Path, "err", err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintln(w, "Internal server error")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if sn, ok := data.(styleNoncer); ok && sn.styleNonce() != "" {
		w.Header().Set("Content-Security-Policy", policyWithStyleNonce(sn.styleNonce()))
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	out := buf.Bytes()
	if s, ok := data.(streamer); ok {
		for _, p := range s.streamed() {
			if p.marker == "" {
				continue
			}
			i := bytes.Index(out, []byte(p.marker))
			if i < 0 {
				continue
			}
			w.Write(out[:i])
			bw := bufio.NewWriterSize(w, 64<<10)
			p.write(bw)
			bw.Flush()
			out = out[i+len(p.marker):]
		}
	}
	w.Write(out)
}

// A streamer is the data of a page with parts written straight into the
// response rather than through its template: the template prints each
// part's marker where the part goes. A part is written after the template
// succeeded and cannot fail, so a page is still whole or a clean 500.
// html/template prints a value through fmt, which copies it whole, into a
// buffer that grows by copying: for the 450 kB comments column of a page
// with 200 threads, that was most of the page's cost
// (BenchmarkDocumentPageWithThreads).
type streamer interface {
	streamed() []streamedPart
}

// streamedPart is one part of a streamer's page.
type streamedPart struct {
	marker template.HTML
	write  func(w *bufio.Writer)
}

// partMarker is the marker of streamed part n: an HTML comment with a
// process-wide random word in it, which no text a page shows can spell:
// what people write reaches a page escaped or sanitised, its comments
// dropped.
func partMarker(n int) template.HTML {
	return template.HTML("<!--part-" + markerWord + "-" + strconv.Itoa(n) + "-->")
}

var markerWord = func() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// fieldRef names one field of a form for the fieldError template.
type fieldRef struct {
	Fields map[string]string
	Name   string
}

// newPassword is what the newPassword partial shows: the fields of a new
// password, the first taking the focus when Focus is set.
type newPassword struct {
	Fields    map[string]string
	MinLength int
	Focus     bool
}

// selectField is what the selectField partial shows: a labelled select of
// a form with its error. Empty is the label of a first choice of "" (none
// when it is ""); the choice whose value is Selected is selected.
type selectField struct {
	ID, Name, Label string
	Fields          map[string]string
	Empty           string
	Choices         []choice
	Selected        string
}

// choice is one option of a select.
type choice struct{ Value, Label string }

// choices are the options of a select made of list: values (shown as label
// shows them), folders, projects, departments or roles.
func choices(list any) ([]choice, error) {
	var out []choice
	switch l := list.(type) {
	case []string:
		for _, v := range l {
			out = append(out, choice{v, label(v)})
		}
	case []folderOption:
		for _, f := range l {
			out = append(out, choice{f.ID, f.Label})
		}
	case []projectOption:
		for _, p := range l {
			out = append(out, choice{p.ID, p.Name})
		}
	case []quire.Department:
		for _, d := range l {
			out = append(out, choice{d.ID, d.Name})
		}
	case []quire.Role:
		for _, r := range l {
			out = append(out, choice{r.Key, r.Label})
		}
	default:
		return nil, fmt.Errorf("no choices of a %T", list)
	}
	return out, nil
}

// plainChoices are the options of a select of values shown as they are.
func plainChoices(values []string) []choice {
	out := make([]choice, 0, len(values))
	for _, v := range values {
		out = append(out, choice{v, v})
	}
	return out
}

// newByName is what the newByName partial shows: the card that creates a
// thing of a kind with only a name, posted to action.
type newByName struct {
	Kind   string
	Action string
	Fields map[string]string
}

// layout is what the frame of every page shows.
type layout struct {
	Title    string
	User     *quire.User // nil when signed out
	CanView  bool
	CanWrite bool
	Nav      string // the main section the page belongs to
	Flash    string // a confirmation, from the page's ?m= key
	Undo     string // after a delete: the document the flash's Undo restores
	Error    string // a message about the whole form
	Fields   map[string]string
	Loc      *time.Location // the reader's time zone
	// Bell shows the bell of notifications, with Unread, the reader's
	// number of unread ones (notify.go).
	Bell   bool
	Unread int
}

// section is layout for a page of the navigation's section nav.
func (s *server) section(r *http.Request, actor *quire.Actor, nav, title string) layout {
	l := s.layout(r, actor, title)
	l.Nav = nav
	return l
}

// layout builds the frame of a page for actor (nil when signed out).
func (s *server) layout(r *http.Request, actor *quire.Actor, title string) layout {
	q := r.URL.Query()
	l := layout{Title: title, Loc: time.UTC, Fields: map[string]string{}, Flash: flashes[q.Get("m")]}
	if id := q.Get("undo"); q.Get("m") == "deleted" && isID(id) {
		l.Undo = id
	}
	if actor != nil {
		u := actor.User
		l.User = &u
		l.CanView = actor.Can(quire.LevelView)
		l.CanWrite = actor.Can(quire.LevelWrite)
		if loc := location(u.Timezone); loc != nil {
			l.Loc = loc
		}
		s.bell(r, actor, &l)
	}
	return l
}

// locations caches time zones by name: pages are rendered in the reader's
// zone, and loading one parses the zone database.
var locations sync.Map

// location returns the zone named name, or nil when there is none.
func location(name string) *time.Location {
	if name == "" {
		return nil
	}
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	locations.Store(name, loc)
	return loc
}

// flashes are the confirmations a page shows after a redirect. Only these
// fixed texts are shown: nothing from the URL is echoed.
var flashes = map[string]string{
	"created":          "Document created.",
	"saved":            "Changes saved.",
	"unchanged":        "Nothing changed, so no new version was saved.",
	"restored":         "Version restored: it is now the current version.",
	"deleted":          "Document moved to the trash.",
	"untrashed":        "Document restored from the trash.",
	"purged":           "Document deleted for good.",
	"signed-out":       "You have signed out.",
	"password-reset":   "Your password has been reset. Sign in with your new password.",
	"password-set":     "Your password is set. You can sign in now.",
	"password-changed": "Password changed. Your other sessions were signed out.",
	"folder-created":   "Folder created.",
	"folder-saved":     "Folder saved.",
	"folder-deleted":   "Folder deleted.",
	"token-revoked":    "API token revoked. It no longer works.",
	"session-revoked":  "Session signed out.",
	"sessions-revoked": "Every other session was signed out.",
	"file-deleted":     "File deleted.",
	"passkey-added":    "Passkey added. You can sign in with it alone.",
	"passkey-renamed":  "Passkey renamed.",
	"passkey-removed":  "Passkey removed. It no longer signs you in.",
	"comment-added":    "Comment added.",
	"comment-saved":    "Comment saved.",
	"comment-deleted":  "Comment deleted.",
	"thread-resolved":  "Thread resolved. It is listed under Resolved.",
	"thread-reopened":  "Thread reopened.",
	"watching":         "You are watching this. You will be notified of its changes and comments.",
	"unwatched":        "You no longer watch this.",
	"marked-read":      "Notifications marked as read.",
}

// isID reports whether s has the form of the identifiers quire issues (a
// lower-case UUID), so that nothing else from a URL is put in a page.
func isID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
			return false
		}
	}
	return true
}

// when writes a time for a reader in loc, to the minute.
func when(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format(whenLayout)
}

// whenLayout is how when shows a time.
const whenLayout = "2 Jan 2006 15:04 MST"

// stamp is the exact form of a document's updated_at that a form sends
// back as baseUpdatedAt.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

// labels are the words shown for the values of document fields.
var labels = map[string]string{
	"draft": "Draft", "review": "In review", "published": "Published", "archived": "Archived",
	"private": "Private", "department": "Department", "project": "Project", "public": "Public",
	"markdown": "Markdown", "html": "HTML", "plain": "Plain text",
	"updated_at": "Last updated", "created_at": "Created", "title": "Title", "status": "Status", "relevance": "Relevance",
}

func label(v string) string {
	if l, ok := labels[v]; ok {
		return l
	}
	return v
}

// serveStatic serves the embedded static files. Their URLs carry a content
// fingerprint, so a browser may keep them long.
func (s *server) serveStatic() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if _, ok := s.views.static[name]; !ok {
			// No directory listings, no index.html fallbacks.
			var actor *quire.Actor
			if a, err := s.actor(r); err == nil {
				actor = &a
			}
			s.missing(w, r, actor)
			return
		}
		if r.URL.RequestURI() == s.views.static[name] {
			// The fingerprint names this content: it never changes.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "public, max-age=300")
		}
		files.ServeHTTP(w, r)
	})
}
