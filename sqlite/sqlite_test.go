package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"quire"
	"quire/internal/sqlitetest"
	"quire/sqlite"
	"quire/storetest"
)

func openDB(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	// The store suite runs with the index of documents, as quire serve does.
	db.StartSearchIndex()
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// TestStore runs the store suite on files in memory (package tmpfs): it
// checks the store's rules; durability has tests of its own on disk
// (TestWriterIsDurable, TestDiskFull, TestBackup). Each store is a copy of
// a file migrated once for the process (the migrations have tests of their
// own): under the race detector they take seconds, a copy a fraction.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) quire.Store {
		path := sqlitetest.Migrated(t)
		return filler{openDB(t, path), path}
	})
}

// filler is a store of TestStore with storetest.ThreadFiller and
// storetest.ReplyFiller: the SQLite file's threads and replies are
// written through a connection of its own, beside the store's, in one
// transaction.
type filler struct {
	*sqlite.DB
	path string
}

// inTx runs fn in a transaction of a connection of its own, beside the
// store's, and commits it.
func (f filler) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	raw, err := sql.Open("sqlite", "file:"+f.path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (f filler) FillThreads(ctx context.Context, docID, authorID string, n int, at time.Time) error {
	return f.inTx(ctx, func(tx *sql.Tx) error {
		// Each id is a random UUID (version 4), as unique as the store's own.
		if _, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO comments (id, document_id, author_id, body, created_at, updated_at)
		SELECT lower(printf('%s-%s-4%s-8%s-%s', hex(randomblob(4)), hex(randomblob(2)), substr(hex(randomblob(2)), 2),
			substr(hex(randomblob(2)), 2), hex(randomblob(6)))), ?, ?, 'filled ' || i, ?, ? FROM n`,
			n, docID, authorID, at.UnixMicro(), at.UnixMicro()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO comment_versions (document_id, seq, threads_seq, threads) VALUES (?, 1, 1, ?)
		ON CONFLICT (document_id) DO UPDATE SET seq = comment_versions.seq + 1, threads_seq = comment_versions.seq + 1,
		threads = comment_versions.threads + excluded.threads, reacted_id = NULL`, docID, n); err != nil {
			return err
		}
		return nil
	})
}

// FillReplies writes n replies to parentID in one transaction of a
// connection of its own, as FillThreads writes threads, and changes the
// comments version as CreateComment's bump does (storetest.ReplyFiller).
func (f filler) FillReplies(ctx context.Context, docID, parentID, authorID string, n int, at time.Time) error {
	return f.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO comments (id, document_id, parent_id, author_id, body, created_at, updated_at)
		SELECT lower(printf('%s-%s-4%s-8%s-%s', hex(randomblob(4)), hex(randomblob(2)), substr(hex(randomblob(2)), 2),
			substr(hex(randomblob(2)), 2), hex(randomblob(6)))), ?, ?, ?, 'filled ' || i, ?, ? FROM n`,
			n, docID, parentID, authorID, at.UnixMicro(), at.UnixMicro()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE comment_versions SET seq = seq + 1, threads_seq = seq + 1, reacted_id = NULL WHERE document_id = ?`, docID); err != nil {
			return err
		}
		return nil
	})
}

func TestBackup(t *testing.T) {
	t.Parallel()
	t.Run("a backup taken while another goroutine writes opens as a complete database", func(t *testing.T) {
		dir := t.TempDir()
		db := openDB(t, filepath.Join(dir, "quire.db"))
		ctx := t.Context()
		u := &quire.User{Email: "ada@example.com", Name: "Ada", Role: quire.Role{Key: "admin"}, Status: quire.UserActive, PasswordHash: "h"}
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}

		writeCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
			// Writes only keep the database busy during the copy; their
			// errors (the cancellation at the end) do not matter here.
			for writeCtx.Err() == nil {
				db.LoginFailed(writeCtx, "writer@example.com", at, quire.LoginLimits{}, nil)
			}
		})
		var buf bytes.Buffer
		err := db.Backup(ctx, &buf)
		stop()
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}

		copyPath := filepath.Join(t.TempDir(), "copy.db")
		if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		restored := openDB(t, copyPath)
		got, err := restored.UserByEmail(ctx, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID || got.Role.Label != "Administrator" {
			t.Errorf("restored user = %+v, want id %s with role Administrator", got, u.ID)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if filepath.Ext(e.Name()) == ".db" && e.Name() != "quire.db" {
				t.Errorf("backup left %s behind", e.Name())
			}
		}
	})
}
