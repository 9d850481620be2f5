package documents

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"quire"
	"quire/textdiff"
)

// Get returns one document the actor can see, content included.
func (s *Service) Get(ctx context.Context, a quire.Actor, id string) (*quire.Document, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, documentNotFound()
	}
	return s.store.Document(ctx, visibility(a), id)
}

// Create validates in and stores a new document owned by the actor, with
// its version 1. Defaults: content "", content_type markdown, status draft,
// visibility private, tags [], department the creator's.
func (s *Service) Create(ctx context.Context, a quire.Actor, in DocumentInput) (*quire.Document, error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, err
	}
	return w.Create(ctx, in)
}

// Create is Service.Create for the writer's actor.
func (w Writer) Create(ctx context.Context, in DocumentInput) (*quire.Document, error) {
	return w.create(ctx, in, newID(), time.Time{}, time.Time{}, nil)
}

// Import stores one document of an import (product.md section 16): when
// id names a document the actor can see, in is saved over it as a new
// version (updated true); otherwise a new document is created, under id
// when it is a free document ID (an export imported again keeps its IDs,
// and so the links between its documents), with the created and updated
// times given when they are set and not in the future.
func (s *Service) Import(ctx context.Context, a quire.Actor, id string, in DocumentInput, created, updated time.Time) (d *quire.Document, wasUpdated bool, err error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, false, err
	}
	if validID(id) {
		if _, err := s.store.Document(ctx, visibility(a), id); err == nil {
			d, err := w.Update(ctx, id, in, time.Time{})
			return d, err == nil, err
		} else if quire.ErrorCode(err) != quire.ENOTFOUND {
			return nil, false, err
		}
		if s.idTaken(ctx, id) {
			id = newID()
		}
	} else {
		id = newID()
	}
	now := s.clock()
	if created.IsZero() || created.After(now) || updated.After(now) {
		created, updated = time.Time{}, time.Time{}
	}
	d, err = w.create(ctx, in, id, created, updated, map[string]any{"via": "import"})
	return d, false, err
}

// idTaken reports whether a document (one the actor cannot see, or one in
// the trash) has id.
func (s *Service) idTaken(ctx context.Context, id string) bool {
	if _, err := s.store.Document(ctx, quire.Visibility{All: true}, id); quire.ErrorCode(err) != quire.ENOTFOUND {
		return true
	}
	_, err := s.store.TrashedDocument(ctx, quire.Visibility{All: true}, id)
	return quire.ErrorCode(err) != quire.ENOTFOUND
}

// create is Create of a document with the given id and, when created is
// set, dates; details are added to its event.
func (w Writer) create(ctx context.Context, in DocumentInput, id string, created, updated time.Time,
	details map[string]any) (*quire.Document, error) {
	s, a := w.s, w.a
	r, err := s.checkRefs(ctx, a, in)
	if err != nil {
		return nil, err
	}
	d := &quire.Document{
		ContentType:  "markdown",
		Status:       "draft",
		Visibility:   "private",
		Tags:         []string{},
		DepartmentID: a.User.DepartmentID,
		OwnerID:      a.User.ID,
	}
	if err := apply(d, in, r, a, true); err != nil {
		return nil, err
	}
	now := s.clock()
	d.ID, d.CreatedAt, d.UpdatedAt = id, created, updated
	ev := event(quire.ActionDocumentCreated, a, now, quire.TargetDocument, d.ID, d.Title)
	ev.Mentions, ev.MentionsIgnored = quire.Mentions(d.Content) // notified by the fan-out (package notify)
	for k, v := range details {
		ev.With(k, v)
	}
	if err := s.writes(ev).CreateDocument(ctx, d, now); err != nil {
		return nil, err
	}
	return d, nil
}

// Update applies in to the document id. When guard is not zero and is not
// the document's updated_at (at microsecond precision) it is refused with
// DOCUMENT_CONFLICT, carrying the current document; the check and the write
// are one atomic step in the store. A save that changes nothing returns the
// document as it is and records no version.
func (s *Service) Update(ctx context.Context, a quire.Actor, id string, in DocumentInput, guard time.Time) (*quire.Document, error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, err
	}
	return w.Update(ctx, id, in, guard)
}

