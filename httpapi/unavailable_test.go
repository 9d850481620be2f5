package httpapi

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"quire"
	"quire/pgtest"
	"quire/postgres"
)

// TestUnreachableDatabase cuts a PostgreSQL node off its database, as a
// database restart would: readiness turns 503 and requests get 503
// UNAVAILABLE at once, neither a hang nor a 500. SQLite, a file, has no such
// state, so this runs in the PostgreSQL run only.
func TestUnreachableDatabase(t *testing.T) {
	if current.name != "postgres" {
		t.Skip("a SQLite file cannot become unreachable")
	}
	dbURL := pgtest.Start(t)
	e := newEnv(t, withStore(func(t testing.TB) quire.Store {
		db, err := postgres.Open(context.Background(), dbURL)
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}))
	e.user("ada@example.com", "editor", "")
	token := e.login("ada@example.com")

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	dbName := u.Path[1:]
	name := pgx.Identifier{dbName}.Sanitize()
	u.Path = "/postgres"
	conn, err := pgx.Connect(t.Context(), u.String())
	if err != nil {
		t.Fatalf("maintenance connection: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS true`)
	if _, err := conn.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, dbName); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, method, path string
		opts               []reqOpt
	}{
		{"readiness", "GET", "/readyz", nil},
		{"an authenticated read", "GET", "/api/auth/me", []reqOpt{bearer(token)}},
		{"a list", "GET", "/api/documentation/documents", []reqOpt{bearer(token)}},
		{"a sign-in", "POST", "/api/auth/login", []reqOpt{creds("ada@example.com", testPassword)}},
	} {
		t.Run(tc.name+" is 503 UNAVAILABLE", func(t *testing.T) {
			start := time.Now()
			r := e.withT(t).do(tc.method, tc.path, tc.opts...)
			e.withT(t).wantError(r, 503, "UNAVAILABLE")
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v to answer", d)
			}
		})
	}
	if healthy := e.do("GET", "/healthz"); healthy.Status != 200 {
		t.Errorf("healthz %d: the process is alive", healthy.Status)
	}
}
