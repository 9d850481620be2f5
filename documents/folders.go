package documents

import (
	"context"

	"quire"
)

// Folders lists every folder: folders are seen by everyone with view, and
// reveal nothing about the documents in them.
func (s *Service) Folders(ctx context.Context, a quire.Actor) ([]quire.Folder, error) {
	if err := require(a, quire.LevelView); err != nil {
		return nil, err
	}
	fs, err := s.store.Folders(ctx)
	if fs == nil && err == nil {
		fs = []quire.Folder{}
	}
	return fs, err
}

// CreateFolder validates in (name 1 to 200 characters after trimming, an
// existing parent or none) and stores a new folder.
func (s *Service) CreateFolder(ctx context.Context, a quire.Actor, in FolderInput) (*quire.Folder, error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, err
	}
	return w.CreateFolder(ctx, in)
}

// CreateFolder is Service.CreateFolder for the writer's actor.
func (w Writer) CreateFolder(ctx context.Context, in FolderInput) (*quire.Folder, error) {
	s, a := w.s, w.a
	f := &quire.Folder{}
	if err := s.applyFolder(ctx, f, in, true); err != nil {
		return nil, err
	}
	now := s.clock()
	f.ID = newID()
	ev := event(quire.ActionFolderCreated, a, now, quire.TargetFolder, f.ID, f.Name)
	if err := s.writes(ev).CreateFolder(ctx, f, now); err != nil {
		return nil, err
	}
	return f, nil
}

// UpdateFolder renames or moves a folder. A parent that is the folder or
// one of its descendants is refused (by the store, in the transaction of
// the write). An update that changes nothing writes nothing.
func (s *Service) UpdateFolder(ctx context.Context, a quire.Actor, id string, in FolderInput) (*quire.Folder, error) {
	w, err := s.Writer(a)
	if err != nil {
		return nil, err
	}
	return w.UpdateFolder(ctx, id, in)
}

// UpdateFolder is Service.UpdateFolder for the writer's actor.
func (w Writer) UpdateFolder(ctx context.Context, id string, in FolderInput) (*quire.Folder, error) {
	s, a := w.s, w.a
	if !validID(id) {
		return nil, folderNotFound()
	}
	f, err := s.store.Folder(ctx, id)
	if err != nil {
		return nil, err
	}
	before := *f
	if err := s.applyFolder(ctx, f, in, false); err != nil {
		return nil, err
	}
	if *f == before {
		return f, nil
	}
	now := s.clock()
	ev := event(quire.ActionFolderUpdated, a, now, quire.TargetFolder, f.ID, f.Name)
	if f.Name != before.Name {
		ev.With("name", map[string]string{"from": before.Name, "to": f.Name})
	}
	if f.ParentID != before.ParentID {
		ev.With("parentId", map[string]string{"from": before.ParentID, "to": f.ParentID})
	}
	if err := s.writes(ev).UpdateFolder(ctx, f, now); err != nil {
		return nil, err
	}
	return f, nil
}

// DeleteFolder deletes an empty folder; one that still holds documents or
// folders is FOLDER_NOT_EMPTY.
func (s *Service) DeleteFolder(ctx context.Context, a quire.Actor, id string) error {
	w, err := s.Writer(a)
	if err != nil {
		return err
	}
	return w.DeleteFolder(ctx, id)
}

// DeleteFolder is Service.DeleteFolder for the writer's actor.
func (w Writer) DeleteFolder(ctx context.Context, id string) error {
	s, a := w.s, w.a
	if !validID(id) {
		return folderNotFound()
	}
	f, err := s.store.Folder(ctx, id)
	if err != nil {
		return err
	}
	ev := event(quire.ActionFolderDeleted, a, s.clock(), quire.TargetFolder, id, f.Name)
	return s.writes(ev).DeleteFolder(ctx, id)
}