// Update is Service.Update for the writer's actor.
func (w Writer) Update(ctx context.Context, id string, in DocumentInput, guard time.Time) (*quire.Document, error) {
	s, a := w.s, w.a
	if !validID(id) {
		return nil, documentNotFound()
	}
	r, err := s.checkRefs(ctx, a, in)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	// Blank until the save is known to change something: a save that
	// changes nothing records no event.
	ev := event("", a, now, quire.TargetDocument, id, "")
	doc, err := s.writes(ev).UpdateDocument(ctx, visibility(a), id, guard, a.User.ID, now, func(d *quire.Document) (bool, error) {
		ev.Action = ""
		before := *d
		before.Tags = slices.Clone(d.Tags)
		if err := apply(d, in, r, a, false); err != nil {
			return false, err
		}
		if sameDocument(&before, d) {
			return false, nil
		}
		ev.Action, ev.Target.Name = quire.ActionDocumentUpdated, d.Title
		ev.With("fields", changedFields(&before, d))
		// A mention notifies once: when a save adds it (package notify).
		ev.Mentions, ev.MentionsIgnored = quire.AddedMentions(before.Content, d.Content)
		return true, nil
	})
	var conflict *quire.Error
	if errors.As(err, &conflict) && conflict.Code == quire.EDOCUMENTCONFLICT && conflict.Document != nil && !guard.IsZero() {
		resent, rerr := s.resentSave(ctx, a, conflict.Document, in, r, guard)
		if rerr != nil {
			return nil, rerr
		}
		if resent {
			return conflict.Document, nil
		}
	}
	return doc, err
}

// resentSave reports whether a save refused as a conflict with cur is in
// fact already saved: a resend (a proxy's, a client's retry) of a save
// that succeeded. It is when cur's newest version is this very change:
// made by the same user, on top of the version that guard names (the one
// just before it, whose time is guard), with exactly the fields the patch
// in gives that version. Then the answer is cur, and nothing is written:
// a resent save is not a conflict with itself.
func (s *Service) resentSave(ctx context.Context, a quire.Actor, cur *quire.Document, in DocumentInput, r refs,
	guard time.Time) (bool, error) {
	if cur.Version < 2 {
		return false, nil
	}
	vis := visibility(a)
	newest, err := s.store.Version(ctx, vis, cur.ID, cur.Version)
	if isCode(err, quire.ENOTFOUND) {
		return false, nil // deleted since
	}
	if err != nil || newest.CreatedByID != a.User.ID {
		return false, err
	}
	base, err := s.store.Version(ctx, vis, cur.ID, cur.Version-1)
	if isCode(err, quire.ENOTFOUND) {
		return false, nil
	}
	if err != nil || !base.CreatedAt.Equal(guard.UTC().Truncate(time.Microsecond)) {
		return false, err
	}
	from := *cur
	from.Title, from.Content, from.ContentType, from.Summary = base.Title, base.Content, base.ContentType, base.Summary
	from.Status, from.Visibility, from.Tags = base.Status, base.Visibility, slices.Clone(base.Tags)
	from.FolderID, from.DepartmentID, from.ProjectID = base.FolderID, base.DepartmentID, base.ProjectID
	patched := from
	patched.Tags = slices.Clone(from.Tags)
	if err := apply(&patched, in, r, a, false); err != nil {
		return false, nil
	}
	return !sameDocument(&from, &patched) && sameDocument(&patched, cur), nil
}

// Delete moves a document the actor can see to the trash (trash.go), with
// its versions: from then on it is not found here.
func (s *Service) Delete(ctx context.Context, a quire.Actor, id string) error {
	w, err := s.Writer(a)
	if err != nil {
		return err
	}
	return w.Delete(ctx, id)
}

// Delete is Service.Delete for the writer's actor.
func (w Writer) Delete(ctx context.Context, id string) error {
	s, a := w.s, w.a
	if !validID(id) {
		return documentNotFound()
	}
	// Read for the event's name; the delete checks again in its own
	// transaction.
	d, err := s.store.Document(ctx, visibility(a), id)
	if err != nil {
		return err
	}
	now := s.clock()
	ev := event(quire.ActionDocumentDeleted, a, now, quire.TargetDocument, id, d.Title)
	return s.writes(ev).DeleteDocument(ctx, visibility(a), id, a.User.ID, now)
}

// Versions lists the versions of a document the actor can see, newest
// first, without content.
func (s *Service) Versions(ctx context.Context, a quire.Actor, id string) ([]quire.Version, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, documentNotFound()
	}
	return s.store.Versions(ctx, visibility(a), id)
}

// VersionAuthors returns the authors of the versions numbered from to to of
// a document the actor can see, by number: the people whose live changes a
// version made from the live text holds (product.md section 20). Versions
// not made from the live text are not in the map.
func (s *Service) VersionAuthors(ctx context.Context, a quire.Actor, id string, from, to int) (map[int][]quire.Named, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, documentNotFound()
	}
	return s.store.VersionAuthors(ctx, visibility(a), id, from, to)
}

