package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

// TestUpdateKeepsIndexesAndCounts saves documents changing one field (or
// group of fields) at a time, alone and in one batch of the group commit,
// and checks what the store's own reads cannot all see: that every index
// of documents holds exactly the rows' values (integrity_check compares
// each index, the partial ones included, with the table) and that
// document_counts agrees with the live documents. An UPDATE names only
// the indexed columns that change (documents.go); a column left out when
// it changed would leave a stale index entry or count behind.
func TestUpdateKeepsIndexesAndCounts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, owner := openWithOwner(t)
	all := quire.Visibility{All: true}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var deps, projects, folders []string
	for i := range 2 {
		d, err := db.CreateDepartment(ctx, fmt.Sprintf("Department %d", i))
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.CreateProject(ctx, fmt.Sprintf("Project %d", i))
		if err != nil {
			t.Fatal(err)
		}
		f := &quire.Folder{Name: fmt.Sprintf("Folder %d", i)}
		if err := db.CreateFolder(ctx, f, now); err != nil {
			t.Fatal(err)
		}
		deps, projects, folders = append(deps, d.ID), append(projects, p.ID), append(folders, f.ID)
	}
	edits := []struct {
		name string
		edit func(d *quire.Document)
	}{
		{"summary", func(d *quire.Document) { d.Summary += " again" }},
		{"content", func(d *quire.Document) { d.Content += " more" }},
		{"content type", func(d *quire.Document) { d.ContentType = "plain" }},
		{"title", func(d *quire.Document) { d.Title = "Renamed " + d.Title }},
		{"status", func(d *quire.Document) { d.Status = "published" }},
		{"visibility", func(d *quire.Document) { d.Visibility = "public" }},
		{"folder", func(d *quire.Document) { d.FolderID = folders[1] }},
		{"folder cleared", func(d *quire.Document) { d.FolderID = "" }},
		{"department", func(d *quire.Document) { d.DepartmentID = deps[1] }},
		{"project", func(d *quire.Document) { d.ProjectID = projects[1] }},
		{"project cleared", func(d *quire.Document) { d.ProjectID = "" }},
		{"tags", func(d *quire.Document) { d.Tags = append(d.Tags, "more") }},
		{"everything", func(d *quire.Document) {
			d.Title, d.Summary, d.Content, d.Status = "All new", "new", "new body", "archived"
			d.Visibility, d.FolderID, d.DepartmentID, d.ProjectID = "project", folders[1], deps[1], projects[1]
		}},
	}
	create := func(i int) *quire.Document {
		t.Helper()
		d := &quire.Document{Title: fmt.Sprintf("Doc %d", i), Summary: "first", Content: "body",
			ContentType: "markdown", Status: "draft", Visibility: "department", Tags: []string{"a"},
			FolderID: folders[0], DepartmentID: deps[0], ProjectID: projects[0], OwnerID: owner.ID}
		if err := db.CreateDocument(ctx, d, now); err != nil {
			t.Fatal(err)
		}
		return d
	}
	update := func(d *quire.Document, edit func(*quire.Document)) {
		t.Helper()
		want := *d
		want.Tags = append([]string{}, d.Tags...)
		edit(&want)
		got, err := db.UpdateDocument(ctx, all, d.ID, d.UpdatedAt, owner.ID, now.Add(time.Minute),
			func(d *quire.Document) (bool, error) { edit(d); return true, nil })
		if err != nil {
			t.Errorf("update %s: %v", d.ID, err)
			return
		}
		read, err := db.Document(ctx, all, d.ID)
		if err != nil {
			t.Errorf("read %s: %v", d.ID, err)
			return
		}
		if diff := cmp.Diff(got, read); diff != "" {
			t.Errorf("the answer is not what is stored (-answer +stored):\n%s", diff)
		}
		want.Version, want.UpdatedAt = got.Version, got.UpdatedAt
		if diff := cmp.Diff(&want, read); diff != "" {
			t.Errorf("stored (-want +got):\n%s", diff)
		}
	}
	check := func(when string) {
		t.Helper()
		var res string
		if err := db.write.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
			t.Errorf("%s: integrity_check = %q, %v", when, res, err)
		}
		var stale int
		err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (
			SELECT visibility, department_id, project_id, owner_id, n FROM document_counts WHERE n <> 0
			EXCEPT
			SELECT visibility, COALESCE(department_id, ''), COALESCE(project_id, ''), owner_id, count(*)
			FROM documents WHERE deleted_at = 0 GROUP BY 1, 2, 3, 4)`).Scan(&stale)
		if err != nil || stale != 0 {
			t.Errorf("%s: %d counts disagree with the documents (%v)", when, stale, err)
		}
	}
	for i, e := range edits {
		t.Run(e.name+" alone", func(t *testing.T) {
			update(create(i), e.edit)
			check(e.name)
		})
	}
	t.Run("all in one batch", func(t *testing.T) {
		docs := make([]*quire.Document, len(edits))
		for i := range edits {
			docs[i] = create(100 + i)
		}
		release := holdCommitter(t, db)
		done := make(chan struct{})
		for i, e := range edits {
			go func() {
				defer func() { done <- struct{}{} }()
				update(docs[i], e.edit)
			}()
		}
		waitQueued(t, db, len(edits))
		release()
		for range edits {
			<-done
		}
		check("batch")
	})
}

// TestWriterIsDurable holds the writer to synchronous=FULL in WAL mode: a
// commit is on disk before it is acknowledged. The speed of the group
// commit must never come from relaxing it. Its database is on a real file
// system (a copy of the migrated file in t.TempDir()).
func TestWriterIsDurable(t *testing.T) {
	t.Parallel()
	db, _ := openWithOwnerAt(t, migratedOnDisk(t))
	var mode string
	var sync int
	if err := db.write.QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := db.write.QueryRowContext(t.Context(), `PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || sync != 2 {
		t.Errorf("writer journal_mode %q synchronous %d, want wal and 2 (FULL)", mode, sync)
	}
}
