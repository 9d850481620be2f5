package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/documents"
	"quire/wire"
)

// personJSON is {id, name}: a document's owner or a version's author.
type personJSON = wire.Person

// documentOut is DOCUMENT of contract section 5 (package wire).
type documentOut = wire.Document

// documentJSON renders d as DOCUMENT, with its content when withContent is
// set. The error writer renders the document of a conflict with it too.
func documentJSON(d *quire.Document, withContent bool) any { return wire.DocumentOf(d, withContent) }

// etag is wire.ETag: the strong validator of a document's current state.
func etag(d *quire.Document) string { return wire.ETag(d) }

// parseETag reads one entity-tag of etag's form and returns its instant.
func parseETag(s string) (time.Time, bool) {
	s, ok := strings.CutPrefix(s, `"`)
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(s, `"`)
	if !ok {
		return time.Time{}, false
	}
	version, micros, ok := strings.Cut(s, "-")
	if !ok || !digits(version) || !digits(micros) {
		return time.Time{}, false
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMicro(us).UTC(), true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stale is a guard that matches no document: a store refuses it with
// DOCUMENT_CONFLICT and the current document, which is the answer to a
// precondition that cannot hold.
var stale = time.Date(1, time.January, 1, 0, 0, 0, 1000, time.UTC)

// guardOf combines baseUpdatedAt (from the body, raw) and If-Match into the
// one guard the conflict check takes; zero means unguarded.
//
//   - baseUpdatedAt absent or null: no guard from it; not an RFC 3339
//     string: 400 VALIDATION_ERROR naming baseUpdatedAt.
//   - If-Match "*": no guard from it (the document must exist, as always).
//     Otherwise every entity-tag listed must be one of ours; a weak or
//     foreign one can never match the current state, so it is a conflict.
//   - When both are sent, or several tags are listed, they must name the
//     same instant; otherwise at least one is stale, so it is a conflict.
func guardOf(r *http.Request, base json.RawMessage) (time.Time, error) {
	var guards []time.Time
	if base != nil && !isNull(base) {
		var s string
		t, err := time.Time{}, json.Unmarshal(base, &s)
		if err == nil {
			t, err = time.Parse(time.RFC3339Nano, s)
		}
		if err != nil {
			return time.Time{}, quire.Invalid(map[string]string{"baseUpdatedAt": "must be an RFC 3339 timestamp, such as the updated_at last read"})
		}
		if t.IsZero() {
			t = stale
		}
		guards = append(guards, t)
	}
	if values := r.Header.Values("If-Match"); len(values) > 0 {
		wildcard := false
		var tags []time.Time
		for _, v := range values {
			for _, tag := range strings.Split(v, ",") {
				tag = strings.TrimSpace(tag)
				if tag == "*" {
					wildcard = true
					continue
				}
				t, ok := parseETag(tag)
				if !ok {
					t = stale
				}
				tags = append(tags, t)
			}
		}
		if !wildcard {
			if len(tags) == 0 {
				tags = append(tags, stale)
			}
			guards = append(guards, tags...)
		}
	}
	if len(guards) == 0 {
		return time.Time{}, nil
	}
	for _, g := range guards[1:] {
		if !g.Equal(guards[0]) {
			return stale, nil
		}
	}
	return guards[0], nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// field reads one member of a body: absent, null, or a value of type T
// (want names the type for the error message).
func field[T any](raw json.RawMessage, name, want string, errs map[string]string) documents.Field[T] {
	if raw == nil {
		return documents.Field[T]{}
	}
	if isNull(raw) {
		return documents.Null[T]()
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		errs[name] = "must be " + want
		return documents.Field[T]{}
	}
	return documents.Some(v)
}

// tagsField reads tags: an array whose every item is a string.
func tagsField(raw json.RawMessage, errs map[string]string) documents.Field[[]string] {
	items := field[[]*string](raw, "tags", "an array of strings", errs)
	if !items.Set || items.Null {
		return documents.Field[[]string]{Set: items.Set, Null: items.Null}
	}
	tags := make([]string, 0, len(items.Value))
	for _, t := range items.Value {
		if t == nil {
			errs["tags"] = "must be an array of strings"
			return documents.Field[[]string]{}
		}
		tags = append(tags, *t)
	}
	return documents.Some(tags)
}

// documentBody is the body of a create or an update. Members are kept raw
// so that absent, null and a value can be told apart, and a member of the
// wrong type is named in the error.
type documentBody struct {
	Title         json.RawMessage `json:"title"`
	Content       json.RawMessage `json:"content"`
	ContentType   json.RawMessage `json:"content_type"`
	Summary       json.RawMessage `json:"summary"`
	Status        json.RawMessage `json:"status"`
	Visibility    json.RawMessage `json:"visibility"`
	FolderID      json.RawMessage `json:"folder_id"`
	Tags          json.RawMessage `json:"tags"`
	DepartmentID  json.RawMessage `json:"department_id"`
	ProjectID     json.RawMessage `json:"project_id"`
	BaseUpdatedAt json.RawMessage `json:"baseUpdatedAt"`
}

// input reads the members; one of the wrong type is left absent and named
// in Invalid, so that the service reports it with every other failure.
func (b documentBody) input() documents.DocumentInput {
	errs := map[string]string{}
	const str = "a string"
	in := documents.DocumentInput{
		Title:        field[string](b.Title, "title", str, errs),
		Content:      field[string](b.Content, "content", str, errs),
		ContentType:  field[string](b.ContentType, "content_type", str, errs),
		Summary:      field[string](b.Summary, "summary", str, errs),
		Status:       field[string](b.Status, "status", str, errs),
		Visibility:   field[string](b.Visibility, "visibility", str, errs),
		FolderID:     field[string](b.FolderID, "folder_id", str, errs),
		Tags:         tagsField(b.Tags, errs),
		DepartmentID: field[string](b.DepartmentID, "department_id", str, errs),
		ProjectID:    field[string](b.ProjectID, "project_id", str, errs),
		Invalid:      errs,
	}
	if _, bad := errs["title"]; bad {
		in.Title = documents.Some("x") // reported as of the wrong type, not as missing
	}
	return in
}

// strictQuery parses the request's query string. r.URL.Query drops what
// it cannot decode; a parameter silently dropped would widen a list's
// answer, so a malformed query is refused.
func strictQuery(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, quire.Invalid(map[string]string{"query": "is not a valid query string"})
	}
	return q, nil
}

// paginationJSON is a list's "pagination" (contract section 5, "List").
type paginationJSON struct {
	CurrentPage int  `json:"currentPage"`
	Limit       int  `json:"limit"`
	Total       int  `json:"total"`
	TotalPages  int  `json:"totalPages"`
	HasMore     bool `json:"hasMore"`
}

func paginationOf(p *documents.Page) paginationJSON {
	return paginationJSON{CurrentPage: p.CurrentPage, Limit: p.Limit, Total: p.Total, TotalPages: p.TotalPages, HasMore: p.HasMore}
}

// searchResultOut is a document of a list with a search: DOCUMENT and its
// "highlight" (product.md section 14), escaped text with <mark> only.
type searchResultOut struct {
	documentOut
	Highlight highlightJSON `json:"highlight"`
}

type highlightJSON struct {
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

func handleDocumentList(d *documents.Service) authedFunc {
	return handlePage(documents.ParseListQuery,
		func(r *http.Request, a quire.Actor, p documents.ListParams) (*documents.Page, error) {
			return d.List(r.Context(), a, p)
		},
		func(page *documents.Page, i int, p documents.ListParams) any {
			out := wire.DocumentOf(&page.Documents[i], p.IncludeContent)
			if page.Highlights == nil {
				return out
			}
			h := page.Highlights[i]
			return searchResultOut{documentOut: out, Highlight: highlightJSON{Title: h.Title, Snippet: h.Snippet}}
		})
}

// viewQuery is the query of a read of documents: the actor's view level
// first (a caller without it learns nothing, not even that its query is
// bad), then the query, strictly.
func viewQuery(a quire.Actor, r *http.Request) (url.Values, error) {
	if err := documents.Require(a, quire.LevelView); err != nil {
		return nil, err
	}
	return strictQuery(r)
}

// handlePage answers one page of documents (a list, the trash, the
// backlinks) to a caller with view: the query as parse reads it, the page
// fetch returns for the actor, each document as render makes it, and the
// pagination.
func handlePage[P any](parse func(url.Values) (P, error),
	fetch func(r *http.Request, a quire.Actor, p P) (*documents.Page, error),
	render func(page *documents.Page, i int, p P) any) authedFunc {
	type response struct {
		Documents  []any          `json:"documents"`
		Pagination paginationJSON `json:"pagination"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := viewQuery(a, r)
		if err != nil {
			return err
		}
		p, err := parse(q)
		if err != nil {
			return err
		}
		page, err := fetch(r, a, p)
		if err != nil {
			return err
		}
		out := response{Documents: make([]any, len(page.Documents)), Pagination: paginationOf(page)}
		for i := range page.Documents {
			out.Documents[i] = render(page, i, p)
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

func handleDocumentGet(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		doc, err := d.Get(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		w.Header().Set("ETag", etag(doc))
		return writeJSON(w, http.StatusOK, map[string]any{"document": documentJSON(doc, true)})
	}
}

// handleWrite is the shape of a change that takes a JSON body: the
// actor's Writer first (the one check of the level, before the body is
// read, so that a viewer's bad body is 403), then the body, then the
// change, made under the request's idempotency key and answered as kind.
func handleWrite[B, T any](d *documents.Service, kind quire.ReplyKind,
	change func(wr documents.Writer, r *http.Request, body B) (T, error)) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		wr, err := d.Writer(a)
		if err != nil {
			return err
		}
		body, err := decode[B](w, r)
		if err != nil {
			return err
		}
		rp := quire.Reply{Kind: kind}
		result, err := change(wr.Keeping(keeping(r, rp)), r, body)
		if err != nil {
			return err
		}
		return reply(w, rp, result)
	}
}

func handleDocumentCreate(d *documents.Service) authedFunc {
	return handleWrite(d, quire.ReplyCreatedDocument, func(wr documents.Writer, r *http.Request, body documentBody) (*quire.Document, error) {
		return wr.Create(r.Context(), body.input())
	})
}

func handleDocumentUpdate(d *documents.Service) authedFunc {
	return handleWrite(d, quire.ReplySavedDocument, func(wr documents.Writer, r *http.Request, body documentBody) (*quire.Document, error) {
		guard, err := guardOf(r, body.BaseUpdatedAt)
		if err != nil {
			return nil, err
		}
		return wr.Update(r.Context(), r.PathValue("id"), body.input(), guard)
	})
}

func handleDocumentDelete(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		const msg = "Document deleted"
		if err := d.Keeping(keeping(r, quire.Reply{Kind: quire.ReplyMessage, Message: msg})).Delete(r.Context(), a, r.PathValue("id")); err != nil {
			return err
		}
		return reply(w, quire.Reply{Kind: quire.ReplyMessage, Message: msg}, nil)
	}
}

// versionOut is a version in the list; the detail adds the saved fields.
type versionOut struct {
	VersionNumber int          `json:"versionNumber"`
	Title         string       `json:"title"`
	Status        string       `json:"status"`
	CreatedAt     string       `json:"created_at"`
	CreatedBy     personJSON   `json:"created_by"`
	Authors       []personJSON `json:"authors"`
}

type versionDetailOut struct {
	versionOut
	Content     string   `json:"content"`
	ContentType string   `json:"content_type"`
	Summary     string   `json:"summary"`
	Visibility  string   `json:"visibility"`
	Tags        []string `json:"tags"`
	FolderID    *string  `json:"folder_id"`
}

// newVersionOut is v with its authors (none for a version not made from
// the live text).
func newVersionOut(v *quire.Version, authors []quire.Named) versionOut {
	out := versionOut{
		VersionNumber: v.Number,
		Title:         v.Title,
		Status:        v.Status,
		CreatedAt:     formatTime(v.CreatedAt),
		CreatedBy:     personJSON{ID: v.CreatedByID, Name: v.CreatedByName},
		Authors:       make([]personJSON, len(authors)),
	}
	for i, p := range authors {
		out.Authors[i] = personJSON{ID: p.ID, Name: p.Name}
	}
	return out
}

// versionNumber reads the {versionNumber} path segment: a positive integer
// in plain decimal. Anything else names no version: it returns 0, which the
// service answers with 404 after its permission check.
func versionNumber(r *http.Request) int {
	n, _ := positiveNumber(r.PathValue("versionNumber"))
	return n
}

func handleVersionList(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		vs, err := d.Versions(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		authors := map[int][]quire.Named{}
		if len(vs) > 0 {
			// Newest first: the numbers run from the last to the first.
			if authors, err = d.VersionAuthors(r.Context(), a, r.PathValue("id"), vs[len(vs)-1].Number, vs[0].Number); err != nil {
				return err
			}
		}
		out := make([]versionOut, len(vs))
		for i := range vs {
			out[i] = newVersionOut(&vs[i], authors[vs[i].Number])
		}
		return writeJSON(w, http.StatusOK, map[string]any{"versions": out})
	}
}

func handleVersionGet(d *documents.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		v, err := d.Version(r.Context(), a, r.PathValue("id"), versionNumber(r))
		if err != nil {
			return err
		}
		authors, err := d.VersionAuthors(r.Context(), a, r.PathValue("id"), v.Number, v.Number)
		if err != nil {
			return err
		}
		tags := v.Tags
		if tags == nil {
			tags = []string{}
		}
		return writeJSON(w, http.StatusOK, map[string]any{"version": versionDetailOut{
			versionOut:  newVersionOut(v, authors[v.Number]),
			Content:     v.Content,
			ContentType: v.ContentType,
			Summary:     v.Summary,
			Visibility:  v.Visibility,
			Tags:        tags,
			FolderID:    nullable(v.FolderID),
		}})
	}
}

func handleVersionRestore(d *documents.Service) authedFunc {
	type request struct {
		BaseUpdatedAt json.RawMessage `json:"baseUpdatedAt"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		wr, err := d.Writer(a) // the one check of the level, before the body is read
		if err != nil {
			return err
		}
		body, _, err := decodeOptional[request](w, r)
		if err != nil {
			return err
		}
		guard, err := guardOf(r, body.BaseUpdatedAt)
		if err != nil {
			return err
		}
		doc, err := wr.Keeping(keeping(r, quire.Reply{Kind: quire.ReplySavedDocument})).Restore(r.Context(), r.PathValue("id"), versionNumber(r), guard)
		if err != nil {
			return err
		}
		return reply(w, quire.Reply{Kind: quire.ReplySavedDocument}, doc)
	}
}

// positiveNumber reads a version number given by a caller: a positive
// integer in plain decimal of at most 9 digits, or ok false.
func positiveNumber(s string) (n int, ok bool) {
	if !digits(s) || s[0] == '0' || len(s) > 9 {
		return 0, false
	}
	n, _ = strconv.Atoi(s)
	return n, true
}

// handleVersionDiff compares two versions of a document (product.md
// section 14): {versionNumber} against the query's to, or the current
// version without it. A number that is not one is VALIDATION_ERROR; a
// version that does not exist, or a document the caller cannot see, 404.
func handleVersionDiff(d *documents.Service) authedFunc {
	type response struct {
		From    int      `json:"from"`
		To      int      `json:"to"`
		Unified string   `json:"unified"`
		Added   int      `json:"added"`
		Removed int      `json:"removed"`
		Fields  []string `json:"fields"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := viewQuery(a, r)
		if err != nil {
			return err
		}
		errs := map[string]string{}
		from, ok := positiveNumber(r.PathValue("versionNumber"))
		if !ok {
			errs["versionNumber"] = "must be a version number (an integer from 1)"
		}
		to := 0
		if s := q.Get("to"); q.Has("to") {
			if to, ok = positiveNumber(s); !ok {
				errs["to"] = "must be a version number (an integer from 1)"
			}
		}
		if len(errs) > 0 {
			return quire.Invalid(errs)
		}
		df, err := d.Diff(r.Context(), a, r.PathValue("id"), from, to)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, response{From: df.From, To: df.To, Unified: df.Unified,
			Added: df.Added, Removed: df.Removed, Fields: df.Fields})
	}
}

// handleBacklinkList lists the documents the caller can see that link to
// one it can see (product.md section 14), a page at a time as lists are.
func handleBacklinkList(d *documents.Service) authedFunc {
	return handlePage(documents.ParsePageQuery,
		func(r *http.Request, a quire.Actor, p documents.BacklinkParams) (*documents.Page, error) {
			return d.Backlinks(r.Context(), a, r.PathValue("id"), p)
		},
		func(page *documents.Page, i int, _ documents.BacklinkParams) any {
			return wire.DocumentOf(&page.Documents[i], false)
		})
}