// Version returns version n of a document the actor can see.
func (s *Service) Version(ctx context.Context, a quire.Actor, id string, n int) (*quire.Version, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	return s.version(ctx, a, id, n)
}

// version is Version once the actor's level is checked.
func (s *Service) version(ctx context.Context, a quire.Actor, id string, n int) (*quire.Version, error) {
	if !validID(id) {
		return nil, documentNotFound()
	}
	if n < 1 {
		return nil, versionNotFound()
	}
	return s.store.Version(ctx, visibility(a), id, n)
}

// Restore makes version n the current state again by recording a new
// version whose fields (title, content, content_type, summary, status,
// visibility, tags, folder_id, department_id, project_id) are those of n;
// nothing is erased. It always records a version, even when n equals the
// current state. A folder that no longer exists is restored as none. guard
// works as for Update.
func (s *Service) Restore(ctx context.Context, a quire.Actor, id string, n int, guard time.Time) (*quire.Document, error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, err
	}
	return w.Restore(ctx, id, n, guard)
}

// Restore is Service.Restore for the writer's actor.
func (w Writer) Restore(ctx context.Context, id string, n int, guard time.Time) (*quire.Document, error) {
	s, a := w.s, w.a
	v, err := s.version(ctx, a, id, n)
	if err != nil {
		return nil, err
	}
	folderID := v.FolderID
	if folderID != "" {
		if _, err := s.store.Folder(ctx, folderID); isCode(err, quire.ENOTFOUND) {
			folderID = ""
		} else if err != nil {
			return nil, err
		}
	}
	now := s.clock()
	ev := event(quire.ActionVersionRestored, a, now, quire.TargetDocument, id, v.Title).With("version", n)
	return s.writes(ev).UpdateDocument(ctx, visibility(a), id, guard, a.User.ID, now, func(d *quire.Document) (bool, error) {
		ev.Mentions, ev.MentionsIgnored = quire.AddedMentions(d.Content, v.Content)
		d.Title = v.Title
		d.Content = v.Content
		d.ContentType = v.ContentType
		d.Summary = v.Summary
		d.Status = v.Status
		d.Visibility = v.Visibility
		d.Tags = slices.Clone(v.Tags)
		if d.Tags == nil {
			d.Tags = []string{}
		}
		d.FolderID = folderID
		d.DepartmentID = v.DepartmentID
		d.ProjectID = v.ProjectID
		return true, nil
	})
}

// Diff is what changed from one version of a document to another: the
// content as a unified diff with its line counts, and the names of the
// other fields that differ (in the API's spelling).
type Diff struct {
	From, To       int
	Unified        string
	Added, Removed int
	Fields         []string
}

// diffContext is how many unchanged lines a unified diff shows around a
// change, as diff -u does.
const diffContext = 3

// Diff compares version from of a document the actor can see with version
// to, or with the current version when to is 0. Its work is bounded by
// textdiff's: linear in the two versions' size. ENOTFOUND when the
// document, or either version, is not there for the actor.
func (s *Service) Diff(ctx context.Context, a quire.Actor, id string, from, to int) (*Diff, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if to == 0 {
		d, err := s.Get(ctx, a, id)
		if err != nil {
			return nil, err
		}
		to = d.Version
	}
	va, err := s.Version(ctx, a, id, from)
	if err != nil {
		return nil, err
	}
	vb, err := s.Version(ctx, a, id, to)
	if err != nil {
		return nil, err
	}
	out := &Diff{From: from, To: to, Fields: versionFields(va, vb)}
	out.Unified, out.Added, out.Removed = textdiff.Unified(va.Content, vb.Content,
		"version "+strconv.Itoa(from), "version "+strconv.Itoa(to), diffContext)
	return out, nil
}

// versionFields names the fields other than content that differ between
// two versions, in the API's spelling and changedFields' order.
func versionFields(a, b *quire.Version) []string {
	return slices.DeleteFunc(changedFields(versionDocument(a), versionDocument(b)),
		func(f string) bool { return f == "content" })
}

// versionDocument is a version's fields as a document's.
func versionDocument(v *quire.Version) *quire.Document {
	return &quire.Document{Title: v.Title, Content: v.Content, ContentType: v.ContentType, Summary: v.Summary,
		Status: v.Status, Visibility: v.Visibility, Tags: v.Tags, FolderID: v.FolderID,
		DepartmentID: v.DepartmentID, ProjectID: v.ProjectID}
}
