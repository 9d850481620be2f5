package documents

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"quire"
)

// Limits of document and folder fields. Content has no limit of its own:
// the request body limit (2 MiB by default) bounds it.
const (
	MaxTitle     = 300  // characters, after trimming
	MaxSummary   = 1000 // characters, after trimming
	MaxTags      = 50   // per document, after dropping duplicates
	MaxTagLength = 64   // characters, after trimming
	MaxFolder    = 200  // characters of a folder name, after trimming
)

// Field is one optional member of an input: absent (Set false), null (Set
// and Null), or a value. It lets an update tell "leave as it is" from
// "clear".
type Field[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Some is a Field holding v.
func Some[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

// Null is a Field that was sent as null.
func Null[T any]() Field[T] { return Field[T]{Set: true, Null: true} }

// has reports whether the field carries a value (neither absent nor null).
func (f Field[T]) has() bool { return f.Set && !f.Null }

// DocumentInput is the body of a create or an update.
//
// On create an absent or null field takes its default (title is required).
// On update an absent field is left as it is; null clears summary (to "")
// and folder_id, and is refused for every other field. For folder_id,
// department_id and project_id an empty string means the same as null.
type DocumentInput struct {
	Title        Field[string]
	Content      Field[string]
	ContentType  Field[string]
	Summary      Field[string]
	Status       Field[string]
	Visibility   Field[string]
	FolderID     Field[string]
	Tags         Field[[]string]
	DepartmentID Field[string]
	ProjectID    Field[string]

	// Invalid carries failures found while reading the input (a member of
	// the wrong type, named as on the wire). They are reported together
	// with every other failure, and nothing is written.
	Invalid map[string]string
}

// FolderInput is the body of a folder create or update. On update an absent
// field is left as it is; a null (or empty) parent_id moves the folder to
// the top.
type FolderInput struct {
	Name     Field[string]
	ParentID Field[string]
	Invalid  map[string]string // as in DocumentInput
}

// fieldErrors collects validation failures, one message per wire field.
type fieldErrors map[string]string

func (e fieldErrors) add(field, msg string) {
	if _, ok := e[field]; !ok {
		e[field] = msg
	}
}

func (e fieldErrors) err() error {
	if len(e) == 0 {
		return nil
	}
	return quire.Invalid(e)
}

// text validates a free-text value: valid UTF-8 and no NUL characters, which
// PostgreSQL cannot store in text and which no document needs.
func text(errs fieldErrors, field, s string) bool {
	switch {
	case !utf8.ValidString(s):
		errs.add(field, "must be valid UTF-8")
	case strings.ContainsRune(s, 0):
		errs.add(field, "must not contain NUL characters")
	default:
		return true
	}
	return false
}

func oneOf(errs fieldErrors, field, s string, allowed []string) bool {
	if !slices.Contains(allowed, s) {
		errs.add(field, "must be one of "+strings.Join(allowed, ", "))
		return false
	}
	return true
}

// normTitle trims a title and checks its length.
func normTitle(errs fieldErrors, s string) string {
	s = strings.TrimSpace(s)
	if !text(errs, "title", s) {
		return s
	}
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		errs.add("title", "is required")
	case n > MaxTitle:
		errs.add("title", fmt.Sprintf("must be at most %d characters", MaxTitle))
	}
	return s
}

func normSummary(errs fieldErrors, s string) string {
	s = strings.TrimSpace(s)
	if text(errs, "summary", s) && utf8.RuneCountInString(s) > MaxSummary {
		errs.add("summary", fmt.Sprintf("must be at most %d characters", MaxSummary))
	}
	return s
}

// NormalizeTags trims each tag, drops empty ones and those that repeat an
// earlier one ignoring case (the first spelling is kept), and checks the
// limits. The failure message is for the field "tags".
func NormalizeTags(tags []string) ([]string, string) {
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if !utf8.ValidString(t) {
			return nil, "must be valid UTF-8"
		}
		if strings.ContainsRune(t, 0) {
			return nil, "must not contain NUL characters"
		}
		if t == "" {
			continue
		}
		if utf8.RuneCountInString(t) > MaxTagLength {
			return nil, fmt.Sprintf("each tag must be at most %d characters", MaxTagLength)
		}
		key := strings.ToLower(t)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, t)
	}
	if len(out) > MaxTags {
		return nil, fmt.Sprintf("must hold at most %d tags", MaxTags)
	}
	return out, ""
}

