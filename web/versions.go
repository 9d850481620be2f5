package web

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"quire"
	"quire/documents"
)

// versionsPage lists a document's versions, newest first.
type versionsPage struct {
	layout
	Doc      *quire.Document
	Versions []quire.Version
	From, To *quire.Version // nil: the compare form offers the last two
}

func handleVersionList(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		id := r.PathValue("id")
		doc, err := d.Get(r.Context(), a, id)
		if err != nil {
			return err
		}
		vs, err := d.Versions(r.Context(), a, id)
		if err != nil {
			return err
		}
		p := versionsPage{layout: s.section(r, &a, "documents", "Versions: "+doc.Title), Doc: doc, Versions: vs}
		return s.show(w, r, http.StatusOK, "versions.html", p)
	}
}

// versionNumber reads {n}: a version number, or NOT_FOUND.
func versionNumber(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		return 0, quire.Errorf(quire.ENOTFOUND, "Version not found")
	}
	return n, nil
}

// versionPage shows one version, or its diff against the current version.
type versionPage struct {
	layout
	Doc        *quire.Document // the current state
	Version    *quire.Version
	Body       template.HTML
	FolderPath string
	IsCurrent  bool
	Diff       *diffView
	Fields     []fieldChange // fields that differ from the current version
}

func (s *server) versionPage(r *http.Request, d *documents.Service, a quire.Actor) (versionPage, error) {
	n, err := versionNumber(r)
	if err != nil {
		return versionPage{}, err
	}
	id := r.PathValue("id")
	doc, err := d.Get(r.Context(), a, id)
	if err != nil {
		return versionPage{}, err
	}
	v, err := d.Version(r.Context(), a, id, n)
	if err != nil {
		return versionPage{}, err
	}
	p := versionPage{
		layout:    s.section(r, &a, "documents", "Version "+strconv.Itoa(v.Number)+": "+v.Title),
		Doc:       doc,
		Version:   v,
		IsCurrent: v.Number == doc.Version,
	}
	if p.FolderPath, err = s.folderPath(r.Context(), d, a, v.FolderID); err != nil {
		return versionPage{}, err
	}
	return p, nil
}

func handleVersionView(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := s.versionPage(r, d, a)
		if err != nil {
			return err
		}
		if p.Body, err = s.bodies.Render(r.Context(), p.Version.ContentType, p.Version.Content); err != nil {
			return err
		}
		return s.show(w, r, http.StatusOK, "version.html", p)
	}
}

// handleVersionDiff compares a version with the current one: what
// restoring it would change.
func handleVersionDiff(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := s.versionPage(r, d, a)
		if err != nil {
			return err
		}
		p.Title = "Compare version " + strconv.Itoa(p.Version.Number) + " with the current one"
		dv := newDiffView(p.Doc.Content, p.Version.Content,
			"current (version "+strconv.Itoa(p.Doc.Version)+")", "version "+strconv.Itoa(p.Version.Number))
		p.Diff = &dv
		p.Fields = metadataChanges(formOf(p.Doc), versionForm(p.Version), p.FolderPath, s.folderPathOrEmpty(r, d, a, p.Doc.FolderID))
		return s.show(w, r, http.StatusOK, "version.html", p)
	}
}

func (s *server) folderPathOrEmpty(r *http.Request, d *documents.Service, a quire.Actor, id string) string {
	p, _ := s.folderPath(r.Context(), d, a, id)
	return p
}

