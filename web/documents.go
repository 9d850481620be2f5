package web

import (
	"bufio"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quire"
	"quire/documents"
	"quire/live"
	"quire/share"
)

// listPage is the documents list with its filters.
type listPage struct {
	layout
	Q            url.Values // the query as sent, to fill the filter form
	Result       *documents.Page
	Folders      []folderOption
	FolderLabels map[string]string
	Filtered     bool
	Prev, Next   string
	// Items are the documents of the page with their highlights; Pager
	// the page past the end and the jump form; Folder the count of a
	// folder filter (finding.go).
	Items        []docItem
	Pager        pager
	Folder       *folderCount
	FolderID     string // the folder filter, to mark it in the tree
	Subfolders   bool
	OtherFilters bool // a filter besides the search
	Statuses     []string
	Visibilities []string
	SortKeys     []string
	MyDepartment string
	Bulk         bulkForm // the bulk change of a selection (bulk.go)
	// OpenThreads is the number of open comment threads of each listed
	// document that has any (comments.go).
	OpenThreads map[string]int
}

// listParams are the query parameters the list page reads and keeps in its
// links: the API's list parameters.
var listParams = []string{"search", "status", "visibility", "tags", "folderId", "departmentId", "projectId", "sortBy", "sortOrder", "limit", "page",
	"includeSubfolders"}

// handleDocumentList lists the documents the reader can see, with the
// API's query rules (documents.ParseListQuery), so a list URL means the same on
// both.
func handleDocumentList(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelView); err != nil {
			return err
		}
		p := listPage{
			layout:       s.layout(r, &a, "Documents"),
			Statuses:     quire.Statuses,
			Visibilities: quire.Visibilities,
			SortKeys:     documents.SortKeys,
			MyDepartment: a.User.DepartmentID,
		}
		p.Nav = "documents"
		status := http.StatusOK
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			// A parameter dropped for being malformed would widen the
			// answer: refuse the whole query instead.
			q = url.Values{}
			p.Error = "The address of this list is malformed; the filters were reset."
			status = http.StatusBadRequest
		}
		p.Q = url.Values{}
		for _, k := range listParams {
			if v := q.Get(k); v != "" {
				p.Q.Set(k, v)
				if k != "sortBy" && k != "sortOrder" && k != "page" && k != "limit" {
					p.Filtered = true
					p.OtherFilters = p.OtherFilters || k != "search"
				}
			}
		}
		if a.Can(quire.LevelWrite) {
			p.Bulk = s.newBulkForm(r.Context(), d, a, q, p.Q)
		}
		folders, err := d.Folders(r.Context(), a)
		if err != nil {
			return err
		}
		p.Folders = folderOptions(folders)
		p.FolderLabels = folderLabels(p.Folders)
		if p.Q.Get("search") != "" {
			p.Title = "Search: " + p.Q.Get("search")
		}

		params, err := documents.ParseListQuery(p.Q)
		if err == nil {
			p.Result, err = d.List(r.Context(), a, params)
		}
		switch errorCode(err) {
		case "":
		case quire.EVALIDATION:
			p.Error = "Some filters are not valid; correct them and search again."
			p.Fields = validationFields(err)
			status = http.StatusBadRequest
		default:
			return err
		}
		if p.Result != nil {
			p.Items = docItems(p.Result)
			if p.OpenThreads, err = s.openThreads(r.Context(), p.Result.Documents); err != nil {
				return err
			}
			p.Pager = newPager(p.Q, p.Result, pageURL)
			p.FolderID, p.Subfolders = params.FolderID, params.Subfolders && params.FolderID != ""
			if p.FolderID != "" {
				p.Folder = newFolderCount(p.Q, p.FolderID, p.FolderLabels[p.FolderID])
				if p.Result.Total == 0 && !p.Subfolders {
					// A parent whose documents all sit in subfolders:
					// say so rather than a bare "0 documents".
					below, err := d.List(r.Context(), a, documents.ListParams{FolderID: p.FolderID, Subfolders: true, Limit: 1})
					if err != nil {
						return err
					}
					p.Folder.Below = below.Total
				}
			}
			if p.Result.CurrentPage > 1 && !p.Pager.PastEnd {
				p.Prev = pageURL(p.Q, p.Result.CurrentPage-1)
			}
			if p.Result.HasMore {
				p.Next = pageURL(p.Q, p.Result.CurrentPage+1)
			}
		}
		return s.show(w, r, status, "list.html", p)
	}
}

