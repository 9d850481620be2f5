package web

import (
	"context"
	"strings"
	"time"

	"quire"
	"quire/documents"
)

// A conflict: the reader saved an edit that started from a version that is
// no longer the current one. The page shows the other person's version
// beside the reader's, field by field, with a line diff of the content, and
// a form that proposes a merge: where only one side changed something, that
// change; where both changed the same thing, the reader's, and in the
// content both, between conflict markers. Nothing is saved until the reader
// saves that form, which is guarded by the other version's updated_at in
// turn.

// fieldChange is one field that differs between the two versions.
type fieldChange struct {
	Name           string
	Theirs, Mine   string
	Result         string // what the proposed form holds
	ChangedOnBoth  bool   // both sides changed it from the base, differently
	ResultIsTheirs bool
}

// conflictView is what the conflict page shows.
type conflictView struct {
	Theirs    *quire.Document
	TheirsBy  string
	Fields    []fieldChange
	Diff      diffView // their content → yours
	Form      docForm  // the proposal the form holds
	Mine      string   // your content, as sent
	TheirText string   // their content
	Merged    bool     // the proposal was merged from the common base
	Conflicts int      // regions of the content marked for the reader to resolve
}

// conflictView builds the conflict page for the reader's form mine against
// the current document theirs. With merge set it proposes a three-way merge
// from the version the edit started from, when that version is still
// readable; otherwise the form holds the reader's version as sent.
func (s *server) conflictView(ctx context.Context, d *documents.Service, a quire.Actor, theirs *quire.Document, mine docForm, merge bool) *conflictView {
	cv := &conflictView{Theirs: theirs, Mine: mine.Content, TheirText: theirs.Content}
	if v, err := d.Version(ctx, a, theirs.ID, theirs.Version); err == nil {
		cv.TheirsBy = v.CreatedByName
	}
	tf := formOf(theirs)
	result := mine
	result.BaseUpdatedAt, result.BaseVersion = tf.BaseUpdatedAt, tf.BaseVersion

	var base *docForm
	if merge && mine.BaseVersion > 0 {
		if v, err := d.Version(ctx, a, theirs.ID, mine.BaseVersion); err == nil && sameInstant(v.CreatedAt, mine.BaseUpdatedAt) {
			bf := versionForm(v)
			base = &bf
		}
	}
	fs, _ := d.Folders(ctx, a) // unread, a folder shows as "since deleted": the page still helps

	type field struct {
		name string
		get  func(*docForm) *string
		norm func(string) string
		show func(string) string
	}
	trim := strings.TrimSpace
	fields := []field{
		{name: "Title", get: func(f *docForm) *string { return &f.Title }, norm: trim},
		{name: "Summary", get: func(f *docForm) *string { return &f.Summary }, norm: trim},
		{name: "Status", get: func(f *docForm) *string { return &f.Status }, show: label},
		{name: "Visibility", get: func(f *docForm) *string { return &f.Visibility }, show: label},
		{name: "Format", get: func(f *docForm) *string { return &f.ContentType }, show: label},
		{name: "Tags", get: func(f *docForm) *string { return &f.Tags }, norm: normTagList},
		{name: "Folder", get: func(f *docForm) *string { return &f.FolderID }, show: func(id string) string {
			if id == "" {
				return "(none)"
			}
			if p := folderPathOf(fs, id); p != "" {
				return p
			}
			return "(a folder since deleted)"
		}},
		{name: "Project", get: func(f *docForm) *string { return &f.ProjectID }, show: func(id string) string {
			if id == "" {
				return "(none)"
			}
			return id
		}},
	}
	for _, fd := range fields {
		norm := fd.norm
		if norm == nil {
			norm = func(s string) string { return s }
		}
		show := fd.show
		if show == nil {
			show = func(s string) string {
				if s == "" {
					return "(empty)"
				}
				return s
			}
		}
		m, t := norm(*fd.get(&mine)), norm(*fd.get(&tf))
		if m == t {
			continue
		}
		fc := fieldChange{Name: fd.name, Theirs: show(t), Mine: show(m)}
		if base != nil {
			b := norm(*fd.get(base))
			switch {
			case m == b:
				// Only they changed it: take theirs.
				*fd.get(&result) = *fd.get(&tf)
				fc.ResultIsTheirs = true
			case t != b:
				fc.ChangedOnBoth = true
			}
		}
		fc.Result = show(norm(*fd.get(&result)))
		cv.Fields = append(cv.Fields, fc)
	}

	if base != nil {
		merged, n := merge3(base.Content, mine.Content, theirs.Content)
		result.Content, cv.Conflicts, cv.Merged = merged, n, true
	}
	cv.Form = result
	cv.Diff = newDiffView(theirs.Content, mine.Content, "their version", "your version")
	return cv
}

// versionForm is a saved version as a form's values.
func versionForm(v *quire.Version) docForm {
	return docForm{
		Title:         v.Title,
		Summary:       v.Summary,
		Content:       v.Content,
		ContentType:   v.ContentType,
		Status:        v.Status,
		Visibility:    v.Visibility,
		FolderID:      v.FolderID,
		Tags:          strings.Join(v.Tags, ", "),
		ProjectID:     v.ProjectID,
		BaseUpdatedAt: stamp(v.CreatedAt),
		BaseVersion:   v.Number,
	}
}

// normTagList compares tag lists as the service stores them.
func normTagList(s string) string {
	tags, _ := documents.NormalizeTags(strings.Split(s, ","))
	return strings.Join(tags, ", ")
}

// sameInstant reports whether t is the instant the form stamp names, at
// the contract's microsecond precision.
func sameInstant(t time.Time, stampValue string) bool {
	u, ok := parseStamp(stampValue)
	return ok && u.UnixMicro() == t.UnixMicro()
}

// hasConflictMarkers reports whether content still holds a merge's markers.
// Only the opening and closing lines are looked for: a line of "=" alone is
// also a Markdown heading underline.
func hasConflictMarkers(content string) bool {
	for _, line := range strings.Split(content, "\n") {
		if line == markMine || line == markTheirs {
			return true
		}
	}
	return false
}
