package web

import (
	"html/template"
	"net/url"

	"quire"
	"quire/documents"
)

// docItem is a document as a list shows it: with a search, its highlight
// (product.md section 14), whose strings package textsearch built as
// escaped text with <mark> as the only markup, so they are shown as HTML.
type docItem struct {
	*quire.Document
	HighlightTitle   template.HTML
	HighlightSnippet template.HTML
	Highlighted      bool
}

// docItems pairs the documents of page with their highlights.
func docItems(page *documents.Page) []docItem {
	items := make([]docItem, len(page.Documents))
	for i := range page.Documents {
		items[i].Document = &page.Documents[i]
		if page.Highlights != nil {
			h := page.Highlights[i]
			items[i].HighlightTitle = template.HTML(h.Title)     // escaped by textsearch, <mark> only
			items[i].HighlightSnippet = template.HTML(h.Snippet) // escaped by textsearch, <mark> only
			items[i].Highlighted = true
		}
	}
	return items
}

// pager is what a list shows around its pages: whether the page asked for
// is past the last, the link to the last one, and the form that jumps to
// any page (carrying the list's other parameters as hidden fields).
type pager struct {
	PastEnd    bool
	Last       string // the URL of the last page
	TotalPages int
	Current    int
	Keep       []keptParam // the query without page, for the jump form
}

type keptParam struct{ Name, Value string }

func newPager(q url.Values, page *documents.Page, pageURL func(url.Values, int) string) pager {
	p := pager{TotalPages: page.TotalPages, Current: page.CurrentPage}
	if page.TotalPages > 0 && page.CurrentPage > page.TotalPages {
		p.PastEnd = true
		p.Last = pageURL(q, page.TotalPages)
	}
	for _, k := range listParams {
		if v := q.Get(k); v != "" && k != "page" {
			p.Keep = append(p.Keep, keptParam{k, v})
		}
	}
	return p
}

// folderCount is the wording of a folder's count: "3 documents in
// Runbooks", and, when it holds none directly, how many its subfolders
// hold, with a link to them.
type folderCount struct {
	ID    string
	Label string // the folder, by the end of its path
	// Below is how many documents the folder and its subfolders hold,
	// counted only when the list (of the folder alone) is empty.
	Below int
	// WithLink and OnlyLink are the list with and without subfolders.
	WithLink, OnlyLink string
}

// newFolderCount is the count wording of the list q filtered by folder id.
func newFolderCount(q url.Values, id, label string) *folderCount {
	with, only := url.Values{}, url.Values{}
	for k, v := range q {
		if k != "page" {
			with[k], only[k] = v, v
		}
	}
	with.Set("includeSubfolders", "true")
	only.Del("includeSubfolders")
	return &folderCount{ID: id, Label: label, WithLink: "/documents?" + with.Encode(), OnlyLink: "/documents?" + only.Encode()}
}
