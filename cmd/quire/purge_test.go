package main

import (
	"context"
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
	path := migratedDB(t)
	ctx := context.Background()
	db, owner := openWithOwner(t, path)
	all := quire.Visibility{All: true}
	old := trashDocument(t, db, owner, "old", time.Now().Add(-2*time.Hour))
	recent := trashDocument(t, db, owner, "recent", time.Now())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	serveUntilLogged(t, path, map[string]string{"QUIRE_TRASH_RETENTION": "1h"}, "trash purged", 30*time.Second)

	db = openDB(t, path)
	if _, err := db.TrashedDocument(ctx, all, old); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the document deleted 2h ago with a retention of 1h: %v, want it purged", err)
	}
	if _, err := db.TrashedDocument(ctx, all, recent); err != nil {
		t.Errorf("the document deleted just now: %v, want it in the trash", err)
	}
}

// openWithOwner opens (and migrates) the SQLite database at path and creates
// an active editor in it, the owner of the documents the test trashes.
func openWithOwner(t *testing.T, path string) (*sqlite.DB, *quire.User) {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	owner := &quire.User{Email: "owner@example.com", Name: "Owner", Role: quire.Role{Key: "editor"}, Status: quire.UserActive}
	if err := db.CreateUser(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	return db, owner
}

// trashDocument creates a private draft of owner's an hour before at and
// deletes it at at; it returns the document's ID.
func trashDocument(t *testing.T, db *sqlite.DB, owner *quire.User, title string, at time.Time) string {
	t.Helper()
	ctx := t.Context()
	d := &quire.Document{Title: title, ContentType: "plain", Status: "draft", Visibility: "private", OwnerID: owner.ID}
	if err := db.CreateDocument(ctx, d, at.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteDocument(ctx, quire.Visibility{All: true}, d.ID, owner.ID, at); err != nil {
		t.Fatal(err)
	}
	return d.ID
}

// serveUntilLogged runs serve on the SQLite database at path, with vars as its
// environment, until its log holds the message msg; then it stops serve and
// waits for it to return. It fails the test when msg is not logged within
// the given time (a bound for a hang, far beyond what the work needs) or
// when serve stops or fails on its own.
func serveUntilLogged(t *testing.T, path string, vars map[string]string, msg string, within time.Duration) {
	t.Helper()
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	done, _, errOut := goServe(runCtx, env(vars), "--db", path)
	deadline := time.Now().Add(within)
	for !strings.Contains(errOut.String(), `"msg":"`+msg+`"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q logged within %v; stderr %s", msg, within, errOut.String())
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v; stderr %s", err, errOut.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	waitStopped(t, done, "its context ended")
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
	t.Parallel()
	path := migratedDB(t)
	db, owner := openWithOwner(t, path)
	id := trashDocument(t, db, owner, "short-lived", time.Now())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	serveUntilLogged(t, path, map[string]string{"QUIRE_TRASH_RETENTION": "2s"}, "trash purged", 2*time.Minute)

	db = openDB(t, path)
	if _, err := db.TrashedDocument(t.Context(), quire.Visibility{All: true}, id); quire.ErrorCode(err) != quire.ENOTFOUND {
		t.Errorf("the document deleted at start with a retention of 2s: %v, want it purged", err)
	}
}

func TestServeHelpSaysHowOftenThePurgeRuns(t *testing.T) {
	t.Parallel()
	out := mustCLI(t, env(nil), "serve", "--help")
	if !strings.Contains(out, "the purge runs every tenth of it") {
		t.Errorf("serve --help does not say how often the purge runs:\n%s", out)
	}
}
