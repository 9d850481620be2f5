package documents

import (
	"context"
	"net/url"
	"time"

	"quire"
)

// The trash (product.md section 7). Delete moves a document there; from the
// trash it is restored as it was, or deleted for good by its owner or an
// administrator, or purged once it has been there longer than the
// retention. Visibility applies in the trash exactly as outside it: the
// store filters the trash with the same quire.Visibility, so a document
// nobody else could see stays invisible to them there too.

// TrashParams selects a page of the trash (ParsePageQuery).
type TrashParams = PageParams

// PageParams selects a page of a list that takes no filter (the trash,
// the backlinks). The zero value is the first page of 20.
type PageParams struct {
	Page, Limit int // 0: defaults (1, 20); Limit above 100 is clamped
}

// ParsePageQuery reads page and limit as a list does (ParseListQuery);
// other parameters are ignored.
func ParsePageQuery(q url.Values) (PageParams, error) {
	errs := fieldErrors{}
	var p PageParams
	p.Page, p.Limit = parsePaging(queryGetter(q, errs), errs)
	if err := errs.err(); err != nil {
		return PageParams{}, err
	}
	return p, nil
}

// Trash returns one page of the documents in the trash that the actor can
// see, newest deletion first, each with DeletedAt and DeletedBy* set.
func (s *Service) Trash(ctx context.Context, a quire.Actor, p TrashParams) (*Page, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	offset, limit := window(p.Page, p.Limit)
	docs, total, err := s.store.Trash(ctx, quire.TrashFilter{Visibility: visibility(a), Offset: offset, Limit: limit})
	if err != nil {
		return nil, err
	}
	return newPage(docs, p.Page, limit, total), nil
}

// Trashed returns one document of the trash that the actor can see,
// content included.
func (s *Service) Trashed(ctx context.Context, a quire.Actor, id string) (*quire.Document, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, documentNotFound()
	}
	return s.store.TrashedDocument(ctx, visibility(a), id)
}

// RestoreFromTrash takes a document the actor can see out of the trash, as
// it was: the same version, updated_at and versions, and no new version.
// Its folder is none when that folder was deleted meanwhile. Any writer who
// can see it may restore it, as any may delete it.
func (s *Service) RestoreFromTrash(ctx context.Context, a quire.Actor, id string) (*quire.Document, error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, err
	}
	return w.RestoreFromTrash(ctx, id)
}

// RestoreFromTrash is Service.RestoreFromTrash for the writer's actor.
func (w Writer) RestoreFromTrash(ctx context.Context, id string) (*quire.Document, error) {
	s, a := w.s, w.a
	if !validID(id) {
		return nil, documentNotFound()
	}
	d, err := s.store.TrashedDocument(ctx, visibility(a), id)
	if err != nil {
		return nil, err
	}
	ev := event(quire.ActionDocumentRestored, a, s.clock(), quire.TargetDocument, id, d.Title)
	return s.writes(ev).RestoreDocument(ctx, visibility(a), id)
}

// CanPurge reports whether the actor may delete d for good: its owner or an
// administrator, with write.
func CanPurge(a quire.Actor, d *quire.Document) bool {
	return a.Can(quire.LevelWrite) && (a.User.Role.Admin || (a.User.ID != "" && d.OwnerID == a.User.ID))
}

// Purge deletes a document of the trash for good, with its versions. A
// document the actor cannot see, or one not in the trash, is NOT_FOUND;
// one the actor sees but neither owns nor administers is FORBIDDEN.
func (s *Service) Purge(ctx context.Context, a quire.Actor, id string) error {
	w, err := s.Writer(a)
	if err != nil {
		return err
	}
	return w.Purge(ctx, id)
}

// Purge is Service.Purge for the writer's actor.
func (w Writer) Purge(ctx context.Context, id string) error {
	s, a := w.s, w.a
	if !validID(id) {
		return documentNotFound()
	}
	d, err := s.store.TrashedDocument(ctx, visibility(a), id)
	if err != nil {
		return err
	}
	if !CanPurge(a, d) {
		return quire.Errorf(quire.EFORBIDDEN, "Only the owner of the document or an administrator may delete it for good")
	}
	// The owner never changes, so the check holds; the store deletes it
	// only if it is still in the trash (a restore may have come between).
	ev := event(quire.ActionDocumentPurged, a, s.clock(), quire.TargetDocument, id, d.Title)
	return s.writes(ev).PurgeDocument(ctx, visibility(a), id)
}

// PurgeBatch is how many documents one purge transaction deletes: each
// takes its versions with it, and on SQLite its text out of the full-text
// index, which the transaction holds in memory.
const PurgeBatch = 20

// PurgeExpired deletes for good the documents that have been in the trash
// longer than retention, in batches of PurgeBatch, and returns how many.
// retention 0 (or less) keeps them forever. Another node purging at the
// same time makes it stop early, leaving the rest to that node.
func (s *Service) PurgeExpired(ctx context.Context, retention time.Duration) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	before := s.clock().Add(-retention)
	total := 0
	for {
		n, err := s.store.PurgeTrash(ctx, before, PurgeBatch, func(id, title string) *quire.Event {
			// No one asked for it: the retention did.
			return quire.NewEvent(quire.ActionDocumentPurged, s.clock(), nil, quire.RequestInfo{}).
				On(quire.TargetDocument, id, title).With("via", "retention")
		})
		total += n
		if err != nil || n < PurgeBatch {
			return total, err
		}
	}
}
