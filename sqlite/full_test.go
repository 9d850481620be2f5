package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"quire"
)

// TestDiskFull makes the database file full the way SQLite itself does
// when a file may not grow: PRAGMA max_page_count on the one writing
// connection, set to the pages the file has. A write that needs a page
// more fails with SQLITE_FULL, as on a full file system.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// A copy of the file migrated once for the process, on a real file
	// system.
	db, err := Open(ctx, migratedOnDisk(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	owner := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "editor"}, Status: quire.UserActive}
	if err := db.CreateUser(ctx, owner); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	big := func(i int) *quire.Document {
		return &quire.Document{Title: fmt.Sprintf("Big %d", i), Content: strings.Repeat(fmt.Sprintf("word%d ", i), 20000),
			ContentType: "markdown", Status: "draft", Visibility: "private", OwnerID: owner.ID}
	}
	setMaxPages := func(n int64) {
		t.Helper()
		if _, err := db.write.ExecContext(context.Background(), fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
			t.Fatal(err)
		}
	}
	var pages int64
	if err := db.write.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	setMaxPages(pages)
	t.Cleanup(func() { setMaxPages(1 << 30) })

	err = db.CreateDocument(ctx, big(1), at)
	t.Run("a write that finds no room is unavailable, not internal", func(t *testing.T) {
		if !errors.Is(err, quire.ErrUnavailable) {
			t.Fatalf("CreateDocument on a full file: %v, want an error wrapping quire.ErrUnavailable", err)
		}
		if !isFull(err) {
			t.Errorf("the cause is lost: %v", err)
		}
	})

	t.Run("ping reports the full disk, and reads go on", func(t *testing.T) {
		if err := db.Ping(ctx); quire.ErrorCode(err) != quire.EUNAVAILABLE {
			t.Errorf("Ping = %v, want UNAVAILABLE", err)
		}
		if _, err := db.UserByID(ctx, owner.ID); err != nil {
			t.Errorf("a read: %v", err)
		}
	})

	t.Run("a commit that changed nothing does not end the full state", func(t *testing.T) {
		if err := db.ClearLoginFailures(ctx, "nobody@example.com"); err != nil {
			t.Fatal(err)
		}
		if err := db.Ping(ctx); quire.ErrorCode(err) != quire.EUNAVAILABLE {
			t.Errorf("Ping = %v, want UNAVAILABLE still", err)
		}
	})

	t.Run("once there is room, the next write succeeds and ends it", func(t *testing.T) {
		setMaxPages(1 << 30)
		if err := db.CreateDocument(ctx, big(2), at); err != nil {
			t.Fatalf("CreateDocument with room: %v", err)
		}
		if err := db.Ping(ctx); err != nil {
			t.Errorf("Ping = %v, want nil", err)
		}
	})
}
