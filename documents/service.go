// Package docs holds the rules of quire's documents: who may read or change
// what (the role's level on docs.documents, then the document's visibility),
// how a document, a patch or a folder is validated, how a list query is read,
// and what a save records as a version.
//
// Every method takes the quire.Actor explicitly. Visibility is never decided
// here after the fact: the Service builds one quire.Visibility from the actor
// and hands it to the store, which applies it inside every query, so that a
// document the actor may not see is ENOTFOUND everywhere and is never counted.
package documents

import (
	"context"
	"errors"
	"time"

	"quire"
)

// Store is what the Service needs from persistence. quire.Store satisfies it.
type Store interface {
	quire.DocumentStore
	quire.TrashStore
	quire.FolderStore
	quire.UserStore
	quire.AuditLog
	quire.LinkStore
	// VersionAuthors is quire.LiveStore's: the authors of the versions
	// made from the live text.
	VersionAuthors(ctx context.Context, vis quire.Visibility, id string, from, to int) (map[int][]quire.Named, error)
}

// Config configures a Service.
type Config struct {
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
}

// Service applies the documents rules over a Store.
type Service struct {
	store Store
	now   func() time.Time
	// keep is the idempotency of the one change of a Service Keeping
	// returned; nil for every other.
	keep *quire.Keep
}

// New returns a Service over store.
func New(store Store, cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// Keeping returns the Service whose change keeps k's answer in the
// change's own transaction (quire.IdempotencyStore.Keeping): a request
// holding an idempotency key makes one change through it. A nil k: s.
func (s *Service) Keeping(k *quire.Keep) *Service {
	return quire.WithKeep(s, k, func(c *Service) **quire.Keep { return &c.keep })
}

// writes is the store a change is written to: recording evs, keeping the
// answer of s.keep when there is one.
func (s *Service) writes(evs ...*quire.Event) quire.Store {
	return s.store.Recording(evs...).Keeping(s.keep)
}

// visibility is the one filter of what the actor may see: admins (roles that
// "see all documents") everything, others their own documents, public ones,
// their department's and their projects'.
func visibility(a quire.Actor) quire.Visibility {
	return quire.Visibility{
		All:          a.User.Role.Admin,
		UserID:       a.User.ID,
		DepartmentID: a.User.DepartmentID,
	}
}

// Writer is the Service for an actor whose role has write on
// docs.documents, checked once by Service.Writer: its changes check it no
// more. A handler takes one before it reads a body, so that a caller
// without the level learns nothing else; each Service method that changes
// something takes one for its actor.
type Writer struct {
	s *Service
	a quire.Actor
}

// Writer returns the Writer for the actor, or FORBIDDEN when its role
// lacks write.
func (s *Service) Writer(a quire.Actor) (Writer, error) {
	if err := require(a, quire.LevelWrite); err != nil {
		return Writer{}, err
	}
	return Writer{s: s, a: a}, nil
}

// Keeping is Service.Keeping for the writer's change.
func (w Writer) Keeping(k *quire.Keep) Writer { return Writer{s: w.s.Keeping(k), a: w.a} }

// Require refuses with FORBIDDEN an actor whose role lacks level on
// docs.documents. Every method checks it before anything else, so a caller
// without the level learns nothing about which documents exist; a handler
// may call it before reading a body, for the same answer.
func Require(a quire.Actor, level quire.Level) error {
	return require(a, level)
}

func require(a quire.Actor, level quire.Level) error {
	if a.User.ID == "" || !a.Can(level) {
		return quire.Errorf(quire.EFORBIDDEN, "Your role does not allow this")
	}
	return nil
}

func documentNotFound() error { return quire.Errorf(quire.ENOTFOUND, "Document not found") }
func versionNotFound() error  { return quire.Errorf(quire.ENOTFOUND, "Version not found") }
func folderNotFound() error   { return quire.Errorf(quire.ENOTFOUND, "Folder not found") }

// isCode reports whether err is a *quire.Error with code.
func isCode(err error, code string) bool {
	var e *quire.Error
	return errors.As(err, &e) && e.Code == code
}

// validID is quire.ValidID, under the short name the package uses.
func validID(s string) bool { return quire.ValidID(s) }

// clock returns the time of a save, at the contract's precision.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// departmentExists reports whether a department has that id.
func (s *Service) departmentExists(ctx context.Context, id string) (bool, error) {
	deps, err := s.store.Departments(ctx)
	if err != nil {
		return false, err
	}
	for _, d := range deps {
		if d.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// projectOK reports whether the actor may put a document in the project:
// an admin when it exists, anyone else when a member of it.
func (s *Service) projectOK(ctx context.Context, a quire.Actor, id string) (bool, error) {
	member, err := s.store.IsProjectMember(ctx, id, a.User.ID)
	if isCode(err, quire.ENOTFOUND) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return member || a.User.Role.Admin, nil
}

// VisibilityOf is the filter of what the actor may see, for the
// capabilities whose records are seen exactly as their document is (the
// files of package attachments): one rule, here.
func VisibilityOf(a quire.Actor) quire.Visibility { return visibility(a) }

// ValidID reports whether s has the form of the identifiers quire issues.
func ValidID(s string) bool { return validID(s) }
