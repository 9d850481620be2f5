package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/sqlite"
)

// TestServePurgesTrash runs serve with QUIRE_TRASH_RETENTION on a database
// holding one document deleted two hours ago and one deleted just now: the
// first is purged at start, the second stays in the trash.
func TestServePurgesTrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "quire.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	owner := &quire.User{Email: "owner@example.com", Name: "Owner", Role: quire.Role{Key: "editor"}, Status: quire.UserActive}
	if err := db.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	all := quire.Visibility{All: true}
	trash := func(title string, at time.Time) string {
		d := &quire.Document{Title: title, ContentType: "plain", Status: "draft", Visibility: "private", OwnerID: owner.ID}
		if err := db.CreateDocument(ctx, d, at.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteDocument(ctx, all, d.ID, owner.ID, at); err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	old := trash("old", time.Now().Add(-2*time.Hour))
	recent := trash("recent", time.Now())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"serve", "--addr", "127.0.0.1:0", "--db", path},
			env(map[string]string{"QUIRE_TRASH_RETENTION": "1h"}), strings.NewReader(""), &out, &errOut)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), `"msg":"trash purged"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no purge logged; stderr %s", errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v; stderr %s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}

	db = openDB(t, path)
	if _, err := db.TrashedDocument(ctx, all, old); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the document deleted 2h ago with a retention of 1h: %v, want it purged", err)
	}
	if _, err := db.TrashedDocument(ctx, all, recent); err != nil {
		t.Errorf("the document deleted just now: %v, want it in the trash", err)
	}
}

func TestServeHelpListsTrashRetention(t *testing.T) {
	t.Parallel()
	out := mustCLI(t, env(nil), "serve", "--help")
	for _, want := range []string{"-trash-retention", "QUIRE_TRASH_RETENTION", "720h"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, out)
		}
	}
}

// TestServePurgesTrashSoonAfterAShortRetention: with a retention of two
// seconds, a document deleted as serve starts is gone a few seconds later,
// not an hour later (the purge runs every tenth of the retention, at most
// every second). The deadline is far beyond what the purge needs and far
// below the hour it took before.
func TestServePurgesTrashSoonAfterAShortRetention(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quire.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	owner := &quire.User{Email: "owner@example.com", Name: "Owner", Role: quire.Role{Key: "editor"}, Status: quire.UserActive}
	if err := db.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	all := quire.Visibility{All: true}
	d := &quire.Document{Title: "short-lived", ContentType: "plain", Status: "draft", Visibility: "private", OwnerID: owner.ID}
	if err := db.CreateDocument(ctx, d, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteDocument(ctx, all, d.ID, owner.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"serve", "--addr", "127.0.0.1:0", "--db", path},
			env(map[string]string{"QUIRE_TRASH_RETENTION": "2s"}), strings.NewReader(""), &out, &errOut)
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(errOut.String(), `"msg":"trash purged"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no purge within 2 minutes of a 2s retention; stderr %s", errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v; stderr %s", err, errOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	db = openDB(t, path)
	if _, err := db.TrashedDocument(ctx, all, d.ID); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the document deleted at start with a retention of 2s: %v, want it purged", err)
	}
}

func TestServeHelpSaysHowOftenThePurgeRuns(t *testing.T) {
	out := mustCLI(t, env(nil), "serve", "--help")
	if !strings.Contains(out, "the purge runs every tenth of it") {
		t.Errorf("serve --help does not say how often the purge runs:\n%s", out)
	}
}
