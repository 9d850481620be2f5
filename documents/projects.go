package documents

import (
	"context"

	"quire"
)

// Projects returns the projects the actor may file documents in: every
// project for a role that sees all documents, else the actor's own.
func (s *Service) Projects(ctx context.Context, a quire.Actor) ([]quire.Project, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	member := a.User.ID
	if a.User.Role.Admin {
		member = ""
	}
	return s.store.Projects(ctx, member)
}
