package share

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"

	"quire"
	"quire/documents"
)

// Access is a share that works, and whom it reads as: its creator, whose
// rights as of now (role, department, projects, the document's visibility)
// decide what it shows.
type Access struct {
	Share quire.Share
	As    quire.Actor
}

// ErrGone is the one answer to every refused use of a share: unknown or
// malformed token, revoked, expired, document in the trash, sharing off,
// creator disabled or no longer allowed to see the document.
var ErrGone = quire.Errorf(quire.ENOTFOUND, "Not found")

// Open checks token on a request of its pages, all of it, every time: the
// share exists and has not expired, its document is out of the trash,
// sharing is on and its creator is active (one query), and the creator may
// still read the document (the documents service, with the creator's
// visibility in its query). It returns the share and the document, or
// ErrGone; an error of the database is returned as it is.
func (s *Service) Open(ctx context.Context, token string) (*Access, *quire.Document, error) {
	if !wellFormed(token) {
		return nil, nil, ErrGone
	}
	sum := sha256.Sum256([]byte(token))
	sh, creator, err := s.store.WorkingShare(ctx, sum[:], s.now())
	if err != nil {
		return nil, nil, Gone(err)
	}
	if subtle.ConstantTimeCompare(sh.TokenHash, sum[:]) != 1 {
		return nil, nil, ErrGone
	}
	acc := &Access{Share: *sh, As: quire.Actor{User: *creator}}
	doc, err := s.docs.Get(ctx, acc.As, sh.DocumentID)
	if err != nil {
		return nil, nil, Gone(err)
	}
	return acc, doc, nil
}

// Gone is ErrGone for a refusal (NOT_FOUND, FORBIDDEN), err otherwise.
func Gone(err error) error {
	switch quire.ErrorCode(err) {
	case quire.ENOTFOUND, quire.EFORBIDDEN:
		return ErrGone
	}
	return err
}

// MaxLinked is how many of the documents a shared page links to are
// looked up for shares of their own; links past them are left unlinked.
const MaxLinked = 50

// Linked returns, of the documents ids (those a shared page links to),
// the paths of the share pages of those that as (the creator of the share
// being viewed) may see now and that are shared by a share that works now,
// as Open would find it. A document with none is absent: a share never
// hands out the link of a document its own creator cannot see.
func (s *Service) Linked(ctx context.Context, as quire.Actor, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) > MaxLinked {
		ids = ids[:MaxLinked]
	}
	if len(ids) == 0 {
		return out, nil
	}
	shares, creators, err := s.store.WorkingSharesOf(ctx, documents.VisibilityOf(as), ids, s.now())
	if err != nil || len(shares) == 0 {
		return out, err
	}
	for i, sh := range shares {
		if _, done := out[sh.DocumentID]; done {
			continue
		}
		if _, err := s.docs.Get(ctx, quire.Actor{User: creators[i]}, sh.DocumentID); err != nil {
			if Gone(err) == ErrGone {
				continue
			}
			return nil, err
		}
		token, err := s.cfg.Key.Open(sealPurpose, sh.TokenSealed, []byte(sh.ID))
		if err != nil {
			continue
		}
		out[sh.DocumentID] = Path(string(token))
	}
	return out, nil
}