func pageURL(q url.Values, page int) string {
	c := url.Values{}
	for k, v := range q {
		c[k] = v
	}
	if page <= 1 {
		c.Del("page")
	} else {
		c.Set("page", strconv.Itoa(page))
	}
	if len(c) == 0 {
		return "/documents"
	}
	return "/documents?" + c.Encode()
}

// validationFields returns the fields of a VALIDATION_ERROR, each message
// of a field the form shows under another one (visibility.go) led by its
// name.
func validationFields(err error) map[string]string {
	if e, ok := asError(err); ok && e.Fields != nil {
		return namedFields(e.Fields)
	}
	return map[string]string{}
}

// viewPage shows one document.
type viewPage struct {
	layout
	Doc        *quire.Document
	Body       template.HTML
	FolderPath string
	// FolderCrumbs are the folder and its ancestors, top first: the
	// breadcrumb links each level to its folder page.
	FolderCrumbs []quire.Folder
	// LastChange is the document's latest event of the audit log; nil
	// when there is none (pruned, or no log).
	LastChange *quire.Event
	// Files are the document's files (files.go), when FilesOn.
	FilesOn bool
	Files   []fileView
	// Backlinks is the first page of the documents the reader can see
	// that link to this one.
	Backlinks *documents.Page
	// Shares are the document's share links the reader may manage
	// (shares_manage.go), when SharesOn; SharesOpen opens the dialog.
	SharesOn, SharesOpen bool
	Shares               []share.View
	// Comments is the comments column (comments.go); nil without the
	// comments service.
	Comments *commentsView
	// Watch is its Watch or Unwatch button (notify.go).
	Watch *watchView
	// LiveOn: live editing is on (Config.Live); Here is who has the
	// document open live on this node now (nil without anyone).
	LiveOn bool
	Here   *live.Presence
}

// streamed writes the threads of the comments column straight into the
// response (views.go, streamer).
func (p viewPage) streamed() []streamedPart {
	c := p.Comments
	if c == nil {
		return nil
	}
	return []streamedPart{
		{c.ThreadsHTML, func(w *bufio.Writer) { c.column.threads.writeFor(w, c.reader) }},
		{c.OutdatedHTML, func(w *bufio.Writer) { c.column.outdated.writeFor(w, c.reader) }},
	}
}

// backlinksShown is how many of the documents linking to one its page
// lists; the panel says how many more there are.
const backlinksShown = 50

func handleDocumentView(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		return s.documentPage(w, r, d, a, r.PathValue("id"), http.StatusOK, nil)
	}
}

