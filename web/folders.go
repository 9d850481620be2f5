package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"quire"
	"quire/documents"
)

// Folder pages and pickers cost time and memory linear in the number of
// folders and the length of their names, however deep the tree: a chain of
// 100 folders with 200-character names once made /folders 103 MB, because
// every row carried a select of every folder's full path. Now
//   - the tree shows each folder's own name, indented by its depth;
//   - a select names a folder by the end of its path (labelNames names at
//     most), so no label grows with the depth;
//   - a folder is renamed, moved and deleted on its own page, which holds
//     the one parent select;
//   - a full path is built only for the one folder a page is about.

// labelNames is how many names, from the end of its path, a select shows
// for a folder: "Engineering / Runbooks / Oncall", "… / Runbooks / Oncall / Pager".
const labelNames = 3

// maxIndent caps the depth the stylesheet indents (indent-N classes: pages
// carry no style attributes, the CSP refuses them).
const maxIndent = 6

// folderOption is a folder as a select or the tree shows it.
type folderOption struct {
	ID, Name string
	ParentID string // "" at the top
	Label    string // the end of its path, for selects
	Depth    int
	Indent   int // Depth capped at maxIndent
}

// folderOptions orders folders as a tree (parents before children, names
// in order) and labels each by the end of its path. Linear: every folder is
// visited once and its label holds at most labelNames names.
func folderOptions(folders []quire.Folder) []folderOption {
	ids := make(map[string]bool, len(folders))
	for _, f := range folders {
		ids[f.ID] = true
	}
	keys := make([]string, len(folders)) // the names folded once, not per comparison
	children := map[string][]int{}
	for i, f := range folders {
		keys[i] = strings.ToLower(f.Name)
		parent := f.ParentID
		if !ids[parent] {
			parent = ""
		}
		children[parent] = append(children[parent], i)
	}
	for _, c := range children {
		slices.SortFunc(c, func(a, b int) int {
			if k := strings.Compare(keys[a], keys[b]); k != 0 {
				return k
			}
			return strings.Compare(folders[a].ID, folders[b].ID)
		})
	}
	// Depth first, with a stack of its own: a chain of folders is as deep
	// as it is long.
	type frame struct {
		kids []int
		next int
	}
	out := make([]folderOption, 0, len(folders))
	seen := make(map[string]bool, len(folders))
	stack := []frame{{kids: children[""]}}
	var names []string // the path of the folder on top of the stack
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.kids) {
			stack = stack[:len(stack)-1]
			names = names[:max(len(stack)-1, 0)]
			continue
		}
		f := folders[top.kids[top.next]]
		top.next++
		if seen[f.ID] {
			continue // a cycle cannot be stored, but never loop on one
		}
		seen[f.ID] = true
		parent := ""
		if len(stack) > 1 {
			parent = f.ParentID
		}
		depth := len(names)
		names = append(names, f.Name)
		out = append(out, folderOption{ID: f.ID, Name: f.Name, ParentID: parent, Label: pathLabel(names),
			Depth: depth, Indent: min(depth, maxIndent)})
		stack = append(stack, frame{kids: children[f.ID]})
	}
	return out
}

// pathLabel names a folder by the last labelNames names of its path.
func pathLabel(names []string) string {
	if len(names) <= labelNames {
		return strings.Join(names, " / ")
	}
	return "… / " + strings.Join(names[len(names)-labelNames:], " / ")
}

// folderLabels maps each folder to its label.
func folderLabels(opts []folderOption) map[string]string {
	m := make(map[string]string, len(opts))
	for _, o := range opts {
		m[o.ID] = o.Label
	}
	return m
}

// folderLineage returns the folder id and its ancestors, top first (nil
// when there is no such folder). Linear in the number of folders.
func folderLineage(folders []quire.Folder, id string) []quire.Folder {
	byID := make(map[string]*quire.Folder, len(folders))
	for i := range folders {
		byID[folders[i].ID] = &folders[i]
	}
	var up []quire.Folder
	seen := map[string]bool{}
	for f := byID[id]; f != nil && !seen[f.ID]; f = byID[f.ParentID] {
		seen[f.ID] = true
		up = append(up, *f)
	}
	slices.Reverse(up)
	return up
}

// folderPathOf names one folder by its full path, "Engineering / Runbooks"
// ("" for none or one since deleted).
func folderPathOf(folders []quire.Folder, id string) string {
	if id == "" {
		return ""
	}
	var b strings.Builder
	for i, f := range folderLineage(folders, id) {
		if i > 0 {
			b.WriteString(" / ")
		}
		b.WriteString(f.Name)
	}
	return b.String()
}

// foldersPage shows the folder tree, and the form to add a folder.
type foldersPage struct {
	layout
	Folders []folderOption
	// Name and Parent fill the new-folder form: after an error, or the
	// parent from ?parent= when a folder's page links here.
	Name, Parent string
}

func (s *server) foldersPage(r *http.Request, d *documents.Service, a quire.Actor) (foldersPage, error) {
	folders, err := d.Folders(r.Context(), a)
	if err != nil {
		return foldersPage{}, err
	}
	p := foldersPage{layout: s.section(r, &a, "folders", "Folders"), Folders: folderOptions(folders), Parent: r.URL.Query().Get("parent")}
	return p, nil
}

func handleFolderList(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := s.foldersPage(r, d, a)
		if err != nil {
			return err
		}
		return s.show(w, r, http.StatusOK, "folders.html", p)
	}
}

