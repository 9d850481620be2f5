package documents

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"quire"
	"quire/textsearch"
)

// Paging bounds of a list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// MaxTagFilter bounds the tags of a list filter, as of a document.
	MaxTagFilter = MaxTags
	// maxOffset caps the offset handed to a store: no database here holds
	// that many documents, so every page past it is empty anyway, and no
	// page number can overflow an offset.
	maxOffset = math.MaxInt32
)

// SortKeys are the orders a list accepts (camelCase spellings of the time
// keys are accepted on the wire too).
var SortKeys = []string{"updated_at", "created_at", "title", "status", "relevance"}

// ListParams selects a page of documents. The zero value is the first page
// of 20, newest change first.
type ListParams struct {
	Page, Limit    int      // 0: defaults (1, 20); Limit above 100 is clamped
	Status         string   // "" for any
	Visibility     string   // "" for any
	Search         string   // words; "" for none
	Tags           []string // all must be carried (case-insensitive)
	DepartmentID   string
	FolderID       string
	Subfolders     bool // FolderID and every folder below it
	ProjectID      string
	SortBy         string // one of SortKeys; "" for updated_at, or relevance with a search
	Asc            bool   // ascending instead of the default descending
	IncludeContent bool
}

// Page is one page of a list, with its pagination.
type Page struct {
	Documents   []quire.Document
	CurrentPage int
	Limit       int
	Total       int
	TotalPages  int
	HasMore     bool
	// Highlights, with a search, say why each document matched (one per
	// document, in the same order); nil without a search.
	Highlights []textsearch.Highlight
}

// ParseListQuery reads the query parameters of a list (contract section 5,
// "List"). An absent parameter, or one sent empty, takes its default; when a
// parameter is repeated the first value counts. Every invalid parameter is
// named in one VALIDATION_ERROR. Any characters are accepted in the free
// text of search and tags, NUL included (contract section 5: searched
// literally); in the other parameters a NUL makes a value that is not
// allowed, refused as any other.
func ParseListQuery(q url.Values) (ListParams, error) {
	var p ListParams
	errs := fieldErrors{}
	get := queryGetter(q, errs)
	p.Page, p.Limit = parsePaging(get, errs)
	p.Status = get("status")
	p.Visibility = get("visibility")
	p.Search = get("search")
	if v := get("tags"); v != "" {
		p.Tags = strings.Split(v, ",")
	}
	p.DepartmentID = get("departmentId")
	p.FolderID = get("folderId")
	p.ProjectID = get("projectId")
	switch v := get("sortBy"); v {
	case "updatedAt":
		p.SortBy = "updated_at"
	case "createdAt":
		p.SortBy = "created_at"
	default:
		p.SortBy = v
	}
	switch v := get("sortOrder"); v {
	case "", "desc":
	case "asc":
		p.Asc = true
	default:
		errs.add("sortOrder", "must be asc or desc")
	}
	switch v := get("includeSubfolders"); v {
	case "", "false", "0":
	case "true", "1":
		p.Subfolders = true
	default:
		errs.add("includeSubfolders", "must be true, false, 1 or 0")
	}
	switch v := get("includeContent"); v {
	case "", "false", "0":
	case "true", "1":
		p.IncludeContent = true
	default:
		errs.add("includeContent", "must be true, false, 1 or 0")
	}
	_, more := p.filter(quire.Visibility{})
	for k, v := range more {
		errs.add(k, v)
	}
	if err := errs.err(); err != nil {
		return ListParams{}, err
	}
	return p, nil
}

// queryGetter returns the first value of a query parameter, or "" after
// naming it in errs when it is not valid UTF-8 or holds a NUL.
func queryGetter(q url.Values, errs fieldErrors) func(name string) string {
	return func(name string) string {
		v := q.Get(name)
		if !utf8.ValidString(v) {
			errs.add(name, "must be valid UTF-8")
			return ""
		}
		return v
	}
}

// parsePaging reads page and limit as every list takes them: page an
// integer of at least 1, limit one from 1 up, clamped to MaxLimit. 0 means
// absent (the default).
func parsePaging(get func(string) string, errs fieldErrors) (page, limit int) {
	if v := get("page"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-"):
			errs.add("page", "is too large")
		case err != nil || n < 1:
			errs.add("page", "must be an integer of at least 1")
		default:
			page = int(n)
		}
	}
	if v := get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-"):
			limit = MaxLimit
		case err != nil || n < 1:
			errs.add("limit", fmt.Sprintf("must be an integer from 1 to %d", MaxLimit))
		default:
			limit = int(min(n, MaxLimit))
		}
	}
	return page, limit
}

// window turns a page and a limit (0: defaults) into the store's offset
// and limit.
func window(page, limit int) (offset, lim int) {
	if page < 1 {
		page = 1
	}
	if limit < 1 {
		limit = DefaultLimit
	}
	lim = min(limit, MaxLimit)
	return Offset(page, lim), lim
}