// metadataChanges lists the fields other than content in which a version
// differs from the current state. In each change Theirs is the current
// value and Mine the version's.
func metadataChanges(cur, ver docForm, verFolder, curFolder string) []fieldChange {
	var out []fieldChange
	add := func(name, c, v string) {
		if c != v {
			out = append(out, fieldChange{Name: name, Theirs: orNone(c), Mine: orNone(v)})
		}
	}
	add("Title", cur.Title, ver.Title)
	add("Summary", cur.Summary, ver.Summary)
	add("Status", label(cur.Status), label(ver.Status))
	add("Visibility", label(cur.Visibility), label(ver.Visibility))
	add("Format", label(cur.ContentType), label(ver.ContentType))
	add("Tags", normTagList(cur.Tags), normTagList(ver.Tags))
	if cur.FolderID != ver.FolderID {
		out = append(out, fieldChange{Name: "Folder", Theirs: orNone(curFolder), Mine: orNone(verFolder)})
	}
	return out
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// handleVersionRestore restores a version, guarded by the updated_at of
// the state the reader looked at: restoring over a newer save than the one
// seen is refused, and the reader is shown the document again.
func handleVersionRestore(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		n, err := versionNumber(r)
		if err != nil {
			return err
		}
		guard, ok := parseStamp(r.PostForm.Get("baseUpdatedAt"))
		if !ok {
			return quire.Invalid(map[string]string{"baseUpdatedAt": "is required"})
		}
		doc, err := d.Restore(r.Context(), a, r.PathValue("id"), n, guard)
		if quire.ErrorCode(err) == quire.EDOCUMENTCONFLICT {
			p, perr := s.versionPage(r, d, a)
			if perr != nil {
				return perr
			}
			if p.Body, perr = s.bodies.Render(r.Context(), p.Version.ContentType, p.Version.Content); perr != nil {
				return perr
			}
			p.layout.Error = "The document was changed since you opened this page, so the version was not restored. " +
				"The page now shows the current state: check it, then restore again if you still want to."
			return s.show(w, r, http.StatusConflict, "version.html", p)
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, "/documents/"+doc.ID+"?m=restored", http.StatusSeeOther)
		return nil
	}
}

// comparePage compares any two versions of a document, from one to the
// other, with the form that chooses them.
type comparePage struct {
	layout
	Doc      *quire.Document
	Versions []quire.Version
	From, To *quire.Version
	Fields   []fieldChange // Theirs: the from version's value, Mine: the to version's
	Diff     *diffView
}

// compareNumber reads a version number of the compare form: "" gives def,
// anything but a positive integer is VALIDATION_ERROR naming the field.
func compareNumber(q url.Values, name string, def int, errs map[string]string) int {
	s := q.Get(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || len(s) > 9 {
		errs[name] = "must be a version number"
		return 0
	}
	return n
}

// handleVersionCompare compares version from with version to (by default
// the one before the current, and the current).
func handleVersionCompare(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		id := r.PathValue("id")
		doc, err := d.Get(r.Context(), a, id)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		errs := map[string]string{}
		from := compareNumber(q, "from", max(doc.Version-1, 1), errs)
		to := compareNumber(q, "to", doc.Version, errs)
		if len(errs) > 0 {
			return quire.Invalid(errs)
		}
		vs, err := d.Versions(r.Context(), a, id)
		if err != nil {
			return err
		}
		vf, err := d.Version(r.Context(), a, id, from)
		if err != nil {
			return err
		}
		vt, err := d.Version(r.Context(), a, id, to)
		if err != nil {
			return err
		}
		p := comparePage{
			layout:   s.layout(r, &a, "Compare version "+strconv.Itoa(from)+" with version "+strconv.Itoa(to)+": "+doc.Title),
			Doc:      doc,
			Versions: vs,
			From:     vf,
			To:       vt,
		}
		p.Nav = "documents"
		fromName, toName := "version "+strconv.Itoa(from), "version "+strconv.Itoa(to)
		dv := newDiffView(vf.Content, vt.Content, fromName, toName)
		p.Diff = &dv
		p.Fields = metadataChanges(versionForm(vf), versionForm(vt),
			s.folderPathOrEmpty(r, d, a, vt.FolderID), s.folderPathOrEmpty(r, d, a, vf.FolderID))
		return s.show(w, r, http.StatusOK, "compare.html", p)
	}
}
