package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/sqlstore"
	"quire/storetest"
)

// The document benchmarks of package storetest, on databases of 10,000 and
// 100,000 documents (storetest.BenchSizes) of about 2 KB, built once and
// cached in os.TempDir() under a name that carries the size and a hash of
// the schema and of the generator, so that a change to either builds
// afresh. Run them with, for example:
//
//	go test -run '^$' -bench 'Documents/(List|Search|Read|GuardedUpdate)' -benchtime 3s -count 3 ./sqlite/
//
// postgres/documents_bench_test.go runs the same ones on PostgreSQL.

// openBenchDB opens the cached database of n documents, building it first
// when there is none. With scratch set it opens a private copy, for
// benchmarks that write.
func openBenchDB(b *testing.B, n int, scratch bool) *storetest.BenchFixture {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("quire-bench-%s-%d.db", storetest.BenchKey(b, sqlstore.MigrationFiles()), n))
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		if err := buildBenchDB(ctx, path, n); err != nil {
			b.Fatalf("build bench database of %d documents: %v", n, err)
		}
		b.Logf("built %s in %v", path, time.Since(start).Round(time.Millisecond))
	}
	if scratch {
		cp := filepath.Join(b.TempDir(), "bench.db")
		if err := copyFile(path, cp); err != nil {
			b.Fatal(err)
		}
		path = cp
	}
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return storetest.NewBenchFixture(b, db)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// buildBenchDB writes the documents of storetest.NewBenchData(n), each with
// its tags and version 1, in transactions of a few thousand rows, through
// the same tables and triggers as CreateDocument, then moves the finished
// file to path.
func buildBenchDB(ctx context.Context, path string, n int) error {
	tmp := path + ".building"
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(tmp + suffix)
	}
	db, err := Open(ctx, tmp)
	if err != nil {
		return err
	}
	defer db.Close()
	data := storetest.NewBenchData(n)
	epoch := toMicros(data.Epoch)
	err = db.tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, d := range data.Departments {
			if _, err := tx.ExecContext(ctx, `INSERT INTO departments (id, name) VALUES (?, ?)`, d.ID, d.Name); err != nil {
				return err
			}
		}
		for _, u := range data.Users {
			if _, err := tx.ExecContext(ctx, `INSERT INTO users (id, email, name, role_key, department_id, status, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, u.ID, u.Email, u.Name, u.Role.Key, nullString(u.DepartmentID), string(u.Status),
				toMicros(u.CreatedAt), toMicros(u.UpdatedAt)); err != nil {
				return err
			}
		}
		for _, p := range data.Projects {
			if _, err := tx.ExecContext(ctx, `INSERT INTO projects (id, name) VALUES (?, ?)`, p.ID, p.Name); err != nil {
				return err
			}
			for _, m := range p.MemberIDs {
				if _, err := tx.ExecContext(ctx, `INSERT INTO project_members (project_id, user_id) VALUES (?, ?)`, p.ID, m); err != nil {
					return err
				}
			}
		}
		for _, f := range data.Folders {
			if _, err := tx.ExecContext(ctx, `INSERT INTO folders (id, name, parent_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				f.ID, f.Name, nullString(f.ParentID), epoch, epoch); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}

	// Batches of batch documents, each in one transaction with its
	// statements prepared once.
	const batch = 5000
	var tx *sql.Tx
	var insDoc, insTag, insVersion *sql.Stmt
	inBatch := 0
	begin := func() error {
		var err error
		if tx, err = db.write.BeginTx(ctx, nil); err != nil {
			return err
		}
		if insDoc, err = tx.PrepareContext(ctx, `INSERT INTO documents
			(id, title, summary, content_type, status, visibility, folder_id, department_id, project_id,
			 owner_id, version, created_at, updated_at, content)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`); err != nil {
			return err
		}
		if insTag, err = tx.PrepareContext(ctx, `INSERT INTO document_tags (document_id, position, tag, tag_norm) VALUES (?, ?, ?, ?)`); err != nil {
			return err
		}
		insVersion, err = tx.PrepareContext(ctx, `INSERT INTO document_versions
			(document_id, number, title, summary, content_type, status, visibility, tags,
			 folder_id, department_id, project_id, created_at, created_by, content)
			VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		return err
	}
	err = data.Documents(func(d *quire.Document) error {
		if tx == nil {
			if err := begin(); err != nil {
				return err
			}
		}
		at := toMicros(d.CreatedAt)
		tagsJSON, err := json.Marshal(d.Tags)
		if err != nil {
			return err
		}
		if _, err := insDoc.ExecContext(ctx, d.ID, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, nullString(d.FolderID),
			nullString(d.DepartmentID), nullString(d.ProjectID), d.OwnerID, at, at, d.Content); err != nil {
			return err
		}
		for pos, t := range d.Tags {
			if _, err := insTag.ExecContext(ctx, d.ID, pos, t, strings.ToLower(strings.TrimSpace(t))); err != nil {
				return err
			}
		}
		if _, err := insVersion.ExecContext(ctx, d.ID, d.Title, d.Summary, d.ContentType, d.Status, d.Visibility, string(tagsJSON),
			nullString(d.FolderID), nullString(d.DepartmentID), nullString(d.ProjectID), at, d.OwnerID, d.Content); err != nil {
			return err
		}
		if inBatch++; inBatch == batch {
			inBatch = 0
			err := tx.Commit()
			tx = nil
			return err
		}
		return nil
	})
	if tx != nil {
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	if err != nil {
		return err
	}
	// The rows went in by hand, past the store's writes that keep the
	// full-text index (fts.go): build it from them.
	if _, err := db.write.ExecContext(ctx, `INSERT INTO documents_fts (documents_fts) VALUES ('rebuild')`); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// BenchmarkDocuments runs the benchmarks of storetest.RunBenches.
func BenchmarkDocuments(b *testing.B) { storetest.RunBenches(b, openBenchDB) }

// TestSearchIndexIntegrity checks, beyond what the store suite can see
// through searches, that the external-content index agrees exactly with
// the documents after creates, text edits, edits that leave the text alone,
// moves to the trash, restores and purges: FTS5's integrity-check with rank
// 1 compares the index with the text of every row, those of the trash
// included.
func TestSearchIndexIntegrity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, owner := openWithOwner(t)
	all := quire.Visibility{All: true}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 12 {
		d := &quire.Document{Title: fmt.Sprintf("Café %d", i), Summary: "résumé", Content: fmt.Sprintf("body %d of the text", i),
			ContentType: "plain", Status: "draft", Visibility: "public", OwnerID: owner.ID}
		if err := db.CreateDocument(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	for i, id := range ids {
		_, err := db.UpdateDocument(ctx, all, id, time.Time{}, owner.ID, now, func(d *quire.Document) (bool, error) {
			switch i % 3 {
			case 0:
				d.Content = "rewritten " + d.Content
			case 1:
				d.Status = "published" // the text stays as it is
			case 2:
				d.Title, d.Summary = "Renamed", ""
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%4 != 3 { // 1, 5 and 9 stay in the trash
			if err := db.DeleteDocument(ctx, all, id, owner.ID, now); err != nil {
				t.Fatal(err)
			}
		}
		switch i % 4 {
		case 0:
			if err := db.PurgeDocument(ctx, all, id); err != nil {
				t.Fatal(err)
			}
		case 2:
			if _, err := db.RestoreDocument(ctx, all, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("full-text index out of step with documents: %v", err)
	}
	var indexed, stored int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM documents_fts_docsize`).Scan(&indexed); err != nil {
		t.Fatal(err)
	}
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM documents`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if indexed != stored || stored != 9 {
		t.Errorf("%d rows indexed for %d documents, want 9 of each", indexed, stored)
	}
}