// refs are the references of an input checked against the database before
// a write: whether the folder exists, and whether the actor may put the
// document in the department and project named.
type refs struct {
	folderOK     bool
	departmentOK bool // the actor belongs to it (an admin: it exists)
	projectOK    bool
}

// idField reads folder_id, department_id or project_id: "" for null or
// empty, and whether the value has the form of an id.
func idField(f Field[string]) (id string, wellFormed bool) {
	if !f.has() || f.Value == "" {
		return "", true
	}
	return f.Value, validID(f.Value)
}

// checkRefs looks up the references an input names. It runs before the
// store's write transaction, so that the transaction itself only compares.
func (s *Service) checkRefs(ctx context.Context, a quire.Actor, in DocumentInput) (refs, error) {
	var r refs
	if id, ok := idField(in.FolderID); id != "" && ok {
		_, err := s.store.Folder(ctx, id)
		switch {
		case err == nil:
			r.folderOK = true
		case !isCode(err, quire.ENOTFOUND):
			return r, err
		}
	}
	if id, ok := idField(in.DepartmentID); id != "" && ok {
		if a.User.Role.Admin {
			found, err := s.departmentExists(ctx, id)
			if err != nil {
				return r, err
			}
			r.departmentOK = found
		} else {
			r.departmentOK = id == a.User.DepartmentID
		}
	}
	if id, ok := idField(in.ProjectID); id != "" && ok {
		ok, err := s.projectOK(ctx, a, id)
		if err != nil {
			return r, err
		}
		r.projectOK = ok
	}
	return r, nil
}

const (
	msgNoFolder      = "must name an existing folder"
	msgNotDepartment = "must be a department you belong to"
	msgNotProject    = "must be a project you are a member of"
	msgNoDepartment  = "is required for department visibility"
	msgNoProject     = "is required for project visibility"
	msgNotNull       = "must not be null"
)