// documentPage shows document id with status; refused, when not nil, is
// a comment form shown again with its error (comments.go).
func (s *server) documentPage(w http.ResponseWriter, r *http.Request, d *documents.Service, a quire.Actor, id string,
	status int, refused *commentRefusal) error {
	doc, err := d.Get(r.Context(), a, id)
	if err != nil {
		return err
	}
	p := viewPage{layout: s.layout(r, &a, doc.Title), Doc: doc}
	if p.Body, err = s.bodies.Render(r.Context(), doc.ContentType, doc.Content); err != nil {
		return err
	}
	p.Nav = "documents"
	if doc.FolderID != "" {
		folders, err := d.Folders(r.Context(), a)
		if err != nil {
			return err
		}
		p.FolderPath = folderPathOf(folders, doc.FolderID)
		p.FolderCrumbs = folderLineage(folders, doc.FolderID)
	}
	if s.cfg.Audit != nil {
		if p.LastChange, err = s.cfg.Audit.LastChange(r.Context(), doc); err != nil {
			return err
		}
	}
	if p.FilesOn, p.Files, err = s.files(r.Context(), a, doc.ID); err != nil {
		return err
	}
	if p.Backlinks, err = d.Backlinks(r.Context(), a, doc.ID, documents.BacklinkParams{Limit: backlinksShown}); err != nil {
		return err
	}
	if p.SharesOn, p.Shares, err = s.documentShares(r.Context(), a, doc.ID); err != nil {
		return err
	}
	q := r.URL.Query()
	p.SharesOpen = strings.HasPrefix(q.Get("m"), "share-")
	if r.Method == http.MethodPost {
		q.Set("comments", r.PostForm.Get("comments")) // the filter the refused form was sent from
	}
	if p.Comments, err = s.commentsOf(r.Context(), a, doc, q, p.Loc, refused); err != nil {
		return err
	}
	if p.Watch, err = s.watchOf(r.Context(), a, false, doc.ID); err != nil { // notify.go
		return err
	}
	if lv := s.cfg.Live; lv != nil {
		p.LiveOn = true
		here, err := lv.Presence(r.Context(), a, doc.ID)
		if err != nil {
			return err
		}
		if len(here.Viewing) > 0 {
			p.Here = here
		}
	}
	return s.show(w, r, status, "document.html", p)
}

// folderPath names a folder by its path ("" for none or one since deleted).
func (s *server) folderPath(ctx context.Context, d *documents.Service, a quire.Actor, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	folders, err := d.Folders(ctx, a)
	if err != nil {
		return "", err
	}
	return folderPathOf(folders, id), nil
}

// docForm is the document form as sent: every field a string, the way the
// browser sends it.
type docForm struct {
	Title, Summary, Content, ContentType, Status, Visibility, FolderID, Tags, ProjectID string
	// BaseUpdatedAt is the updated_at of the version the edit started
	// from; BaseVersion its number (to find the base of a merge).
	BaseUpdatedAt string
	BaseVersion   int
}

func formOf(d *quire.Document) docForm {
	return docForm{
		Title:         d.Title,
		Summary:       d.Summary,
		Content:       d.Content,
		ContentType:   d.ContentType,
		Status:        d.Status,
		Visibility:    d.Visibility,
		FolderID:      d.FolderID,
		Tags:          strings.Join(d.Tags, ", "),
		ProjectID:     d.ProjectID,
		BaseUpdatedAt: stamp(d.UpdatedAt),
		BaseVersion:   d.Version,
	}
}

// readDocForm reads the posted form. Browsers send a textarea's line breaks
// as CRLF; content is stored with LF, so that saving a page unchanged does
// not change every line.
func readDocForm(r *http.Request) docForm {
	f := r.PostForm
	n, _ := strconv.Atoi(f.Get("baseVersion"))
	return docForm{
		Title:         f.Get("title"),
		Summary:       f.Get("summary"),
		Content:       strings.ReplaceAll(f.Get("content"), "\r\n", "\n"),
		ContentType:   f.Get("content_type"),
		Status:        f.Get("status"),
		Visibility:    f.Get("visibility"),
		FolderID:      f.Get("folder_id"),
		Tags:          f.Get("tags"),
		ProjectID:     f.Get("project_id"),
		BaseUpdatedAt: f.Get("baseUpdatedAt"),
		BaseVersion:   n,
	}
}

// input is the form as the service's input. Every field of the form is
// sent; an empty folder means none. The project is sent only when one is
// chosen: a document cannot be taken out of its project, only made
// visible otherwise.
func (f docForm) input() documents.DocumentInput {
	in := documents.DocumentInput{
		Title:       documents.Some(f.Title),
		Content:     documents.Some(f.Content),
		ContentType: documents.Some(f.ContentType),
		Summary:     documents.Some(f.Summary),
		Status:      documents.Some(f.Status),
		Visibility:  documents.Some(f.Visibility),
		FolderID:    documents.Some(f.FolderID),
		Tags:        documents.Some(strings.Split(f.Tags, ",")),
	}
	if f.ProjectID != "" {
		in.ProjectID = documents.Some(f.ProjectID)
	}
	return in
}

