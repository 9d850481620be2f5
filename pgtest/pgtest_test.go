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

func TestStartFrom(t *testing.T) {
	prepared := 0
	prepare := func(ctx context.Context, url string) error {
		prepared++
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, `CREATE TABLE migrated (x int); INSERT INTO migrated VALUES (1)`)
		return err
	}
	rows := func(t *testing.T, url string) int {
		var n int
		if err := connect(t, url).QueryRow(t.Context(), `SELECT count(*) FROM migrated`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("gives copies of a database prepared once, each its own", func(t *testing.T) {
		first, second := pgtest.StartFrom(t, "copies", prepare), pgtest.StartFrom(t, "copies", prepare)
		if first == second {
			t.Fatalf("two calls gave one database %s", first)
		}
		if _, err := connect(t, first).Exec(t.Context(), `INSERT INTO migrated VALUES (2)`); err != nil {
			t.Fatal(err)
		}
		if got := rows(t, first); got != 2 {
			t.Errorf("first copy has %d rows after an insert, want 2", got)
		}
		if got := rows(t, second); got != 1 {
			t.Errorf("second copy has %d rows, want the template's 1: the copies share state", got)
		}
		if third := pgtest.StartFrom(t, "copies", prepare); rows(t, third) != 1 {
			t.Errorf("a copy made after a write to another copy does not start from the template")
		}
		if prepared != 1 {
			t.Errorf("prepare ran %d times for one key, want once", prepared)
		}
	})

	t.Run("prepares a template per key", func(t *testing.T) {
		before := prepared
		pgtest.StartFrom(t, "another key", prepare)
		if prepared != before+1 {
			t.Errorf("prepare ran %d times for a new key, want once", prepared-before)
		}
	})
}
