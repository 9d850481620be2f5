package documents_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/documents"
	"quire/internal/sqlitetest"
	"quire/sqlite"
)

// world is a documents.Service over a real SQLite file, with a few people in
// two departments and one project.
type world struct {
	t     *testing.T
	store *sqlite.DB
	svc   *documents.Service
	now   time.Time
	deps  map[string]string // name -> id
	proj  string            // id of project "Apollo"
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w := &world{t: t, store: db, now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), deps: map[string]string{}}
	w.svc = documents.New(db, documents.Config{Now: func() time.Time { return w.now }})
	for _, name := range []string{"Engineering", "Sales"} {
		d, err := db.EnsureDepartment(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		w.deps[name] = d.ID
	}
	p, err := db.CreateProject(ctx, "Apollo")
	if err != nil {
		t.Fatal(err)
	}
	w.proj = p.ID
	return w
}

// actor creates a user with role and department ("" for none), in the
// project when member is set, and returns it as an actor.
func (w *world) actor(email, role, department string, member bool) quire.Actor {
	w.t.Helper()
	ctx := context.Background()
	r, err := w.store.Role(ctx, role)
	if err != nil {
		w.t.Fatal(err)
	}
	u := &quire.User{Email: email, Name: strings.Split(email, "@")[0], Role: *r, DepartmentID: w.deps[department], Status: quire.UserActive}
	if err := w.store.CreateUser(ctx, u); err != nil {
		w.t.Fatal(err)
	}
	a := quire.Actor{User: *u}
	if member {
		if err := w.store.AddProjectMember(ctx, w.proj, u.ID); err != nil {
			w.t.Fatal(err)
		}
	}
	return a
}

// folder creates the folder in as a, failing the test when it cannot.
func (w *world) folder(a quire.Actor, in documents.FolderInput) *quire.Folder {
	w.t.Helper()
	f, err := w.svc.CreateFolder(context.Background(), a, in)
	if err != nil {
		w.t.Fatal(err)
	}
	return f
}

func (w *world) tick() { w.now = w.now.Add(time.Second) }

// fieldsOf returns the fields of a VALIDATION_ERROR, failing otherwise.
func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	var e *quire.Error
	if !errors.As(err, &e) || e.Code != quire.EVALIDATION {
		t.Fatalf("got %v, want a VALIDATION_ERROR", err)
	}
	return e.Fields
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return quire.ErrorCode(err)
}