// folderPage shows one folder: where it is, its subfolders, and for
// writers the forms to rename, move and delete it.
type folderPage struct {
	layout
	Folder    quire.Folder
	Ancestors []quire.Folder // top first, the folder excluded
	Children  []folderOption
	// Parents are the folders it may move into: all but itself and the
	// folders below it.
	Parents []folderOption
	// Name and ParentID fill the form: the folder's, or as sent after an
	// error.
	Name, ParentID string
	// Docs is the first page of its documents (with Subfolders, of those
	// below it too), Items the same with their highlights (none here);
	// Below counts the documents of the folder and its subfolders when it
	// holds none itself; All links to the whole list.
	Docs       *documents.Page
	Items      []docItem
	Subfolders bool
	Below      int
	All        string
	// DeleteRefused is set when a delete was refused because the folder is
	// not empty: the Delete section says so once, in place of its hint,
	// rather than the same words again at the top of the page.
	DeleteRefused bool
	// Watch is its Watch or Unwatch button (notify.go).
	Watch *watchView
}

func (s *server) folderPage(r *http.Request, d *documents.Service, a quire.Actor, id string) (folderPage, error) {
	folders, err := d.Folders(r.Context(), a)
	if err != nil {
		return folderPage{}, err
	}
	lineage := folderLineage(folders, id)
	if len(lineage) == 0 {
		return folderPage{}, quire.Errorf(quire.ENOTFOUND, "Folder not found")
	}
	f := lineage[len(lineage)-1]
	p := folderPage{layout: s.section(r, &a, "folders", f.Name), Folder: f, Ancestors: lineage[:len(lineage)-1], Name: f.Name, ParentID: f.ParentID}
	opts := folderOptions(folders)
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		if o.ID == id {
			// Its descendants follow it, deeper than it: skip them all.
			for i+1 < len(opts) && opts[i+1].Depth > o.Depth {
				i++
				if opts[i].ParentID == id {
					p.Children = append(p.Children, opts[i])
				}
			}
			continue
		}
		p.Parents = append(p.Parents, o)
	}
	// Its documents: one page, so the folder page stays bounded however
	// many it holds; the whole list is one link away.
	p.Subfolders = r.URL.Query().Get("includeSubfolders") == "true"
	if p.Docs, err = d.List(r.Context(), a, documents.ListParams{FolderID: id, Subfolders: p.Subfolders}); err != nil {
		return folderPage{}, err
	}
	p.Items = docItems(p.Docs)
	if p.Watch, err = s.watchOf(r.Context(), a, true, id); err != nil {
		return folderPage{}, err
	}
	q := url.Values{"folderId": {id}}
	if p.Subfolders {
		q.Set("includeSubfolders", "true")
	}
	p.All = "/documents?" + q.Encode()
	if p.Docs.Total == 0 && !p.Subfolders && len(p.Children) > 0 {
		below, err := d.List(r.Context(), a, documents.ListParams{FolderID: id, Subfolders: true, Limit: 1})
		if err != nil {
			return folderPage{}, err
		}
		p.Below = below.Total
	}
	return p, nil
}

func handleFolderView(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := s.folderPage(r, d, a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return s.show(w, r, http.StatusOK, "folder.html", p)
	}
}

// folderFailed shows the form again with its error, for the errors a reader
// can fix; others are answered as errors. A new folder's form is on the
// folders page (editID ""), the others on the folder's page.
func (s *server) folderFailed(w http.ResponseWriter, r *http.Request, d *documents.Service, a quire.Actor, err error, editID string) error {
	code := quire.ErrorCode(err)
	if code != quire.EVALIDATION && code != quire.EFOLDERNOTEMPTY && code != quire.ECONFLICT {
		return err
	}
	msg := quire.ErrorMessage(err)
	if code == quire.EFOLDERNOTEMPTY {
		msg = "This folder still holds documents or folders. Move or delete them first."
	}
	status, _ := statusOf(code)
	if editID == "" {
		p, perr := s.foldersPage(r, d, a)
		if perr != nil {
			return perr
		}
		p.Fields, p.Error = validationFields(err), msg
		p.Name, p.Parent = r.PostForm.Get("name"), r.PostForm.Get("parent_id")
		return s.show(w, r, status, "folders.html", p)
	}
	p, perr := s.folderPage(r, d, a, editID)
	if perr != nil {
		return perr
	}
	p.Fields, p.Error = validationFields(err), msg
	if code == quire.EFOLDERNOTEMPTY {
		p.Error, p.DeleteRefused = "", true
	}
	if r.PostForm.Has("name") {
		p.Name, p.ParentID = r.PostForm.Get("name"), r.PostForm.Get("parent_id")
	}
	return s.show(w, r, status, "folder.html", p)
}

func handleFolderCreate(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		in := documents.FolderInput{Name: documents.Some(r.PostForm.Get("name")), ParentID: documents.Some(r.PostForm.Get("parent_id"))}
		if _, err := d.CreateFolder(r.Context(), a, in); err != nil {
			return s.folderFailed(w, r, d, a, err, "")
		}
		http.Redirect(w, r, "/folders?m=folder-created", http.StatusSeeOther)
		return nil
	}
}

// handleFolderUpdate renames and moves a folder (both fields are sent).
func handleFolderUpdate(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		id := r.PathValue("id")
		in := documents.FolderInput{Name: documents.Some(r.PostForm.Get("name")), ParentID: documents.Some(r.PostForm.Get("parent_id"))}
		if _, err := d.UpdateFolder(r.Context(), a, id, in); err != nil {
			return s.folderFailed(w, r, d, a, err, id)
		}
		http.Redirect(w, r, "/folders/"+id+"?m=folder-saved", http.StatusSeeOther)
		return nil
	}
}

func handleFolderDelete(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		id := r.PathValue("id")
		if err := d.DeleteFolder(r.Context(), a, id); err != nil {
			return s.folderFailed(w, r, d, a, err, id)
		}
		http.Redirect(w, r, "/folders?m=folder-deleted", http.StatusSeeOther)
		return nil
	}
}
