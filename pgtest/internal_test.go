package pgtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestFindBinDir(t *testing.T) {
	notOnPath := func(string) (string, error) { return "", exec.ErrNotFound }
	// install makes dir/initdb and dir/postgres, or only the names given.
	install := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		if len(names) == 0 {
			names = []string{"initdb", "postgres"}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("nothing anywhere is unavailable, a reason to skip", func(t *testing.T) {
		_, err := findBinDirIn(notOnPath, filepath.Join(t.TempDir(), "*", "bin"))
		var ue *unavailableError
		if !errors.As(err, &ue) {
			t.Errorf("error %v, want an unavailableError", err)
		}
	})

	t.Run("the newest major version wins, and a directory without postgres is passed over", func(t *testing.T) {
		root := t.TempDir()
		install(t, filepath.Join(root, "9.6", "bin"))
		install(t, filepath.Join(root, "15", "bin"))
		install(t, filepath.Join(root, "16", "bin"), "initdb")
		got, err := findBinDirIn(notOnPath, filepath.Join(root, "*", "bin"))
		if want := filepath.Join(root, "15", "bin"); err != nil || got != want {
			t.Errorf("got %q, %v; want %q", got, err, want)
		}
	})

	t.Run("initdb on PATH is followed through its symlink", func(t *testing.T) {
		root := t.TempDir()
		real := filepath.Join(root, "lib", "bin")
		install(t, real)
		link := filepath.Join(root, "usr-bin")
		if err := os.MkdirAll(link, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(real, "initdb"), filepath.Join(link, "initdb")); err != nil {
			t.Fatal(err)
		}
		onPath := func(name string) (string, error) {
			if name == "initdb" {
				return filepath.Join(link, "initdb"), nil
			}
			return "", exec.ErrNotFound
		}
		got, err := findBinDirIn(onPath, filepath.Join(root, "none", "*"))
		if err != nil || got != real {
			t.Errorf("got %q, %v; want %q", got, err, real)
		}
	})
}

// TestExternal drives the QUIRE_TEST_POSTGRES_URL mode against the server
// this process started: databases are created beside the URL's own.
func TestExternal(t *testing.T) {
	Start(t) // makes sure srv runs (or skips)
	ext, err := external(srv.adminURL.String())
	if err != nil {
		t.Fatal(err)
	}
	defer ext.stop()
	var name string
	t.Run("a database is created and is dropped when its test ends", func(t *testing.T) {
		url, err := ext.createDatabase(t, "")
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(t.Context(), `SELECT current_database()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	var exists bool
	if err := ext.admin.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if name == "" || exists {
		t.Errorf("database %q exists = %v after its test, want dropped", name, exists)
	}
	if _, err := external("mysql://x"); err == nil {
		t.Error("a non-postgres URL was accepted")
	}
}