// editPage is the form to create or edit a document, and the conflict page.
type editPage struct {
	layout
	Doc          *quire.Document // nil when creating
	Form         docForm
	Action       string
	Folders      []folderOption
	Projects     []projectOption
	ContentTypes []string
	Statuses     []string
	Visibilities []string
	Conflict     *conflictView
	Gone         *goneView // the document was deleted meanwhile (trash.go)
	// Key is the form view's idempotency key (formKeyField).
	Key string
	// Nonce lets the editor (static/live.js, CodeMirror) add its <style>
	// elements: the page's CSP names it in style-src (styleNonce).
	Nonce string
	// Live offers live editing: the form carries data-live with the
	// document's live WebSocket and static/live.js joins it. Set on the
	// edit page of a document when the live server is configured
	// (Config.Live); not on the conflict and validation pages, whose text
	// is the person's own and not yet the live one.
	Live bool
	// Follow is the live page of a person who may only view the document:
	// the editor follows the live text read-only, and the form has no Save.
	Follow bool
}

func (p editPage) styleNonce() string { return p.Nonce }

// projectOption is a project the form offers.
type projectOption struct {
	ID, Name string
}

func (s *server) editPage(r *http.Request, d *documents.Service, a quire.Actor, doc *quire.Document, f docForm) (editPage, error) {
	title := "New document"
	action := "/documents"
	if doc != nil {
		title = "Edit: " + doc.Title
		action = "/documents/" + doc.ID
	}
	p := editPage{
		layout:       s.layout(r, &a, title),
		Doc:          doc,
		Form:         f,
		Action:       action,
		ContentTypes: quire.ContentTypes,
		Statuses:     quire.Statuses,
		Visibilities: quire.Visibilities,
		Key:          newFormKey(),
		Nonce:        newFormKey(),
	}
	p.Nav = "documents"
	if doc == nil {
		p.Nav = "new"
	}
	folders, err := d.Folders(r.Context(), a)
	if err != nil {
		return p, err
	}
	p.Folders = folderOptions(folders)
	seen := map[string]bool{}
	projects, err := d.Projects(r.Context(), a)
	if err != nil {
		return p, err
	}
	for _, pr := range projects {
		p.Projects = append(p.Projects, projectOption{ID: pr.ID, Name: pr.Name})
		seen[pr.ID] = true
	}
	// A document may be in a project the editor does not belong to (an
	// admin moved it there): keep it selectable so a save does not move it.
	for _, id := range []string{f.ProjectID, docProject(doc)} {
		if id != "" && !seen[id] {
			p.Projects = append(p.Projects, projectOption{ID: id, Name: "Current project"})
			seen[id] = true
		}
	}
	return p, nil
}

func docProject(d *quire.Document) string {
	if d == nil {
		return ""
	}
	return d.ProjectID
}

func handleDocumentNew(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		f := docForm{ContentType: "markdown", Status: "draft", Visibility: "private", FolderID: r.URL.Query().Get("folderId")}
		p, err := s.editPage(r, d, a, nil, f)
		if err != nil {
			return err
		}
		return s.show(w, r, http.StatusOK, "edit.html", p)
	}
}

func handleDocumentCreate(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		f := readDocForm(r)
		created := quire.Reply{Kind: quire.ReplySeeCreatedPage}
		save, replayed, err := s.beginForm(w, r, a, created)
		if err != nil || replayed {
			return err
		}
		doc, err := d.Keeping(save.keep).Create(r.Context(), a, f.input())
		if err != nil {
			save.failed()
		} else {
			save.saved(doc)
		}
		if quire.ErrorCode(err) == quire.EVALIDATION {
			p, perr := s.editPage(r, d, a, nil, f)
			if perr != nil {
				return perr
			}
			p.Fields = validationFields(err)
			p.Error = "The document was not created: correct the fields marked below."
			return s.show(w, r, http.StatusBadRequest, "edit.html", p)
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, formLocation(created, doc), http.StatusSeeOther)
		return nil
	}
}