func TestParseListQuery(t *testing.T) {
	t.Run("no parameters take every default", func(t *testing.T) {
		p, err := documents.ParseListQuery(url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(documents.ListParams{}, p); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("valid parameters are read", func(t *testing.T) {
		id := "0190a0b0-0000-7000-8000-000000000001"
		q, _ := url.ParseQuery("page=3&limit=500&status=review&visibility=project&search=a+b&tags=Go,%20DB%20,,go" +
			"&departmentId=" + id + "&folderId=" + id + "&projectId=" + id + "&sortBy=createdAt&sortOrder=asc&includeContent=1")
		p, err := documents.ParseListQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		want := documents.ListParams{Page: 3, Limit: 100, Status: "review", Visibility: "project", Search: "a b",
			Tags: []string{"Go", " DB ", "", "go"}, DepartmentID: id, FolderID: id, ProjectID: id,
			SortBy: "created_at", Asc: true, IncludeContent: true}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("search and tags take any characters, NUL included", func(t *testing.T) {
		q, _ := url.ParseQuery("search=alpha%00beta&tags=go%00,db")
		p, err := documents.ParseListQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		want := documents.ListParams{Search: "alpha\x00beta", Tags: []string{"go\x00", "db"}}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	bad := []struct {
		query, field string
	}{
		{"status=draft%00", "status"},
		{"sortBy=title%00", "sortBy"},
		{"page=0", "page"},
		{"page=-1", "page"},
		{"page=1.5", "page"},
		{"page=abc", "page"},
		{"page=99999999999999999999999", "page"},
		{"limit=0", "limit"},
		{"limit=-5", "limit"},
		{"limit=ten", "limit"},
		{"limit=2e3", "limit"},
		{"status=deleted", "status"},
		{"status=Draft", "status"},
		{"visibility=secret", "visibility"},
		{"search=" + strings.Repeat("x", quire.MaxSearchLength+1), "search"},
		{"search=" + url.QueryEscape(strings.Repeat("a ", quire.MaxSearchWords+1)), "search"},
		{"search=%FF", "search"},
		{"tags=" + manyTags(documents.MaxTagFilter+1), "tags"},
		{"departmentId=42", "departmentId"},
		{"folderId=x'%20OR%201=1--", "folderId"},
		{"projectId=%2A", "projectId"},
		{"sortBy=owner", "sortBy"},
		{"sortBy=updated_at%3BDROP", "sortBy"},
		{"sortOrder=up", "sortOrder"},
		{"includeContent=yes", "includeContent"},
	}
	for _, c := range bad {
		t.Run(c.query[:min(len(c.query), 40)]+" is refused naming "+c.field, func(t *testing.T) {
			q, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = documents.ParseListQuery(q)
			fields := fieldsOf(t, err)
			if _, ok := fields[c.field]; !ok || len(fields) != 1 {
				t.Fatalf("fields %v, want exactly %s", fields, c.field)
			}
		})
	}
	t.Run("every bad parameter is named at once", func(t *testing.T) {
		q, _ := url.ParseQuery("page=0&limit=x&sortOrder=sideways")
		_, err := documents.ParseListQuery(q)
		fields := fieldsOf(t, err)
		if len(fields) != 3 {
			t.Fatalf("fields %v, want page, limit and sortOrder", fields)
		}
	})
	t.Run("exactly the maximum search is accepted", func(t *testing.T) {
		q := url.Values{"search": {strings.TrimSpace(strings.Repeat("ab ", quire.MaxSearchWords))}}
		if _, err := documents.ParseListQuery(q); err != nil {
			t.Fatal(err)
		}
	})
}

func manyTags(n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
	return strings.Join(tags, ",")
}

func TestCreate(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	alice := w.actor("alice@example.com", "editor", "Engineering", true)
	loner := w.actor("loner@example.com", "editor", "", false)
	admin := w.actor("root@example.com", "admin", "", false)
	folder := w.folder(alice, documents.FolderInput{Name: documents.Some("Specs")})

	t.Run("defaults fill what is not sent", func(t *testing.T) {
		d, err := w.svc.Create(ctx, alice, documents.DocumentInput{Title: documents.Some("  Plan  "), Summary: documents.Null[string]()})
		if err != nil {
			t.Fatal(err)
		}
		want := quire.Document{
			ID: d.ID, Title: "Plan", ContentType: "markdown", Status: "draft", Visibility: "private",
			Tags: []string{}, DepartmentID: w.deps["Engineering"], OwnerID: alice.User.ID, OwnerName: "alice",
			Version: 1, CreatedAt: w.now, UpdatedAt: w.now,
		}
		if diff := cmp.Diff(want, *d); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("tags are trimmed, emptied ones dropped and duplicates dropped ignoring case", func(t *testing.T) {
		d, err := w.svc.Create(ctx, alice, documents.DocumentInput{Title: documents.Some("T"),
			Tags: documents.Some([]string{" Go ", "", "go", "DB", "  ", "db", "Ünïcode", "üNÏCODE"})})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"Go", "DB", "Ünïcode"}, d.Tags); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("project visibility in a project of the creator is accepted", func(t *testing.T) {
		d, err := w.svc.Create(ctx, alice, documents.DocumentInput{Title: documents.Some("P"), Visibility: documents.Some("project"),
			ProjectID: documents.Some(w.proj), FolderID: documents.Some(folder.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if d.ProjectID != w.proj || d.FolderID != folder.ID {
			t.Fatalf("got project %q folder %q", d.ProjectID, d.FolderID)
		}
	})
	t.Run("an admin may name any existing department and project", func(t *testing.T) {
		_, err := w.svc.Create(ctx, admin, documents.DocumentInput{Title: documents.Some("A"), Visibility: documents.Some("department"),
			DepartmentID: documents.Some(w.deps["Sales"]), ProjectID: documents.Some(w.proj)})
		if err != nil {
			t.Fatal(err)
		}
	})

	tags51 := make([]string, 51)
	for i := range tags51 {
		tags51[i] = "t" + strings.Repeat("x", i)
	}
	unknown := "0190a0b0-0000-7000-8000-0000000000ff"
	invalid := []struct {
		name   string
		actor  quire.Actor
		in     documents.DocumentInput
		fields map[string]string
	}{
		{"a missing title", alice, documents.DocumentInput{}, map[string]string{"title": "is required"}},
		{"a null title", alice, documents.DocumentInput{Title: documents.Null[string]()}, map[string]string{"title": "is required"}},
		{"a blank title", alice, documents.DocumentInput{Title: documents.Some(" \t\n")}, map[string]string{"title": "is required"}},
		{"a title of 301 characters", alice, documents.DocumentInput{Title: documents.Some(strings.Repeat("é", 301))},
			map[string]string{"title": "must be at most 300 characters"}},
		{"a NUL in the content", alice, documents.DocumentInput{Title: documents.Some("x"), Content: documents.Some("a\x00b")},
			map[string]string{"content": "must not contain NUL characters"}},
		{"an unknown content type", alice, documents.DocumentInput{Title: documents.Some("x"), ContentType: documents.Some("pdf")},
			map[string]string{"content_type": "must be one of html, markdown, plain"}},
		{"a summary of 1001 characters", alice, documents.DocumentInput{Title: documents.Some("x"), Summary: documents.Some(strings.Repeat("s", 1001))},
			map[string]string{"summary": "must be at most 1000 characters"}},
		{"an unknown status", alice, documents.DocumentInput{Title: documents.Some("x"), Status: documents.Some("deleted")},
			map[string]string{"status": "must be one of draft, review, published, archived"}},
		{"an unknown visibility", alice, documents.DocumentInput{Title: documents.Some("x"), Visibility: documents.Some("secret")},
			map[string]string{"visibility": "must be one of private, department, project, public"}},
		{"51 tags", alice, documents.DocumentInput{Title: documents.Some("x"), Tags: documents.Some(tags51)},
			map[string]string{"tags": "must hold at most 50 tags"}},
		{"a tag of 65 characters", alice, documents.DocumentInput{Title: documents.Some("x"), Tags: documents.Some([]string{strings.Repeat("t", 65)})},
			map[string]string{"tags": "each tag must be at most 64 characters"}},
		{"an unknown folder", alice, documents.DocumentInput{Title: documents.Some("x"), FolderID: documents.Some(unknown)},
			map[string]string{"folder_id": "must name an existing folder"}},
		{"a folder id that is no id", alice, documents.DocumentInput{Title: documents.Some("x"), FolderID: documents.Some("'; DROP TABLE folders; --")},
			map[string]string{"folder_id": "must name an existing folder"}},
		{"another department", alice, documents.DocumentInput{Title: documents.Some("x"), DepartmentID: documents.Some(w.deps["Sales"])},
			map[string]string{"department_id": "must be a department you belong to"}},
		{"a project of which the creator is no member", loner, documents.DocumentInput{Title: documents.Some("x"), ProjectID: documents.Some(w.proj)},
			map[string]string{"project_id": "must be a project you are a member of"}},
		{"department visibility from a creator without a department", loner,
			documents.DocumentInput{Title: documents.Some("x"), Visibility: documents.Some("department")},
			map[string]string{"department_id": "is required for department visibility"}},
		{"project visibility without a project", alice, documents.DocumentInput{Title: documents.Some("x"), Visibility: documents.Some("project")},
			map[string]string{"project_id": "is required for project visibility"}},
		{"an admin naming an unknown department", admin, documents.DocumentInput{Title: documents.Some("x"), DepartmentID: documents.Some(unknown)},
			map[string]string{"department_id": "must be a department you belong to"}},
		{"an admin naming an unknown project", admin, documents.DocumentInput{Title: documents.Some("x"), ProjectID: documents.Some(unknown)},
			map[string]string{"project_id": "must be a project you are a member of"}},
		{"several faults at once", alice, documents.DocumentInput{Status: documents.Some("x"), Tags: documents.Some([]string{"a\x00"})},
			map[string]string{"title": "is required", "status": "must be one of draft, review, published, archived",
				"tags": "must not contain NUL characters"}},
	}
	for _, c := range invalid {
		t.Run(c.name+" is a validation error", func(t *testing.T) {
			_, err := w.svc.Create(ctx, c.actor, c.in)
			if diff := cmp.Diff(c.fields, fieldsOf(t, err)); diff != "" {
				t.Fatalf("fields (-want +got)\n%s", diff)
			}
		})
	}
	t.Run("a viewer may not create", func(t *testing.T) {
		viewer := w.actor("vic@example.com", "viewer", "Engineering", false)
		_, err := w.svc.Create(ctx, viewer, documents.DocumentInput{})
		if codeOf(err) != quire.EFORBIDDEN {
			t.Fatalf("got %v, want FORBIDDEN before validation", err)
		}
	})
}

func TestUpdate(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	alice := w.actor("alice@example.com", "editor", "Engineering", true)
	bob := w.actor("bob@example.com", "editor", "Sales", false)
	folder := w.folder(alice, documents.FolderInput{Name: documents.Some("F")})
	create := func(in documents.DocumentInput) *quire.Document {
		t.Helper()
		w.tick()
		d, err := w.svc.Create(ctx, alice, in)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	versions := func(id string) int {
		t.Helper()
		vs, err := w.svc.Versions(ctx, alice, id)
		if err != nil {
			t.Fatal(err)
		}
		return len(vs)
	}

	t.Run("a save that changes nothing returns the document unchanged and records no version", func(t *testing.T) {
		d := create(documents.DocumentInput{Title: documents.Some("Same"), Content: documents.Some("body"), Tags: documents.Some([]string{"a", "B"})})
		w.tick()
		got, err := w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{
			Title: documents.Some(" Same "), Content: documents.Some("body"), Tags: documents.Some([]string{"a", "B", "b"}),
			DepartmentID: documents.Some(d.DepartmentID), Summary: documents.Null[string](), FolderID: documents.Null[string](),
		}, d.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(d, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		if n := versions(d.ID); n != 1 {
			t.Fatalf("%d versions, want 1", n)
		}
	})
	t.Run("null clears the summary and the folder", func(t *testing.T) {
		d := create(documents.DocumentInput{Title: documents.Some("S"), Summary: documents.Some("sum"), FolderID: documents.Some(folder.ID)})
		w.tick()
		got, err := w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{Summary: documents.Null[string](), FolderID: documents.Null[string]()}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Summary != "" || got.FolderID != "" || got.Version != 2 || !got.UpdatedAt.Equal(w.now) {
			t.Fatalf("got summary %q folder %q version %d updated %v", got.Summary, got.FolderID, got.Version, got.UpdatedAt)
		}
	})
	t.Run("null for other fields is a validation error naming each", func(t *testing.T) {
		d := create(documents.DocumentInput{Title: documents.Some("N")})
		_, err := w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{
			Title: documents.Null[string](), Content: documents.Null[string](), ContentType: documents.Null[string](),
			Status: documents.Null[string](), Visibility: documents.Null[string](), Tags: documents.Null[[]string](),
			DepartmentID: documents.Null[string](), ProjectID: documents.Null[string](),
		}, time.Time{})
		want := map[string]string{}
		for _, f := range []string{"title", "content", "content_type", "status", "visibility", "tags", "department_id", "project_id"} {
			want[f] = "must not be null"
		}
		if diff := cmp.Diff(want, fieldsOf(t, err)); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("a status may change to any other and back", func(t *testing.T) {
		d := create(documents.DocumentInput{Title: documents.Some("St")})
		for _, s := range []string{"archived", "draft", "published", "review", "draft"} {
			w.tick()
			got, err := w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{Status: documents.Some(s)}, d.UpdatedAt)
			if err != nil {
				t.Fatalf("to %s: %v", s, err)
			}
			d = got
		}
		if n := versions(d.ID); n != 6 {
			t.Fatalf("%d versions, want 6", n)
		}
	})
	t.Run("a public document of another department may be edited, its department kept", func(t *testing.T) {
		d := create(documents.DocumentInput{Title: documents.Some("Pub"), Visibility: documents.Some("public")})
		got, err := w.svc.Update(ctx, bob, d.ID, documents.DocumentInput{Content: documents.Some("by bob"),
			DepartmentID: documents.Some(d.DepartmentID)}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if got.DepartmentID != w.deps["Engineering"] {
			t.Fatalf("department %q", got.DepartmentID)
		}
		_, err = w.svc.Update(ctx, bob, d.ID, documents.DocumentInput{DepartmentID: documents.Some(w.deps["Engineering"]),
			ProjectID: documents.Some(w.proj)}, time.Time{})
		if diff := cmp.Diff(map[string]string{"project_id": "must be a project you are a member of"}, fieldsOf(t, err)); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("making a document departmental puts it in the editor's department when it has none", func(t *testing.T) {
		loner := w.actor("loner@example.com", "editor", "", false)
		d, err := w.svc.Create(ctx, loner, documents.DocumentInput{Title: documents.Some("L"), Visibility: documents.Some("public")})
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{Visibility: documents.Some("department")}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if got.DepartmentID != w.deps["Engineering"] {
			t.Fatalf("department %q", got.DepartmentID)
		}
		_, err = w.svc.Update(ctx, loner, d.ID, documents.DocumentInput{Visibility: documents.Some("project")}, time.Time{})
		if diff := cmp.Diff(map[string]string{"project_id": "is required for project visibility"}, fieldsOf(t, err)); diff != "" {
			t.Fatalf("the owner still sees it; (-want +got)\n%s", diff)
		}
	})
	t.Run("a stale guard is a conflict carrying the current document", func(t *testing.T) {
		d := create(documents.DocumentInput{Title: documents.Some("G")})
		w.tick()
		cur, err := w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{Title: documents.Some("G2")}, d.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{Title: documents.Some("G3")}, d.UpdatedAt)
		var e *quire.Error
		if !errors.As(err, &e) || e.Code != quire.EDOCUMENTCONFLICT {
			t.Fatalf("got %v, want DOCUMENT_CONFLICT", err)
		}
		if diff := cmp.Diff(cur, e.Document); diff != "" || !e.UpdatedAt.Equal(cur.UpdatedAt) {
			t.Fatalf("conflict document (-want +got)\n%s", diff)
		}
	})
	t.Run("ids that are not ids are not found", func(t *testing.T) {
		for _, id := range []string{"", "x", "' OR 1=1 --", strings.Repeat("a", 36)} {
			if _, err := w.svc.Get(ctx, alice, id); codeOf(err) != quire.ENOTFOUND {
				t.Fatalf("Get(%q): %v", id, err)
			}
			if _, err := w.svc.Update(ctx, alice, id, documents.DocumentInput{}, time.Time{}); codeOf(err) != quire.ENOTFOUND {
				t.Fatalf("Update(%q): %v", id, err)
			}
		}
	})
}

func TestRestore(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	alice := w.actor("alice@example.com", "editor", "Engineering", true)
	viewer := w.actor("vic@example.com", "viewer", "Engineering", false)
	f1 := w.folder(alice, documents.FolderInput{Name: documents.Some("Old")})
	d, err := w.svc.Create(ctx, alice, documents.DocumentInput{Title: documents.Some("v1"), Content: documents.Some("one"),
		Summary: documents.Some("first"), Tags: documents.Some([]string{"x"}), FolderID: documents.Some(f1.ID), Visibility: documents.Some("department")})
	if err != nil {
		t.Fatal(err)
	}
	w.tick()
	d, err = w.svc.Update(ctx, alice, d.ID, documents.DocumentInput{Title: documents.Some("v2"), Content: documents.Some("two"),
		Summary: documents.Null[string](), Tags: documents.Some([]string{"y", "z"}), FolderID: documents.Null[string](),
		Status: documents.Some("published"), Visibility: documents.Some("public"), ContentType: documents.Some("plain")}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.svc.DeleteFolder(ctx, alice, f1.ID); err != nil {
		t.Fatal(err)
	}

	t.Run("restoring version 1 records version 3 with its fields and a folder that is gone as none", func(t *testing.T) {
		w.tick()
		got, err := w.svc.Restore(ctx, alice, d.ID, 1, d.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		want := *d
		want.Title, want.Content, want.Summary, want.Tags, want.FolderID = "v1", "one", "first", []string{"x"}, ""
		want.Status, want.Visibility, want.ContentType, want.Version, want.UpdatedAt = "draft", "department", "markdown", 3, w.now
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		d = got
	})
	t.Run("restoring the current state still records a version", func(t *testing.T) {
		w.tick()
		got, err := w.svc.Restore(ctx, alice, d.ID, 3, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != 4 || got.Title != "v1" {
			t.Fatalf("version %d title %q", got.Version, got.Title)
		}
		vs, err := w.svc.Versions(ctx, alice, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		var nums []int
		for _, v := range vs {
			nums = append(nums, v.Number)
		}
		if diff := cmp.Diff([]int{4, 3, 2, 1}, nums); diff != "" {
			t.Fatalf("version numbers (-want +got)\n%s", diff)
		}
		d = got
	})
	t.Run("a version that does not exist is not found", func(t *testing.T) {
		for _, n := range []int{0, -1, 5} {
			if _, err := w.svc.Restore(ctx, alice, d.ID, n, time.Time{}); codeOf(err) != quire.ENOTFOUND {
				t.Fatalf("restore %d: %v", n, err)
			}
		}
	})
	t.Run("a stale guard is a conflict", func(t *testing.T) {
		_, err := w.svc.Restore(ctx, alice, d.ID, 2, d.UpdatedAt.Add(-time.Microsecond))
		if codeOf(err) != quire.EDOCUMENTCONFLICT {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a viewer may read versions but not restore", func(t *testing.T) {
		if _, err := w.svc.Version(ctx, viewer, d.ID, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Restore(ctx, viewer, d.ID, 1, time.Time{}); codeOf(err) != quire.EFORBIDDEN {
			t.Fatalf("got %v", err)
		}
	})
}

func TestFolders(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	alice := w.actor("alice@example.com", "editor", "Engineering", false)
	top := w.folder(alice, documents.FolderInput{Name: documents.Some(" Top ")})
	child := w.folder(alice, documents.FolderInput{Name: documents.Some("Child"), ParentID: documents.Some(top.ID)})
	if top.Name != "Top" || child.ParentID != top.ID {
		t.Fatalf("top %+v child %+v", top, child)
	}
	cases := []struct {
		name   string
		id     string
		in     documents.FolderInput
		fields map[string]string
	}{
		{"a folder under itself", top.ID, documents.FolderInput{ParentID: documents.Some(top.ID)},
			map[string]string{"parent_id": "must not be the folder itself or one of its descendants"}},
		{"a folder under its child", top.ID, documents.FolderInput{ParentID: documents.Some(child.ID)}, nil},
		{"an unknown parent", child.ID, documents.FolderInput{ParentID: documents.Some("0190a0b0-0000-7000-8000-0000000000ff")},
			map[string]string{"parent_id": "must name an existing folder"}},
		{"a null name", child.ID, documents.FolderInput{Name: documents.Null[string]()}, map[string]string{"name": "must not be null"}},
		{"a blank name", child.ID, documents.FolderInput{Name: documents.Some("  ")}, map[string]string{"name": "is required"}},
		{"a name of 201 characters", child.ID, documents.FolderInput{Name: documents.Some(strings.Repeat("n", 201))},
			map[string]string{"name": "must be at most 200 characters"}},
	}
	for _, c := range cases {
		t.Run(c.name+" is refused", func(t *testing.T) {
			_, err := w.svc.UpdateFolder(ctx, alice, c.id, c.in)
			fields := fieldsOf(t, err)
			if _, ok := fields["parent_id"]; c.fields == nil && (!ok || len(fields) != 1) {
				t.Fatalf("fields %v, want parent_id", fields)
			}
			if c.fields != nil {
				if diff := cmp.Diff(c.fields, fields); diff != "" {
					t.Fatalf("(-want +got)\n%s", diff)
				}
			}
		})
	}
	t.Run("a folder that holds a folder is not deleted", func(t *testing.T) {
		if err := w.svc.DeleteFolder(ctx, alice, top.ID); codeOf(err) != quire.EFOLDERNOTEMPTY {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("moving to the top and renaming works, and an unchanged update writes nothing", func(t *testing.T) {
		w.tick()
		got, err := w.svc.UpdateFolder(ctx, alice, child.ID, documents.FolderInput{Name: documents.Some("Moved"), ParentID: documents.Null[string]()})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Moved" || got.ParentID != "" || !got.UpdatedAt.Equal(w.now) {
			t.Fatalf("got %+v", got)
		}
		w.tick()
		again, err := w.svc.UpdateFolder(ctx, alice, child.ID, documents.FolderInput{Name: documents.Some("Moved")})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("unknown folders are not found", func(t *testing.T) {
		for _, id := range []string{"nope", "0190a0b0-0000-7000-8000-0000000000ff"} {
			if _, err := w.svc.UpdateFolder(ctx, alice, id, documents.FolderInput{}); codeOf(err) != quire.ENOTFOUND {
				t.Fatalf("update %q: %v", id, err)
			}
			if err := w.svc.DeleteFolder(ctx, alice, id); codeOf(err) != quire.ENOTFOUND {
				t.Fatalf("delete %q: %v", id, err)
			}
		}
	})
}

func TestSeedDemo(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	users := []quire.User{
		w.actor("ada@example.com", "admin", "Engineering", false).User,
		w.actor("ed@example.com", "editor", "Engineering", false).User,
		w.actor("sam@example.com", "editor", "Sales", false).User,
		w.actor("vi@example.com", "viewer", "Sales", false).User,
		w.actor("gus@example.com", "guest", "", false).User,
	}
	if err := documents.SeedDemo(ctx, w.store, users, w.now); err != nil {
		t.Fatal(err)
	}
	all := quire.Actor{User: users[0]}
	page, err := w.svc.List(ctx, all, documents.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total < 30 {
		t.Fatalf("%d documents, want a few dozen", page.Total)
	}
	seen := map[string]int{}
	owners := map[string]bool{}
	for _, d := range page.Documents {
		seen[d.Visibility]++
		owners[d.OwnerID] = true
		if d.UpdatedAt.After(w.now) {
			t.Fatalf("%q updated in the future: %v", d.Title, d.UpdatedAt)
		}
		if d.Version < 1 || d.Version > 3 {
			t.Fatalf("%q has %d versions, want 1 to 3", d.Title, d.Version)
		}
	}
	for _, v := range quire.Visibilities {
		if seen[v] == 0 {
			t.Fatalf("no %s document: %v", v, seen)
		}
	}
	if len(owners) < 2 {
		t.Fatalf("documents owned by %d users, want several", len(owners))
	}
	folders, err := w.svc.Folders(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	nested := 0
	for _, f := range folders {
		if f.ParentID != "" {
			nested++
		}
	}
	if len(folders) < 5 || nested == 0 {
		t.Fatalf("%d folders, %d nested", len(folders), nested)
	}
	t.Run("the viewer of Sales sees fewer documents than the admin", func(t *testing.T) {
		p, err := w.svc.List(ctx, quire.Actor{User: users[3]}, documents.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total == 0 || p.Total >= page.Total {
			t.Fatalf("viewer sees %d of %d", p.Total, page.Total)
		}
	})
}

func TestSeedDemoUsesTheProjectsItIsGiven(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ed := w.actor("ed@example.com", "editor", "Engineering", true) // member of Apollo
	sam := w.actor("sam@example.com", "editor", "Sales", false)
	if err := documents.SeedDemo(ctx, w.store, []quire.User{ed.User, sam.User}, w.now); err != nil {
		t.Fatal(err)
	}
	admin := quire.Actor{User: quire.User{ID: "x", Role: quire.Role{Docs: quire.LevelWrite, Admin: true}}}
	page, err := w.svc.List(ctx, admin, documents.ListParams{ProjectID: w.proj, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total == 0 {
		t.Fatal("no document in the project that existed")
	}
	for _, d := range page.Documents {
		if d.OwnerID != ed.User.ID {
			t.Fatalf("%q of project Apollo is owned by a non-member", d.Title)
		}
	}
	p, err := w.store.ProjectByName(ctx, "Apollo")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{ed.User.ID}, p.MemberIDs); diff != "" {
		t.Fatalf("members of an existing project changed (-want +got)\n%s", diff)
	}
}

func TestProjectsOfferedToFileIn(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	zephyr, err := w.store.CreateProject(ctx, "Zephyr")
	if err != nil {
		t.Fatal(err)
	}
	names := func(a quire.Actor) []string {
		t.Helper()
		ps, err := w.svc.Projects(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	if d := cmp.Diff([]string{"Apollo"}, names(w.actor("member@example.com", "editor", "", true))); d != "" {
		t.Errorf("a member (-want +got):\n%s", d)
	}
	if got := names(w.actor("outsider@example.com", "editor", "", false)); len(got) != 0 {
		t.Errorf("an outsider is offered %v", got)
	}
	if d := cmp.Diff([]string{"Apollo", zephyr.Name}, names(w.actor("root@example.com", "admin", "", false))); d != "" {
		t.Errorf("an admin (-want +got):\n%s", d)
	}
	if _, err := w.svc.Projects(ctx, w.actor("guest@example.com", "guest", "", true)); quire.ErrorCode(err) != quire.EFORBIDDEN {
		t.Errorf("a guest: %v", err)
	}
}
