package idempotency_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/idempotency"
	"quire/internal/sqlitetest"
	"quire/sqlite"
)

func newService(t *testing.T) (*idempotency.Service, string, *time.Time) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "editor"}, Status: quire.UserActive}
	if err := db.CreateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := idempotency.New(db, idempotency.Config{Lease: time.Minute, Now: func() time.Time { return now }})
	return s, u.ID, &now
}

func TestFinish(t *testing.T) {
	fp := idempotency.Fingerprint("POST", "/api/documentation/documents", []byte(`{"title":"x"}`))
	t.Run("a server error releases the key: the retry runs", func(t *testing.T) {
		s, user, _ := newService(t)
		req, _, err := s.Begin(t.Context(), user, "k", fp)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.Finish(t.Context(), quire.IdempotentAnswer{Status: 503}); err != nil {
			t.Fatal(err)
		}
		if req, kept, err := s.Begin(t.Context(), user, "k", fp); err != nil || kept != nil || req == nil {
			t.Fatalf("retry: %v %v %v", req, kept, err)
		}
	})
	t.Run("a refusal of the caller's role releases the key: it is not replayed", func(t *testing.T) {
		s, user, _ := newService(t)
		req, _, err := s.Begin(t.Context(), user, "k", fp)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.Finish(t.Context(), quire.IdempotentAnswer{Status: 403, Body: []byte(`{"code":"FORBIDDEN"}`)}); err != nil {
			t.Fatal(err)
		}
		if req, kept, err := s.Begin(t.Context(), user, "k", fp); err != nil || kept != nil || req == nil {
			t.Fatalf("retry: %v %v %v", req, kept, err)
		}
	})
	t.Run("a refusal is kept and replayed", func(t *testing.T) {
		s, user, _ := newService(t)
		req, _, err := s.Begin(t.Context(), user, "k", fp)
		if err != nil {
			t.Fatal(err)
		}
		want := quire.IdempotentAnswer{Status: 400, Header: map[string]string{}, Body: []byte(`{"code":"VALIDATION_ERROR"}`)}
		if err := req.Finish(t.Context(), want); err != nil {
			t.Fatal(err)
		}
		_, kept, err := s.Begin(t.Context(), user, "k", fp)
		if err != nil || kept == nil || kept.Status != 400 || string(kept.Body) != string(want.Body) {
			t.Fatalf("repeat: %+v %v", kept, err)
		}
	})
	t.Run("prune removes kept answers after 24 hours", func(t *testing.T) {
		s, user, now := newService(t)
		req, _, err := s.Begin(t.Context(), user, "k", fp)
		if err != nil {
			t.Fatal(err)
		}
		if err := req.Finish(t.Context(), quire.IdempotentAnswer{Status: 201}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Prune(t.Context()); err != nil || n != 0 {
			t.Fatalf("prune at once: %d %v", n, err)
		}
		*now = now.Add(idempotency.TTL)
		if n, err := s.Prune(t.Context()); err != nil || n != 1 {
			t.Fatalf("prune after 24 hours: %d %v", n, err)
		}
	})
}

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"a", "550e8400-e29b-41d4-a716-446655440000", "with space ~", strings.Repeat("k", 255)} {
		if err := idempotency.CheckKey("Idempotency-Key", k); err != nil {
			t.Errorf("%q refused: %v", k, err)
		}
	}
	for _, k := range []string{"", strings.Repeat("k", 256), "caf\u00e9", "nul\x00", "del\x7f", "tab\t"} {
		if err := idempotency.CheckKey("Idempotency-Key", k); quire.ErrorCode(err) != quire.EVALIDATION {
			t.Errorf("%q: %v, want VALIDATION_ERROR", k, err)
		}
	}
}
