package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"quire/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestStart(t *testing.T) {
	t.Run("gives an empty database that accepts writes", func(t *testing.T) {
		conn := connect(t, pgtest.Start(t))
		var tables int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("new database has %d tables, want 0", tables)
		}
		if _, err := conn.Exec(t.Context(), `CREATE TABLE t (x int)`); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("gives each call its own database, dropped when its test ends", func(t *testing.T) {
		var first string
		t.Run("first", func(t *testing.T) {
			conn := connect(t, pgtest.Start(t))
			if err := conn.QueryRow(t.Context(), `SELECT current_database()`).Scan(&first); err != nil {
				t.Fatal(err)
			}
		})
		conn := connect(t, pgtest.Start(t))
		var second string
		var firstExists bool
		err := conn.QueryRow(t.Context(), `SELECT current_database(), EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, first).
			Scan(&second, &firstExists)
		if err != nil {
			t.Fatal(err)
		}
		if first == "" || first == second {
			t.Errorf("databases %q and %q, want two different names", first, second)
		}
		if firstExists {
			t.Errorf("database %s still exists after its test ended", first)
		}
	})
}
