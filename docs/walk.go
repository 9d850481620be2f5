package docs

import (
	"context"

	"quire"
)

// walkPage is how many documents Walk reads per query.
const walkPage = 200

// Walk calls fn with every document the actor can see, content included,
// in ID order, reading walkPage at a time: memory stays that of one page
// however many there are. An error from fn stops the walk and is returned.
func (s *Service) Walk(ctx context.Context, a quire.Actor, fn func(d *quire.Document) error) error {
	if err := require(a, quire.LevelView); err != nil {
		return err
	}
	vis := visibility(a)
	after := ""
	for {
		page, err := s.store.DocumentsAfter(ctx, vis, after, walkPage)
		if err != nil {
			return err
		}
		for i := range page {
			if err := fn(&page[i]); err != nil {
				return err
			}
		}
		if len(page) < walkPage {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// ImportTarget says what Import will do with a document whose front matter
// names id: update it (the actor sees it: existing true), create it under
// id (a free document ID), or create it under a new ID, which it returns.
func (s *Service) ImportTarget(ctx context.Context, a quire.Actor, id string) (target string, existing bool, err error) {
	if err := require(a, quire.LevelWrite); err != nil {
		return "", false, err
	}
	if !validID(id) {
		return newID(), false, nil
	}
	if _, err := s.store.Document(ctx, visibility(a), id); err == nil {
		return id, true, nil
	} else if quire.ErrorCode(err) != quire.ENOTFOUND {
		return "", false, err
	}
	if s.idTaken(ctx, id) {
		return newID(), false, nil
	}
	return id, false, nil
}
