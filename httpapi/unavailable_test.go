package httpapi

import (
	"context"
	"testing"
	"time"

	"quire"
	"quire/pgtest"
	"quire/postgres"
)

// TestUnreachableDatabase cuts a PostgreSQL node off its database, as a
// database restart would: readiness turns 503 and requests get 503
// UNAVAILABLE at once, neither a hang nor a 500. SQLite, a file, has no such
// state, so this runs in the PostgreSQL run only.
func TestUnreachableDatabase(t *testing.T) {
	t.Parallel()
	onlyOn(t, "postgres", "a SQLite file cannot become unreachable")
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

	if err := pgtest.CutOff(t, dbURL); err != nil {
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
			if r.Header.Get("Retry-After") == "" {
				t.Error("a 503 without Retry-After")
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v to answer", d)
			}
		})
	}
	if healthy := e.do("GET", "/healthz"); healthy.Status != 200 {
		t.Errorf("healthz %d: the process is alive", healthy.Status)
	}
}
