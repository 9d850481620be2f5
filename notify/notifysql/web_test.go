package notifysql_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"quire"
	"quire/pgtest"
	"quire/postgres"
	"quire/sqlite"
	"quire/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// store is what the test needs of a store: both engines' have it.
type store interface {
	quire.Store
	WatchState(ctx context.Context, userID string, folder bool, id string) (bool, quire.Named, error)
}

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func TestWatchState(t *testing.T) {
	engines := map[string]func(t *testing.T) store{
		"sqlite": func(t *testing.T) store {
			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "quire.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		"postgres": func(t *testing.T) store {
			db, err := postgres.Open(t.Context(), pgtest.Start(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	}
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			ctx := t.Context()
			ada := storetest.NewEditor(t, s, "ada@example.com")
			newID := func() string { return uuid.Must(uuid.NewV7()).String() }
			top, mid, low := &quire.Folder{ID: newID(), Name: "Top"}, &quire.Folder{ID: newID(), Name: "Mid"}, &quire.Folder{ID: newID(), Name: "Low"}
			mid.ParentID, low.ParentID = top.ID, mid.ID
			for _, f := range []*quire.Folder{top, mid, low} {
				if err := s.CreateFolder(ctx, f, t0); err != nil {
					t.Fatal(err)
				}
			}
			d := &quire.Document{ID: newID(), Title: "Plan", ContentType: "markdown", Status: "draft", Visibility: "public",
				OwnerID: ada.ID, FolderID: low.ID, Tags: []string{}}
			if err := s.CreateDocument(ctx, d, t0); err != nil {
				t.Fatal(err)
			}
			type state struct {
				Watching bool
				Through  string
			}
			states := func() []state {
				var out []state
				for _, q := range []struct {
					folder bool
					id     string
				}{{false, d.ID}, {true, low.ID}, {true, top.ID}} {
					w, through, err := s.WatchState(ctx, ada.ID, q.folder, q.id)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, state{w, through.Name})
				}
				return out
			}
			if diff := cmp.Diff([]state{{}, {}, {}}, states()); diff != "" {
				t.Errorf("watching nothing (-want +got):\n%s", diff)
			}
			watch := func(folder bool, id string, on bool) {
				if err := s.Watch(ctx, ada.ID, folder, id, on, t0); err != nil {
					t.Fatal(err)
				}
			}
			watch(true, top.ID, true)
			if diff := cmp.Diff([]state{{Through: "Top"}, {Through: "Top"}, {Watching: true}}, states()); diff != "" {
				t.Errorf("watching the top folder (-want +got):\n%s", diff)
			}
			watch(true, mid.ID, true)
			watch(false, d.ID, true)
			if diff := cmp.Diff([]state{{Watching: true}, {Through: "Mid"}, {Watching: true}}, states()); diff != "" {
				t.Errorf("watching the document, the middle and the top folder: the nearest (-want +got):\n%s", diff)
			}
			if w, through, err := s.WatchState(ctx, ada.ID, false, newID()); err != nil || w || through.ID != "" {
				t.Errorf("an unknown document: %v %v %v", w, through, err)
			}
		})
	}
}
