package documents

import (
	"context"
	"time"

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
// names id and the creation time created: update it (existing true) when
// it is the same document (created is its created_at, to the microsecond)
// and the actor may write it (sees it: write is checked above); create it
// under id when no document has that id, not even one in the trash, in an
// administrator's import (a's role, or operator: the CLI's) only;
// otherwise create it under a new ID, which it returns. A document the
// actor cannot see and one that is another document get the same answer,
// so that an import tells nobody whether a document they cannot see
// exists, and never writes over another document that happens to have the
// id (a restore of an old export, a migration). An id kept for anyone
// else would tell them that no document has it, and let them take the id
// of a document an administrator's import brings later, and so read it
// (product.md section 16).
func (s *Service) ImportTarget(ctx context.Context, a quire.Actor, id string, created time.Time, operator bool) (target string, existing bool, err error) {
	if err := require(a, quire.LevelWrite); err != nil {
		return "", false, err
	}
	if !validID(id) {
		return newID(), false, nil
	}
	d, err := s.store.Document(ctx, visibility(a), id)
	switch {
	case err == nil:
		if !created.IsZero() && d.CreatedAt.Equal(created.UTC().Truncate(time.Microsecond)) {
			return id, true, nil
		}
		return newID(), false, nil
	case quire.ErrorCode(err) != quire.ENOTFOUND:
		return "", false, err
	}
	if !a.User.Role.Admin && !operator || s.idTaken(ctx, id) {
		return newID(), false, nil
	}
	return id, false, nil
}

// ImportCandidates returns the documents that an import of the actor may
// match by their place (the same archive imported again, product.md
// section 16): those the actor owns in the folder folderID ("" for those
// in no folder), without their content, oldest first.
func (s *Service) ImportCandidates(ctx context.Context, a quire.Actor, folderID string) ([]quire.Document, error) {
	if err := require(a, quire.LevelWrite); err != nil {
		return nil, err
	}
	f := quire.DocumentFilter{Visibility: visibility(a), FolderID: folderID, NoFolder: folderID == "", SortBy: "created_at"}
	list, _, err := s.store.ListDocuments(ctx, f)
	if err != nil {
		return nil, err
	}
	mine := list[:0]
	for _, d := range list {
		if d.OwnerID == a.User.ID {
			mine = append(mine, d)
		}
	}
	return mine, nil
}
