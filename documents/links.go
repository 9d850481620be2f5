package documents

import (
	"context"
	"net/url"

	"quire"
)

// BacklinkParams selects a page of backlinks. The zero value is the first
// page of 20.
type BacklinkParams struct {
	Page, Limit int // 0: defaults (1, 20); Limit above 100 is clamped
}

// ParseBacklinkQuery reads page and limit as a list does
// (ParseListQuery); other parameters are ignored.
func ParseBacklinkQuery(q url.Values) (BacklinkParams, error) {
	errs := fieldErrors{}
	var p BacklinkParams
	p.Page, p.Limit = parsePaging(queryGetter(q, errs), errs)
	if err := errs.err(); err != nil {
		return BacklinkParams{}, err
	}
	return p, nil
}

// Backlinks returns one page of the documents the actor can see whose
// content links to the document id (quire.LinkedDocuments), most recently
// updated first, without content. ENOTFOUND when the actor cannot see the
// document itself; documents in the trash link to nothing.
func (s *Service) Backlinks(ctx context.Context, a quire.Actor, id string, p BacklinkParams) (*Page, error) {
	if _, err := s.Get(ctx, a, id); err != nil {
		return nil, err
	}
	offset, limit := window(p.Page, p.Limit)
	docs, total, err := s.store.Backlinks(ctx, quire.BacklinkFilter{Visibility: visibility(a), TargetID: id,
		Offset: offset, Limit: limit})
	if err != nil {
		return nil, err
	}
	return newPage(docs, p.Page, limit, total), nil
}