func handleDocumentEdit(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		// With live editing, who may only view the document follows the
		// live text here, read-only (the live server refuses their pushes).
		follow := false
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			if s.cfg.Live == nil || documents.Require(a, quire.LevelView) != nil {
				return err
			}
			follow = true
		}
		doc, err := d.Get(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		p, err := s.editPage(r, d, a, doc, formOf(doc))
		if err != nil {
			return err
		}
		p.Live = s.cfg.Live != nil
		p.Follow = follow
		return s.show(w, r, http.StatusOK, "edit.html", p)
	}
}

// parseStamp reads a baseUpdatedAt sent back by a form.
func parseStamp(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.IsZero() {
		return time.Time{}, false
	}
	return t, true
}

// handleDocumentUpdate saves an edit, always guarded by the updated_at the
// edit started from: a page never overwrites a newer version silently. A
// stale edit is answered with the conflict page.
func handleDocumentUpdate(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		id := r.PathValue("id")
		f := readDocForm(r)
		invalid := func(fields map[string]string, msg string) error {
			cur, err := d.Get(r.Context(), a, id)
			return s.editAgain(w, r, d, a, id, cur, err, f, http.StatusBadRequest, func(p *editPage) {
				p.Fields, p.Error = fields, msg
				if r.PostForm.Get("resolving") == "1" {
					// Keep the conflict view while the merge is being fixed.
					if theirs, err := d.Get(r.Context(), a, id); err == nil {
						p.Conflict = s.conflictView(r.Context(), d, a, theirs, f, false)
					}
				}
			})
		}
		guard, ok := parseStamp(f.BaseUpdatedAt)
		if !ok {
			// Without it the save could overwrite someone else's.
			return invalid(map[string]string{}, "This form does not say which version it was based on. Open the editor again and redo the change.")
		}
		if r.PostForm.Get("resolving") == "1" && hasConflictMarkers(f.Content) {
			return invalid(map[string]string{"content": "still holds conflict markers"},
				"The content still holds conflict markers (lines "+markMine+", "+markSplit+" and "+markTheirs+"). Choose between the two versions at each of them, remove the markers, then save.")
		}
		saved := quire.Reply{Kind: quire.ReplySeeSavedPage, Version: f.BaseVersion}
		save, replayed, err := s.beginForm(w, r, a, saved)
		if err != nil || replayed {
			return err
		}
		doc, err := d.Keeping(save.keep).Update(r.Context(), a, id, f.input(), guard)
		if err != nil {
			save.failed()
		} else {
			save.saved(doc)
		}
		switch errorCode(err) {
		case "":
			http.Redirect(w, r, formLocation(saved, doc), http.StatusSeeOther)
			return nil
		case quire.EVALIDATION:
			return invalid(validationFields(err), "The changes were not saved: correct the fields marked below.")
		case quire.ENOTFOUND:
			return s.documentGone(w, r, d, a, id, f)
		case quire.EDOCUMENTCONFLICT:
			e, _ := asError(err)
			theirs := e.Document
			if theirs == nil {
				if theirs, err = d.Get(r.Context(), a, id); err != nil {
					return err
				}
			}
			cv := s.conflictView(r.Context(), d, a, theirs, f, true)
			p, err := s.editPage(r, d, a, theirs, cv.Form)
			if err != nil {
				return err
			}
			p.Conflict = cv
			p.Title = "Conflict: " + theirs.Title
			return s.show(w, r, http.StatusConflict, "edit.html", p)
		}
		return err
	}
}

// handleDocumentDeleteForm asks before deleting.
func handleDocumentDeleteForm(s *server, d *documents.Service) actorFunc {
	return handleConfirm(s, d.Get, nil, "Delete: ", "documents", "delete.html")
}

func handleDocumentDelete(d *documents.Service) actorFunc {
	return handleByID(d.Delete, func(id string) string {
		return "/documents?m=deleted&undo=" + url.QueryEscape(id)
	})
}

func asError(err error) (*quire.Error, bool) {
	var e *quire.Error
	ok := errors.As(err, &e)
	return e, ok
}
