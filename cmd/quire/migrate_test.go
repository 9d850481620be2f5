package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"quire/pgtest"
)

// TestMigrationsAreReportedAndANewerSchemaRefused: quire migrate and quire
// serve say which migrations they applied, and on a database that a newer
// quire migrated (a migration this binary does not know) every command
// refuses to start, in one line, before it writes anything.
func TestMigrationsAreReportedAndANewerSchemaRefused(t *testing.T) {
	t.Parallel()
	stores := map[string]struct {
		db   func(t *testing.T) string
		exec func(t *testing.T, db, sql string)
	}{
		"sqlite": {
			db: func(t *testing.T) string { return filepath.Join(t.TempDir(), "quire.db") },
			exec: func(t *testing.T, db, query string) {
				conn, err := sql.Open("sqlite", db)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := conn.Exec(query); err != nil {
					t.Fatal(err)
				}
			},
		},
		"postgres": {
			db: func(t *testing.T) string { return pgtest.Start(t) },
			exec: func(t *testing.T, db, query string) {
				conn, err := pgx.Connect(context.Background(), db)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(context.Background())
				if _, err := conn.Exec(context.Background(), query); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for name, st := range stores {
		t.Run(name, func(t *testing.T) {
			db := st.db(t)
			getenv := env(map[string]string{"QUIRE_DB": db})
			out := mustCLI(t, getenv, "migrate")
			if !strings.HasPrefix(out, "applied 0001_core.sql\n") || !strings.HasSuffix(out, "database is up to date\n") {
				t.Errorf("first quire migrate printed %q, want every migration applied", out)
			}
			if out := mustCLI(t, getenv, "migrate"); out != "database is up to date\n" {
				t.Errorf("second quire migrate printed %q, want nothing applied", out)
			}

			s := startServe(t, getenv)
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s.stderr.String(), `"msg":"database schema is up to date"`) {
				t.Errorf("serve on a migrated database did not say so: %s", s.stderr.String())
			}

			st.exec(t, db, `INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_the_future.sql', `+
				map[string]string{"sqlite": "1", "postgres": "now()"}[name]+`)`)
			for _, args := range [][]string{{"serve"}, {"migrate"}, {"user", "list"}} {
				var stdout, stderr string
				var err error
				if args[0] == "serve" {
					stdout, stderr, err = serveRefused(t, getenv)
				} else {
					stdout, stderr, err = cli(t, getenv, args...)
				}
				wantOneLineError(t, args, stdout, stderr, err)
				if err == nil || !strings.Contains(err.Error(), "schema is newer than this quire: it has migration 9999_from_the_future.sql") {
					t.Errorf("quire %s on a newer schema: %v", strings.Join(args, " "), err)
				}
			}
		})
	}
}

// TestServeLogsTheMigrationsItApplied: the first start on an empty database
// logs the migrations it ran.
func TestServeLogsTheMigrationsItApplied(t *testing.T) {
	t.Parallel()
	getenv := env(map[string]string{"QUIRE_DB": filepath.Join(t.TempDir(), "quire.db")})
	s := startServe(t, getenv)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"applied migrations"`) {
			line = l
		}
	}
	if !strings.Contains(line, `"0001_core.sql"`) || !strings.Contains(line, `"0022_fts_source_portable.sql"`) {
		t.Errorf("serve's log of the migrations it applied: %q", line)
	}
}