// apply validates in and writes it onto d. With create set, absent and null
// fields take their defaults; otherwise they follow the update rules. It
// reports every invalid field at once.
func apply(d *quire.Document, in DocumentInput, r refs, a quire.Actor, create bool) error {
	errs := fieldErrors{}
	for k, v := range in.Invalid {
		errs.add(k, v)
	}
	notNull := func(field string, set, null bool) bool {
		if set && null && !create {
			errs.add(field, msgNotNull)
			return false
		}
		return set && !null
	}

	if create && !in.Title.has() {
		errs.add("title", "is required")
	} else if notNull("title", in.Title.Set, in.Title.Null) {
		d.Title = normTitle(errs, in.Title.Value)
	}
	if notNull("content", in.Content.Set, in.Content.Null) && text(errs, "content", in.Content.Value) {
		d.Content = in.Content.Value
	}
	if notNull("content_type", in.ContentType.Set, in.ContentType.Null) && oneOf(errs, "content_type", in.ContentType.Value, quire.ContentTypes) {
		d.ContentType = in.ContentType.Value
	}
	if in.Summary.has() {
		d.Summary = normSummary(errs, in.Summary.Value)
	} else if in.Summary.Set {
		d.Summary = ""
	}
	if notNull("status", in.Status.Set, in.Status.Null) && oneOf(errs, "status", in.Status.Value, quire.Statuses) {
		d.Status = in.Status.Value
	}
	if notNull("visibility", in.Visibility.Set, in.Visibility.Null) && oneOf(errs, "visibility", in.Visibility.Value, quire.Visibilities) {
		d.Visibility = in.Visibility.Value
	}
	if notNull("tags", in.Tags.Set, in.Tags.Null) {
		tags, msg := NormalizeTags(in.Tags.Value)
		if msg != "" {
			errs.add("tags", msg)
		} else {
			d.Tags = tags
		}
	}
	if in.FolderID.Set {
		switch id, ok := idField(in.FolderID); {
		case id == "":
			d.FolderID = ""
		case !ok || !r.folderOK:
			errs.add("folder_id", msgNoFolder)
		default:
			d.FolderID = id
		}
	}
	// department_id and project_id are checked for membership only when they
	// change: sending back the values read from a GET is always accepted.
	if in.DepartmentID.Set {
		switch id, ok := idField(in.DepartmentID); {
		case id == "":
			if !create {
				errs.add("department_id", msgNotNull)
			}
		case id == d.DepartmentID && !create:
		case !ok || !r.departmentOK:
			errs.add("department_id", msgNotDepartment)
		default:
			d.DepartmentID = id
		}
	}
	if in.ProjectID.Set {
		switch id, ok := idField(in.ProjectID); {
		case id == "":
			if !create {
				errs.add("project_id", msgNotNull)
			}
		case id == d.ProjectID && !create:
		case !ok || !r.projectOK:
			errs.add("project_id", msgNotProject)
		default:
			d.ProjectID = id
		}
	}

	switch d.Visibility {
	case "department":
		if d.DepartmentID == "" {
			// An update that makes a document departmental puts it in the
			// caller's department when it has none yet.
			d.DepartmentID = a.User.DepartmentID
		}
		if d.DepartmentID == "" {
			errs.add("department_id", msgNoDepartment)
		}
	case "project":
		if d.ProjectID == "" {
			errs.add("project_id", msgNoProject)
		}
	}
	return errs.err()
}

// sameDocument reports whether two states hold the same saved fields.
func sameDocument(a, b *quire.Document) bool {
	return a.Title == b.Title && a.Content == b.Content && a.ContentType == b.ContentType &&
		a.Summary == b.Summary && a.Status == b.Status && a.Visibility == b.Visibility &&
		a.FolderID == b.FolderID && a.DepartmentID == b.DepartmentID && a.ProjectID == b.ProjectID &&
		slices.Equal(a.Tags, b.Tags)
}

// applyFolder validates in and writes it onto f.
func (s *Service) applyFolder(ctx context.Context, f *quire.Folder, in FolderInput, create bool) error {
	errs := fieldErrors{}
	for k, v := range in.Invalid {
		errs.add(k, v)
	}
	switch {
	case create && !in.Name.has():
		errs.add("name", "is required")
	case in.Name.Set && in.Name.Null:
		errs.add("name", msgNotNull)
	case in.Name.Set:
		name := strings.TrimSpace(in.Name.Value)
		if text(errs, "name", name) {
			switch n := utf8.RuneCountInString(name); {
			case n == 0:
				errs.add("name", "is required")
			case n > MaxFolder:
				errs.add("name", fmt.Sprintf("must be at most %d characters", MaxFolder))
			}
		}
		f.Name = name
	}
	if in.ParentID.Set {
		switch id, ok := idField(in.ParentID); {
		case id == "":
			f.ParentID = ""
		case !ok:
			errs.add("parent_id", msgNoFolder)
		case id == f.ID:
			errs.add("parent_id", "must not be the folder itself or one of its descendants")
		default:
			_, err := s.store.Folder(ctx, id)
			switch {
			case isCode(err, quire.ENOTFOUND):
				errs.add("parent_id", msgNoFolder)
			case err != nil:
				return err
			default:
				f.ParentID = id
			}
		}
	}
	return errs.err()
}
