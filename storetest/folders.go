package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() { register("folders", testFolders) }

// newFolder creates a folder named name under parent ("" for the top).
func newFolder(t *testing.T, s quire.Store, name, parent string, now time.Time) *quire.Folder {
	t.Helper()
	f := &quire.Folder{Name: name, ParentID: parent}
	if err := s.CreateFolder(t.Context(), f, now); err != nil {
		t.Fatalf("create folder %q: %v", name, err)
	}
	return f
}

// wantParentRefused fails the test unless err is a VALIDATION_ERROR whose
// only field is parent_id.
func wantParentRefused(t *testing.T, err error) {
	t.Helper()
	var e *quire.Error
	if !errors.As(err, &e) || e.Code != quire.EVALIDATION {
		t.Fatalf("error = %v, want %s", err, quire.EVALIDATION)
	}
	if _, ok := e.Fields["parent_id"]; !ok || len(e.Fields) != 1 {
		t.Errorf("fields = %v, want parent_id alone", e.Fields)
	}
}

func testFolders(t *testing.T, open Opener) {
	t.Run("created folders read back and list by name", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		now := baseTime.Add(1500 * time.Nanosecond)
		top := newFolder(t, s, "zeta", "", now)
		child := newFolder(t, s, "Alpha", top.ID, baseTime.Add(time.Second))
		other := newFolder(t, s, "beta", "", baseTime.Add(2*time.Second))
		at := now.Truncate(time.Microsecond)
		wantTop := quire.Folder{ID: top.ID, Name: "zeta", CreatedAt: at, UpdatedAt: at}
		if top.ID == "" {
			t.Fatal("CreateFolder left ID empty")
		}
		if diff := cmp.Diff(wantTop, *top); diff != "" {
			t.Errorf("created folder (-want +got):\n%s", diff)
		}
		got := must(s.Folder(ctx, top.ID))(t)
		if diff := cmp.Diff(wantTop, *got); diff != "" {
			t.Errorf("Folder (-want +got):\n%s", diff)
		}
		all := must(s.Folders(ctx))(t)
		if diff := cmp.Diff([]quire.Folder{*child, *other, *top}, all); diff != "" {
			t.Errorf("Folders, by name ignoring case (-want +got):\n%s", diff)
		}
		_, err := s.Folder(ctx, "no such folder")
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a store without folders lists none", func(t *testing.T) {
		all := must(open(t).Folders(t.Context()))(t)
		if len(all) != 0 {
			t.Errorf("Folders = %v, want none", all)
		}
	})

	t.Run("a NUL in a name is refused by name, and in an id or a parent finds nothing, on every store", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		nul := map[string]string{"name": "must not contain the NUL character"}
		wantFields(t, s.CreateFolder(ctx, &quire.Folder{Name: "a\x00b"}, baseTime), nul)
		wantFields(t, s.CreateFolder(ctx, &quire.Folder{Name: "a", ParentID: "p\x00"}, baseTime),
			map[string]string{"parent_id": "does not exist"})
		f := newFolder(t, s, "real", "", baseTime)
		renamed := *f
		renamed.Name = "x\x00"
		wantFields(t, s.UpdateFolder(ctx, &renamed, baseTime.Add(time.Second)), nul)
		_, err := s.Folder(ctx, f.ID+"\x00")
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, s.DeleteFolder(ctx, f.ID+"\x00"), quire.ENOTFOUND)
		if all, err := s.Folders(ctx); err != nil || len(all) != 1 || all[0] != *f {
			t.Errorf("Folders after refusals = %+v, %v; want only %+v", all, err, *f)
		}
	})

	t.Run("an unknown parent is refused on create and update", func(t *testing.T) {
		s := open(t)
		err := s.CreateFolder(t.Context(), &quire.Folder{Name: "orphan", ParentID: "0193b3a0-0000-7000-8000-000000000009"}, baseTime)
		wantFields(t, err, map[string]string{"parent_id": "does not exist"})
		f := newFolder(t, s, "real", "", baseTime)
		f.ParentID = "0193b3a0-0000-7000-8000-000000000009"
		wantFields(t, s.UpdateFolder(t.Context(), f, baseTime.Add(time.Second)), map[string]string{"parent_id": "does not exist"})
		all := must(s.Folders(t.Context()))(t)
		if len(all) != 1 || all[0].ParentID != "" {
			t.Errorf("Folders after refusals = %+v, want the one top folder", all)
		}
	})

	t.Run("an update renames and moves, and fills the times", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		a := newFolder(t, s, "a", "", baseTime)
		b := newFolder(t, s, "b", "", baseTime)
		moved := &quire.Folder{ID: b.ID, Name: "b renamed", ParentID: a.ID}
		if err := s.UpdateFolder(ctx, moved, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		want := quire.Folder{ID: b.ID, Name: "b renamed", ParentID: a.ID, CreatedAt: baseTime, UpdatedAt: baseTime.Add(time.Minute)}
		if diff := cmp.Diff(want, *moved); diff != "" {
			t.Errorf("updated folder (-want +got):\n%s", diff)
		}
		got := must(s.Folder(ctx, b.ID))(t)
		if diff := cmp.Diff(want, *got); diff != "" {
			t.Errorf("Folder after update (-want +got):\n%s", diff)
		}
		// Back to the top.
		moved.ParentID = ""
		if err := s.UpdateFolder(ctx, moved, baseTime.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Folder(ctx, b.ID); err != nil || got.ParentID != "" {
			t.Errorf("Folder after moving to the top = %+v, %v", got, err)
		}
		wantCode(t, s.UpdateFolder(ctx, &quire.Folder{ID: "no such folder", Name: "x"}, baseTime), quire.ENOTFOUND)
	})

	t.Run("a folder cannot move into itself or below itself", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		top := newFolder(t, s, "top", "", baseTime)
		mid := newFolder(t, s, "mid", top.ID, baseTime)
		leaf := newFolder(t, s, "leaf", mid.ID, baseTime)
		for _, tc := range []struct {
			name           string
			folder, parent *quire.Folder
		}{
			{"itself", top, top},
			{"its child", top, mid},
			{"its grandchild", top, leaf},
			{"a leaf into itself", leaf, leaf},
			{"a middle folder into its child", mid, leaf},
		} {
			f := *tc.folder
			f.ParentID = tc.parent.ID
			err := s.UpdateFolder(ctx, &f, baseTime.Add(time.Second))
			if err == nil {
				t.Errorf("moving %s: no error", tc.name)
				continue
			}
			wantParentRefused(t, err)
		}
		all := must(s.Folders(ctx))(t)
		if diff := cmp.Diff([]quire.Folder{*leaf, *mid, *top}, all); diff != "" {
			t.Errorf("folders after refused moves (-want +got):\n%s", diff)
		}
		// Moving a leaf under a sibling branch is fine.
		other := newFolder(t, s, "other", "", baseTime)
		f := *leaf
		f.ParentID = other.ID
		if err := s.UpdateFolder(ctx, &f, baseTime.Add(time.Second)); err != nil {
			t.Errorf("moving the leaf under another top folder: %v", err)
		}
	})

	t.Run("only an empty folder can be deleted", func(t *testing.T) {
		s, owner := openWithUser(t, open, "owner@example.com", "editor")
		ctx := t.Context()
		parent := newFolder(t, s, "parent", "", baseTime)
		child := newFolder(t, s, "child", parent.ID, baseTime)
		// A private document of someone else keeps the folder too.
		d := &quire.Document{Title: "inside", ContentType: "plain", Status: "draft", Visibility: "private",
			OwnerID: owner.ID, FolderID: child.ID}
		if err := s.CreateDocument(ctx, d, baseTime); err != nil {
			t.Fatal(err)
		}
		for _, f := range []*quire.Folder{parent, child} {
			err := s.DeleteFolder(ctx, f.ID)
			wantCode(t, err, quire.EFOLDERNOTEMPTY)
			if msg := quire.ErrorMessage(err); msg != "The folder still holds documents or folders" {
				t.Errorf("message = %q", msg)
			}
		}
		if _, err := s.UpdateDocument(ctx, quire.Visibility{All: true}, d.ID, time.Time{}, owner.ID, baseTime.Add(time.Second),
			func(d *quire.Document) (bool, error) { d.FolderID = ""; return true, nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteFolder(ctx, child.ID); err != nil {
			t.Fatalf("delete the emptied child: %v", err)
		}
		if err := s.DeleteFolder(ctx, parent.ID); err != nil {
			t.Fatalf("delete the parent once its child is gone: %v", err)
		}
		for _, f := range []*quire.Folder{parent, child} {
			_, err := s.Folder(ctx, f.ID)
			wantCode(t, err, quire.ENOTFOUND)
			wantCode(t, s.DeleteFolder(ctx, f.ID), quire.ENOTFOUND)
		}
		// Versions may still name the deleted folder; the document is intact.
		v := must(s.Version(ctx, quire.Visibility{All: true}, d.ID, 1))(t)
		if v.FolderID != child.ID {
			t.Errorf("version 1 folder = %q, want the deleted folder %q", v.FolderID, child.ID)
		}
	})
}
