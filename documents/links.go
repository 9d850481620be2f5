package documents

import (
	"context"

	"quire"
)

// BacklinkParams selects a page of backlinks (ParsePageQuery).
type BacklinkParams = PageParams

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