// Offset is the offset of page (from 1) of limit rows (limit >= 1), at
// most maxOffset, so that no page number overflows into a negative offset.
func Offset(page, limit int) int {
	if page-1 < maxOffset/limit {
		return (max(page, 1) - 1) * limit
	}
	return maxOffset
}

// filter checks p and turns it into the store's filter for vis. It returns
// the invalid fields, named as on the wire.
func (p ListParams) filter(vis quire.Visibility) (quire.DocumentFilter, fieldErrors) {
	errs := fieldErrors{}
	f := quire.DocumentFilter{
		Visibility:     vis,
		Desc:           !p.Asc,
		IncludeContent: p.IncludeContent,
	}
	f.Offset, f.Limit = window(p.Page, p.Limit)
	// Without a folder there is nothing to widen.
	f.Subfolders = p.Subfolders && p.FolderID != ""
	if p.Status != "" && oneOf(errs, "status", p.Status, quire.Statuses) {
		f.Status = p.Status
	}
	if p.Visibility != "" && oneOf(errs, "visibility", p.Visibility, quire.Visibilities) {
		f.VisibilityIs = p.Visibility
	}
	if search := strings.TrimSpace(p.Search); search != "" {
		if msg := checkSearch(search); msg != "" {
			errs.add("search", msg)
		}
		f.Search = search
	}
	// A tag with a NUL in it is kept: no document carries one (their tags
	// are refused with it), so it simply matches nothing.
	for _, t := range p.Tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if !utf8.ValidString(t) {
			errs.add("tags", "must be valid UTF-8")
			continue
		}
		if t != "" && !slices.Contains(f.Tags, t) {
			f.Tags = append(f.Tags, t)
		}
	}
	if len(f.Tags) > MaxTagFilter {
		errs.add("tags", fmt.Sprintf("must name at most %d tags", MaxTagFilter))
	}
	for _, ref := range []struct {
		name string
		id   string
		to   *string
	}{
		{"departmentId", p.DepartmentID, &f.DepartmentID},
		{"folderId", p.FolderID, &f.FolderID},
		{"projectId", p.ProjectID, &f.ProjectID},
	} {
		if ref.id == "" {
			continue
		}
		if !validID(ref.id) {
			errs.add(ref.name, "must be an id")
		}
		*ref.to = ref.id
	}
	switch {
	case p.SortBy == "" || p.SortBy == "relevance":
		// Relevance means something only with a search; without one, the
		// default order applies.
		f.SortBy = "updated_at"
		if f.Search != "" {
			f.SortBy = "relevance"
		}
	case slices.Contains(SortKeys, p.SortBy):
		f.SortBy = p.SortBy
	default:
		errs.add("sortBy", "must be one of updated_at, created_at, title, status, relevance")
	}
	return f, errs
}

// checkSearch bounds a search so that its query stays cheap, and returns
// the failure message for the parameter "search", if any. Words are counted
// as the stores split them: runs of letters and digits with their combining
// marks, everything else (NUL too) separating words. The stores search the
// text literally; a search without any word matches no document.
func checkSearch(search string) string {
	if !utf8.ValidString(search) {
		return "must be valid UTF-8"
	}
	if utf8.RuneCountInString(search) > quire.MaxSearchLength {
		return fmt.Sprintf("must be at most %d characters", quire.MaxSearchLength)
	}
	words := 0
	for _, w := range strings.FieldsFunc(search, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	}) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			words++
		}
	}
	if words > quire.MaxSearchWords {
		return fmt.Sprintf("must have at most %d words", quire.MaxSearchWords)
	}
	return ""
}

// List returns one page of the documents the actor can see.
func (s *Service) List(ctx context.Context, a quire.Actor, p ListParams) (*Page, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	f, errs := p.filter(visibility(a))
	if err := errs.err(); err != nil {
		return nil, err
	}
	if f.Search != "" && !f.IncludeContent {
		f.ContentPrefix = textsearch.ContentWindow
	}
	docs, total, err := s.store.ListDocuments(ctx, f)
	if err != nil {
		return nil, err
	}
	page := newPage(docs, p.Page, f.Limit, total)
	if f.Search != "" {
		// Computed here, once for both stores, from the page alone: each
		// costs at most ContentWindow characters of its document.
		q := textsearch.NewQuery(f.Search)
		page.Highlights = make([]textsearch.Highlight, len(page.Documents))
		for i := range page.Documents {
			d := &page.Documents[i]
			page.Highlights[i] = q.Highlight(d.Title, d.Summary, d.Content)
			if !f.IncludeContent {
				d.Content = ""
			}
		}
	}
	return page, nil
}

// newPage is one page of docs, page (0: the first) of the ones of total.
func newPage(docs []quire.Document, page, limit, total int) *Page {
	if docs == nil {
		docs = []quire.Document{}
	}
	page = max(page, 1)
	totalPages := (total + limit - 1) / limit
	return &Page{
		Documents:   docs,
		CurrentPage: page,
		Limit:       limit,
		Total:       total,
		TotalPages:  totalPages,
		HasMore:     page < totalPages,
	}
}
