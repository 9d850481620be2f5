package transfer

import (
	"slices"
	"strings"
	"time"

	"quire"
	"quire/documents"
)

// What other wikis' front matter says that quire's does not, and the
// choices an importer makes for a whole archive.

// Options are an import's choices for the whole archive.
type Options struct {
	// FolderID is the folder the archive is imported under ("" for the top).
	FolderID string
	// Visibility and Status, when set, are those of every document the
	// import creates or updates, whatever its front matter says. When
	// unset, a new document takes its front matter's, else the importer's
	// department (private for an importer without one) and published; an
	// updated document keeps its own unless its front matter names one.
	Visibility string
	Status     string
	// Operator marks the import of the command line, whose operator has
	// the database: it keeps an id no document has, as an administrator's
	// import does (documents.Service.ImportTarget).
	Operator bool
}

// Check validates the options: the visibilities an archive may get as a
// whole (project needs a project, which only a document's own front
// matter can name) and the statuses.
func (o Options) Check() error {
	fields := map[string]string{}
	switch o.Visibility {
	case "", "private", "department", "public":
	default:
		fields["visibility"] = "must be private, department or public"
	}
	if o.Status != "" && !slices.Contains(quire.Statuses, o.Status) {
		fields["status"] = "must be one of " + strings.Join(quire.Statuses, ", ")
	}
	if len(fields) > 0 {
		return quire.Invalid(fields)
	}
	return nil
}

// moreFrontMatter reads the keys of other tools that quire honours:
// description (Hugo, MkDocs, Docusaurus: the summary when there is no
// summary), date (Hugo, Jekyll: the creation time when there is no
// created_at), keywords (added to tags) and draft (Hugo: status draft).
// Values of another shape than expected are ignored, as unknown keys are:
// they are another tool's, and never a reason to refuse a page.
func moreFrontMatter(m map[string]any, fm *frontMatter) {
	if s, ok := m["description"].(string); ok {
		fm.Description = strings.TrimSpace(s)
	}
	switch v := m["date"].(type) {
	case time.Time:
		fm.Date = v
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
				fm.Date = t
				break
			}
		}
	}
	switch kw := m["keywords"].(type) {
	case string:
		fm.Keywords = strings.FieldsFunc(kw, func(r rune) bool { return r == ',' })
	case []any:
		for _, k := range kw {
			if s, ok := k.(string); ok {
				fm.Keywords = append(fm.Keywords, s)
			}
		}
	}
	if d, ok := m["draft"].(bool); ok {
		fm.Draft, fm.HasDraft = d, true
	}
}

// quireExport reports whether a front matter is one a quire export wrote
// (it names the document's id and both times): its content is the
// document's as it was, which an import keeps byte for byte.
func (fm frontMatter) quireExport() bool {
	return fm.ID != "" && !fm.CreatedAt.IsZero() && !fm.UpdatedAt.IsZero()
}

// dropTitleHeading removes the first line of body when it is a heading
// (ATX, or a setext one of =) whose text is title, and the blank lines
// after it: many wikis (Outline, Notion, MkDocs pages with a title) repeat
// the title as the first heading, which quire shows above the content.
func dropTitleHeading(body, title string) string {
	title = strings.TrimSpace(title)
	if title == "" {
		return body
	}
	rest := strings.TrimLeft(body, "\r\n")
	line, after, _ := strings.Cut(rest, "\n")
	t := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(t, "#"):
		h := strings.TrimLeft(t, "#")
		if len(t)-len(h) > 6 || (h != "" && h[0] != ' ' && h[0] != '\t') {
			return body
		}
		if strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#")) != title {
			return body
		}
	case t == title:
		underline, next, _ := strings.Cut(after, "\n")
		u := strings.TrimSpace(underline)
		if u == "" || strings.Trim(u, "=") != "" {
			return body
		}
		after = next
	default:
		return body
	}
	return strings.TrimLeft(after, "\r\n")
}

// apply sets in's visibility and status from the options, else for a new
// document the defaults of an import.
func (o Options) apply(in *documents.DocumentInput, fm frontMatter, existing bool, a quire.Actor) {
	switch {
	case o.Visibility != "":
		in.Visibility = documents.Some(o.Visibility)
	case !in.Visibility.Set && !existing && a.User.DepartmentID != "":
		in.Visibility = documents.Some("department")
	}
	switch {
	case o.Status != "":
		in.Status = documents.Some(o.Status)
	case !in.Status.Set && fm.HasDraft && fm.Draft:
		in.Status = documents.Some("draft")
	case !in.Status.Set && !existing:
		in.Status = documents.Some("published")
	}
}
