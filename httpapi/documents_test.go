package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

// personWire and docWire are the wire shapes of contract section 5, decoded
// strictly so that a missing or extra member shows up in a diff.
type personWire struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type docWire struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	Content      *string    `json:"content"`
	ContentType  string     `json:"content_type"`
	Summary      string     `json:"summary"`
	Status       string     `json:"status"`
	Visibility   string     `json:"visibility"`
	FolderID     *string    `json:"folder_id"`
	Tags         []string   `json:"tags"`
	DepartmentID *string    `json:"department_id"`
	ProjectID    *string    `json:"project_id"`
	Owner        personWire `json:"owner"`
	Version      int        `json:"version"`
	CreatedAt    string     `json:"created_at"`
	UpdatedAt    string     `json:"updated_at"`
	// Highlight is set in the results of a search (finding_test.go).
	Highlight *highlightWire `json:"highlight,omitempty"`
}

type paginationWire struct {
	CurrentPage int  `json:"currentPage"`
	Limit       int  `json:"limit"`
	Total       int  `json:"total"`
	TotalPages  int  `json:"totalPages"`
	HasMore     bool `json:"hasMore"`
}

type listWire struct {
	Documents  []docWire      `json:"documents"`
	Pagination paginationWire `json:"pagination"`
}

type versionWire struct {
	VersionNumber int          `json:"versionNumber"`
	Title         string       `json:"title"`
	Status        string       `json:"status"`
	CreatedAt     string       `json:"created_at"`
	CreatedBy     personWire   `json:"created_by"`
	Authors       []personWire `json:"authors"`
	Content       *string      `json:"content,omitempty"`
	ContentType   string       `json:"content_type,omitempty"`
	Summary       *string      `json:"summary,omitempty"`
	Visibility    string       `json:"visibility,omitempty"`
	Tags          []string     `json:"tags,omitempty"`
	FolderID      *string      `json:"folder_id,omitempty"`
}

type conflictWire struct {
	Code      string  `json:"code"`
	Message   string  `json:"message"`
	UpdatedAt string  `json:"updated_at"`
	Document  docWire `json:"document"`
}

// strictDecode decodes body into v, refusing members v does not have.
func strictDecode(t testing.TB, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", excerpt(body), err)
	}
}

func ptr[T any](v T) *T { return &v }

const docsPath = "/api/documentation/documents"

// docsFixture is an env with two departments, a project, and signed-in
// users in them.
type docsFixture struct {
	*env
	eng, sales, project string
	tokens              map[string]string // email -> token
	users               map[string]quire.User
}

// newDocsFixture is a docsFixture on newEnv(t, opts...), with project
// Apollo and no users yet.
func newDocsFixture(t *testing.T, opts ...envOption) *docsFixture {
	t.Helper()
	e := newEnv(t, opts...)
	fx := &docsFixture{env: e, tokens: map[string]string{}, users: map[string]quire.User{}}
	p, err := e.store.CreateProject(context.Background(), "Apollo")
	if err != nil {
		t.Fatal(err)
	}
	fx.project = p.ID
	return fx
}

// in returns the fixture reporting to t.
func (fx *docsFixture) in(t testing.TB) *docsFixture {
	c := *fx
	c.env = fx.env.withT(t)
	return &c
}

// person creates and signs in a user; member puts it in project Apollo.
func (fx *docsFixture) person(email, role, department string, member bool) string {
	fx.t.Helper()
	u := fx.user(email, role, department)
	fx.users[email] = u
	switch department {
	case "Engineering":
		fx.eng = u.DepartmentID
	case "Sales":
		fx.sales = u.DepartmentID
	}
	if member {
		if err := fx.store.AddProjectMember(context.Background(), fx.project, u.ID); err != nil {
			fx.t.Fatal(err)
		}
	}
	tok := fx.login(email)
	fx.tokens[email] = tok
	return tok
}

// create posts body and returns the created document, failing unless 201.
func (fx *docsFixture) create(token string, body map[string]any) docWire {
	fx.t.Helper()
	return wantMember[docWire](fx.t, fx.do("POST", docsPath, bearer(token), jsonBody(body)), http.StatusCreated, "document")
}

func decodeDoc(t testing.TB, r *resp) docWire {
	t.Helper()
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var out struct {
		Document docWire `json:"document"`
	}
	strictDecode(t, r.Body, &out)
	return out.Document
}

func decodeList(t testing.TB, r *resp) listWire {
	t.Helper()
	return wantBody[listWire](t, r, http.StatusOK)
}

func decodeVersions(t testing.TB, r *resp) []versionWire {
	t.Helper()
	return wantMember[[]versionWire](t, r, http.StatusOK, "versions")
}

// wantFields checks a 400 VALIDATION_ERROR naming exactly fields.
func (fx *docsFixture) wantFields(r *resp, fields map[string]string) {
	fx.t.Helper()
	fx.wantError(r, http.StatusBadRequest, quire.EVALIDATION)
	var body struct {
		Fields map[string]string `json:"fields"`
	}
	r.decode(fx.t, &body)
	if diff := cmp.Diff(fields, body.Fields); diff != "" {
		fx.t.Fatalf("fields (-want +got)\n%s", diff)
	}
}

func TestDocumentLifecycle(t *testing.T) {
	t.Parallel()
	fx := newDocsFixture(t)
	tok := fx.person("ada@example.com", "editor", "Engineering", true)
	ada := fx.users["ada@example.com"]
	now := formatTime(fx.clock.Now())

	var doc docWire
	t.Run("a created document is answered 201 with Location and every field", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("POST", docsPath, bearer(tok), jsonBody(map[string]any{
			"title": "  Runbook  ", "content": "# Steps", "content_type": "markdown", "summary": "How to",
			"status": "review", "visibility": "project", "tags": []string{"Ops", " ops ", "", "DB"},
			"project_id": fx.project, "unknown_member": true,
		}))
		doc = decodeDoc(t, r)
		want := docWire{
			ID: doc.ID, Title: "Runbook", Content: ptr("# Steps"), ContentType: "markdown", Summary: "How to",
			Status: "review", Visibility: "project", FolderID: nil, Tags: []string{"Ops", "DB"},
			DepartmentID: ptr(ada.DepartmentID), ProjectID: ptr(fx.project),
			Owner: personWire{ID: ada.ID, Name: "Ada"}, Version: 1, CreatedAt: now, UpdatedAt: now,
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		if loc := r.Header.Get("Location"); loc != docsPath+"/"+doc.ID {
			t.Fatalf("Location %q", loc)
		}
		if r.Header.Get("ETag") == "" {
			t.Fatal("no ETag")
		}
	})
	t.Run("reading it answers the same document with an ETag", func(t *testing.T) {
		r := fx.in(t).do("GET", docsPath+"/"+doc.ID, bearer(tok))
		if diff := cmp.Diff(doc, decodeDoc(t, r)); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		if r.Header.Get("ETag") == "" {
			t.Fatal("no ETag")
		}
	})
	t.Run("defaults fill a body with only a title", func(t *testing.T) {
		got := fx.in(t).create(tok, map[string]any{"title": "Bare", "summary": nil, "folder_id": nil})
		want := docWire{ID: got.ID, Title: "Bare", Content: ptr(""), ContentType: "markdown", Summary: "",
			Status: "draft", Visibility: "private", Tags: []string{}, DepartmentID: ptr(ada.DepartmentID),
			Owner: personWire{ID: ada.ID, Name: "Ada"}, Version: 1, CreatedAt: now, UpdatedAt: now}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("a list leaves content out unless includeContent is set", func(t *testing.T) {
		fx := fx.in(t)
		for _, c := range []struct {
			query       string
			withContent bool
		}{{"", false}, {"?includeContent=false", false}, {"?includeContent=0", false}, {"?includeContent=true", true}, {"?includeContent=1", true}} {
			list := decodeList(t, fx.do("GET", docsPath+c.query, bearer(tok)))
			if len(list.Documents) != 2 {
				t.Fatalf("%s: %d documents", c.query, len(list.Documents))
			}
			for _, d := range list.Documents {
				if (d.Content != nil) != c.withContent {
					t.Fatalf("%s: content present = %v", c.query, d.Content != nil)
				}
			}
		}
	})
	t.Run("an update answers the document after it", func(t *testing.T) {
		fx := fx.in(t)
		fx.clock.Advance(time.Minute)
		r := fx.do("PUT", docsPath+"/"+doc.ID, bearer(tok), jsonBody(map[string]any{
			"title": "Runbook v2", "tags": []string{"ops"}, "summary": nil, "baseUpdatedAt": doc.UpdatedAt,
		}))
		got := decodeDoc(t, r)
		want := doc
		want.Title, want.Tags, want.Summary, want.Version = "Runbook v2", []string{"ops"}, "", 2
		want.UpdatedAt = formatTime(fx.clock.Now())
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		doc = got
	})
	t.Run("deleting answers the message and takes the versions with it", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("DELETE", docsPath+"/"+doc.ID, bearer(tok))
		fx.wantMessage(r, "Document deleted")
		for _, p := range []string{"", "/versions", "/versions/1"} {
			fx.wantError(fx.do("GET", docsPath+"/"+doc.ID+p, bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
		}
		fx.wantError(fx.do("DELETE", docsPath+"/"+doc.ID, bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
	})
	t.Run("ids that are not ids are not found", func(t *testing.T) {
		fx := fx.in(t)
		for _, id := range []string{"nope", "%27%20OR%201=1--", strings.Repeat("a", 36), strings.ToUpper(doc.ID)} {
			fx.wantError(fx.do("GET", docsPath+"/"+id, bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
			fx.wantError(fx.do("PUT", docsPath+"/"+id, bearer(tok), jsonBody(map[string]any{"title": "x"})), http.StatusNotFound, quire.ENOTFOUND)
		}
	})
}

func TestDocumentValidation(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	fx.person("sam@example.com", "editor", "Sales", false)
	loner := fx.person("lou@example.com", "editor", "", false)
	doc := fx.create(tok, map[string]any{"title": "Target"})
	unknown := "0190a0b0-0000-7000-8000-0000000000ff"
	long := strings.Repeat("é", 301)
	tags51 := make([]string, 51)
	for i := range tags51 {
		tags51[i] = fmt.Sprint("tag", i)
	}

	cases := []struct {
		name   string
		method string
		token  string
		body   string
		fields map[string]string
	}{
		{"a create without title", "POST", tok, `{"content":"x"}`, map[string]string{"title": "is required"}},
		{"a blank title", "POST", tok, `{"title":"   "}`, map[string]string{"title": "is required"}},
		{"a title of 301 characters", "POST", tok, `{"title":"` + long + `"}`, map[string]string{"title": "must be at most 300 characters"}},
		{"a title that is a number", "POST", tok, `{"title":5}`, map[string]string{"title": "must be a string"}},
		{"a content that is an object", "POST", tok, `{"title":"t","content":{}}`, map[string]string{"content": "must be a string"}},
		{"a NUL in the title", "POST", tok, `{"title":"a\u0000b"}`, map[string]string{"title": "must not contain NUL characters"}},
		{"an unknown content_type", "POST", tok, `{"title":"t","content_type":"docx"}`, map[string]string{"content_type": "must be one of html, markdown, plain"}},
		{"an unknown status", "POST", tok, `{"title":"t","status":"gone"}`, map[string]string{"status": "must be one of draft, review, published, archived"}},
		{"an unknown visibility", "POST", tok, `{"title":"t","visibility":"team"}`, map[string]string{"visibility": "must be one of private, department, project, public"}},
		{"a summary of 1001 characters", "POST", tok, `{"title":"t","summary":"` + strings.Repeat("s", 1001) + `"}`, map[string]string{"summary": "must be at most 1000 characters"}},
		{"tags that are a string", "POST", tok, `{"title":"t","tags":"a,b"}`, map[string]string{"tags": "must be an array of strings"}},
		{"tags holding a number", "POST", tok, `{"title":"t","tags":["a",1]}`, map[string]string{"tags": "must be an array of strings"}},
		{"tags holding null", "POST", tok, `{"title":"t","tags":[null]}`, map[string]string{"tags": "must be an array of strings"}},
		{"51 tags", "POST", tok, mustJSON(map[string]any{"title": "t", "tags": tags51}), map[string]string{"tags": "must hold at most 50 tags"}},
		{"a tag of 65 characters", "POST", tok, `{"title":"t","tags":["` + strings.Repeat("x", 65) + `"]}`, map[string]string{"tags": "each tag must be at most 64 characters"}},
		{"an unknown folder", "POST", tok, `{"title":"t","folder_id":"` + unknown + `"}`, map[string]string{"folder_id": "must name an existing folder"}},
		{"a folder that is no id", "POST", tok, `{"title":"t","folder_id":"../../etc"}`, map[string]string{"folder_id": "must name an existing folder"}},
		{"another department", "POST", tok, `{"title":"t","department_id":"` + fx.sales + `"}`, map[string]string{"department_id": "must be a department you belong to"}},
		{"a project the creator is not in", "POST", tok, `{"title":"t","project_id":"` + fx.project + `"}`, map[string]string{"project_id": "must be a project you are a member of"}},
		{"project visibility without a project", "POST", tok, `{"title":"t","visibility":"project"}`, map[string]string{"project_id": "is required for project visibility"}},
		{"department visibility from a creator without a department", "POST", loner, `{"title":"t","visibility":"department"}`,
			map[string]string{"department_id": "is required for department visibility"}},
		{"several faults at once", "POST", tok, `{"status":"x","visibility":"y","tags":5}`, map[string]string{"title": "is required",
			"status": "must be one of draft, review, published, archived", "visibility": "must be one of private, department, project, public",
			"tags": "must be an array of strings"}},
		{"a null title on update", "PUT", tok, `{"title":null}`, map[string]string{"title": "must not be null"}},
		{"a null status on update", "PUT", tok, `{"status":null,"visibility":null,"content":null,"content_type":null,"tags":null}`,
			map[string]string{"status": "must not be null", "visibility": "must not be null", "content": "must not be null",
				"content_type": "must not be null", "tags": "must not be null"}},
		{"a null department on update", "PUT", tok, `{"department_id":null,"project_id":null}`,
			map[string]string{"department_id": "must not be null", "project_id": "must not be null"}},
		{"moving to another department on update", "PUT", tok, `{"department_id":"` + fx.sales + `"}`,
			map[string]string{"department_id": "must be a department you belong to"}},
		{"an update to project visibility without a project", "PUT", tok, `{"visibility":"project"}`,
			map[string]string{"project_id": "is required for project visibility"}},
		{"a baseUpdatedAt that is no timestamp", "PUT", tok, `{"title":"x","baseUpdatedAt":"yesterday"}`,
			map[string]string{"baseUpdatedAt": "must be an RFC 3339 timestamp, such as the updated_at last read"}},
		{"a baseUpdatedAt that is a number", "PUT", tok, `{"baseUpdatedAt":1764064800}`,
			map[string]string{"baseUpdatedAt": "must be an RFC 3339 timestamp, such as the updated_at last read"}},
		{"a restore guard that is no timestamp", "RESTORE", tok, `{"baseUpdatedAt":"2026-13-45T99:00:00Z"}`,
			map[string]string{"baseUpdatedAt": "must be an RFC 3339 timestamp, such as the updated_at last read"}},
	}
	for _, c := range cases {
		t.Run(c.name+" is a validation error naming it", func(t *testing.T) {
			fx := fx.in(t)
			method, path := c.method, docsPath
			switch c.method {
			case "PUT":
				path += "/" + doc.ID
			case "RESTORE":
				method, path = "POST", path+"/"+doc.ID+"/versions/1/restore"
			}
			r := fx.do(method, path, bearer(c.token), rawBody(c.body), header("Content-Type", "application/json"))
			fx.wantFields(r, c.fields)
		})
	}
	t.Run("nothing was written by the refused requests", func(t *testing.T) {
		fx := fx.in(t)
		list := decodeList(t, fx.do("GET", docsPath, bearer(tok)))
		if list.Pagination.Total != 1 {
			t.Fatalf("%d documents", list.Pagination.Total)
		}
		if vs := decodeVersions(t, fx.do("GET", docsPath+"/"+doc.ID+"/versions", bearer(tok))); len(vs) != 1 {
			t.Fatalf("%d versions", len(vs))
		}
	})
	t.Run("bodies that are not a JSON object are INVALID_JSON", func(t *testing.T) {
		fx := fx.in(t)
		for _, body := range []string{"", "[]", `{"title":`, `"t"`, `{"title":"a"} {}`} {
			r := fx.do("POST", docsPath, bearer(tok), rawBody(body), header("Content-Type", "application/json"))
			fx.wantError(r, http.StatusBadRequest, quire.EINVALIDJSON)
		}
		fx.wantError(fx.do("PUT", docsPath+"/"+doc.ID, bearer(tok), rawBody("")), http.StatusBadRequest, quire.EINVALIDJSON)
	})
	t.Run("a body that is not JSON by its Content-Type is 415", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("POST", docsPath, bearer(tok), rawBody(`{"title":"t"}`), header("Content-Type", "text/plain"))
		fx.wantError(r, http.StatusUnsupportedMediaType, quire.EUNSUPPORTEDMEDIATYPE)
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestDocumentConflictGuard(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	other := fx.person("bob@example.com", "editor", "Engineering", false)
	doc := fx.create(tok, map[string]any{"title": "Shared", "visibility": "department", "content": "v1"})
	path := docsPath + "/" + doc.ID
	get := func(t *testing.T) (docWire, string) {
		r := fx.in(t).do("GET", path, bearer(tok))
		return decodeDoc(t, r), r.Header.Get("ETag")
	}
	put := func(t *testing.T, body map[string]any, opts ...reqOpt) *resp {
		fx.clock.Advance(time.Second)
		return fx.in(t).do("PUT", path, append([]reqOpt{bearer(tok), jsonBody(body)}, opts...)...)
	}
	wantConflict := func(t *testing.T, r *resp) {
		t.Helper()
		cur, _ := get(t)
		if r.Status != http.StatusConflict {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		var got conflictWire
		strictDecode(t, r.Body, &got)
		want := conflictWire{Code: quire.EDOCUMENTCONFLICT, Message: got.Message, UpdatedAt: cur.UpdatedAt, Document: cur}
		if diff := cmp.Diff(want, got); diff != "" || got.Message == "" {
			t.Fatalf("conflict body (-want +got)\n%s", diff)
		}
	}

	t.Run("a current baseUpdatedAt is accepted", func(t *testing.T) {
		cur, _ := get(t)
		decodeDoc(t, put(t, map[string]any{"content": "v2", "baseUpdatedAt": cur.UpdatedAt}))
	})
	t.Run("a stale baseUpdatedAt is 409 with the current updated_at and document", func(t *testing.T) {
		cur, _ := get(t)
		r := fx.in(t).do("PUT", path, bearer(other), jsonBody(map[string]any{"content": "bob's", "baseUpdatedAt": cur.UpdatedAt}))
		decodeDoc(t, r)
		wantConflict(t, put(t, map[string]any{"content": "ada's", "baseUpdatedAt": cur.UpdatedAt}))
	})
	t.Run("a stale baseUpdatedAt is a conflict even when the save would change nothing", func(t *testing.T) {
		wantConflict(t, put(t, map[string]any{"baseUpdatedAt": doc.UpdatedAt}))
	})
	t.Run("the same instant written in another zone is current", func(t *testing.T) {
		cur, _ := get(t)
		at, err := time.Parse(time.RFC3339Nano, cur.UpdatedAt)
		if err != nil {
			t.Fatal(err)
		}
		zoned := at.In(time.FixedZone("", 5*3600+1800)).Format(time.RFC3339Nano)
		decodeDoc(t, put(t, map[string]any{"content": "zoned", "baseUpdatedAt": zoned}))
	})
	t.Run("If-Match with the ETag of a GET guards the same way", func(t *testing.T) {
		_, tag := get(t)
		decodeDoc(t, put(t, map[string]any{"content": "etag 1"}, header("If-Match", tag)))
		wantConflict(t, put(t, map[string]any{"content": "etag 2"}, header("If-Match", tag)))
		_, fresh := get(t)
		if fresh == tag {
			t.Fatal("the ETag did not change with the save")
		}
	})
	t.Run("the ETag of an update's answer guards the next one", func(t *testing.T) {
		_, tag := get(t)
		r := put(t, map[string]any{"content": "chained 1"}, header("If-Match", tag))
		decodeDoc(t, r)
		next := r.Header.Get("ETag")
		if _, fresh := get(t); next == "" || next != fresh {
			t.Fatalf("update answered ETag %q, a read %q", next, fresh)
		}
		decodeDoc(t, put(t, map[string]any{"content": "chained 2"}, header("If-Match", next)))
	})
	t.Run("If-Match * applies the update", func(t *testing.T) {
		decodeDoc(t, put(t, map[string]any{"content": "star"}, header("If-Match", "*")))
	})
	t.Run("a weak, foreign or malformed If-Match can never match and is a conflict", func(t *testing.T) {
		_, tag := get(t)
		for _, v := range []string{"W/" + tag, `"abc"`, strings.Trim(tag, `"`), `"1-2"`, `"", ""`, "garbage"} {
			wantConflict(t, put(t, map[string]any{"content": "never"}, header("If-Match", v)))
		}
	})
	t.Run("If-Match and baseUpdatedAt that disagree are a conflict", func(t *testing.T) {
		cur, tag := get(t)
		stale := doc.UpdatedAt
		wantConflict(t, put(t, map[string]any{"content": "never", "baseUpdatedAt": stale}, header("If-Match", tag)))
		decodeDoc(t, put(t, map[string]any{"content": "both", "baseUpdatedAt": cur.UpdatedAt}, header("If-Match", tag)))
	})
	t.Run("restore is guarded by baseUpdatedAt and If-Match", func(t *testing.T) {
		fx := fx.in(t)
		cur, tag := get(t)
		restore := path + "/versions/1/restore"
		wantConflict(t, fx.do("POST", restore, bearer(tok), jsonBody(map[string]any{"baseUpdatedAt": doc.UpdatedAt})))
		wantConflict(t, fx.do("POST", restore, bearer(tok), header("If-Match", `"1-1"`)))
		got := decodeDoc(t, fx.do("POST", restore, bearer(tok), jsonBody(map[string]any{"baseUpdatedAt": cur.UpdatedAt}), header("If-Match", tag)))
		if *got.Content != "v1" || got.Version != cur.Version+1 {
			t.Fatalf("restored content %q version %d", *got.Content, got.Version)
		}
	})
	t.Run("without a guard the update is applied as sent", func(t *testing.T) {
		got := decodeDoc(t, put(t, map[string]any{"content": "blind"}))
		if *got.Content != "blind" {
			t.Fatalf("content %q", *got.Content)
		}
	})
}

func TestDocumentSaveWithoutChange(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	folder := createFolder(fx.env, tok, map[string]any{"name": "F"})
	doc := fx.create(tok, map[string]any{"title": "Same", "content": "body", "summary": "s", "tags": []string{"A", "b"}, "folder_id": folder.ID})
	path := docsPath + "/" + doc.ID
	etag := fx.do("GET", path, bearer(tok)).Header.Get("ETag")
	fx.clock.Advance(time.Hour)

	r := fx.do("PUT", path, bearer(tok), header("If-Match", etag), jsonBody(map[string]any{
		"title": " Same ", "content": "body", "content_type": "markdown", "summary": "s", "status": "draft",
		"visibility": "private", "tags": []string{"A", "b", "B", " "}, "folder_id": folder.ID,
		"department_id": *doc.DepartmentID, "baseUpdatedAt": doc.UpdatedAt,
	}))
	if diff := cmp.Diff(doc, decodeDoc(t, r)); diff != "" {
		t.Fatalf("a save that changes nothing returns the document unchanged (-want +got)\n%s", diff)
	}
	if vs := decodeVersions(t, fx.do("GET", path+"/versions", bearer(tok))); len(vs) != 1 {
		t.Fatalf("a save that changes nothing recorded a version: %d versions", len(vs))
	}
	if again := fx.do("GET", path, bearer(tok)).Header.Get("ETag"); again != etag {
		t.Fatalf("ETag moved from %s to %s", etag, again)
	}
	r = fx.do("PUT", path, bearer(tok), jsonBody(map[string]any{"tags": []string{"a", "b"}}))
	if got := decodeDoc(t, r); got.Version != 2 {
		t.Fatalf("a change of spelling is a change: version %d", got.Version)
	}
}

func TestDocumentVersions(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	bob := fx.person("bob@example.com", "editor", "Engineering", false)
	ada, bobUser := fx.users["ada@example.com"], fx.users["bob@example.com"]
	folder := createFolder(fx.env, tok, map[string]any{"name": "Old"})
	t1 := fx.clock.Now()
	doc := fx.create(tok, map[string]any{"title": "First", "content": "one", "summary": "s1", "tags": []string{"x"},
		"folder_id": folder.ID, "visibility": "department", "content_type": "plain"})
	path := docsPath + "/" + doc.ID
	fx.clock.Advance(time.Minute)
	t2 := fx.clock.Now()
	decodeDoc(t, fx.do("PUT", path, bearer(bob), jsonBody(map[string]any{"status": "published", "title": "Second",
		"content": "two", "folder_id": nil, "tags": []string{}, "summary": nil, "content_type": "html"})))
	fx.clock.Advance(time.Minute)
	t3 := fx.clock.Now()
	decodeDoc(t, fx.do("PUT", path, bearer(tok), jsonBody(map[string]any{"status": "archived"})))
	r := fx.do("DELETE", "/api/documentation/folders/"+folder.ID, bearer(tok))
	if r.Status != http.StatusOK {
		t.Fatalf("delete folder: %d %s", r.Status, r.Body)
	}

	t.Run("the list is newest first with its author", func(t *testing.T) {
		got := decodeVersions(t, fx.in(t).do("GET", path+"/versions", bearer(tok)))
		want := []versionWire{
			{VersionNumber: 3, Title: "Second", Status: "archived", CreatedAt: formatTime(t3), CreatedBy: personWire{ada.ID, "Ada"}, Authors: []personWire{}},
			{VersionNumber: 2, Title: "Second", Status: "published", CreatedAt: formatTime(t2), CreatedBy: personWire{bobUser.ID, "Bob"}, Authors: []personWire{}},
			{VersionNumber: 1, Title: "First", Status: "draft", CreatedAt: formatTime(t1), CreatedBy: personWire{ada.ID, "Ada"}, Authors: []personWire{}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("a version's detail holds the fields it saved", func(t *testing.T) {
		var got struct {
			Version versionWire `json:"version"`
		}
		strictDecode(t, fx.in(t).do("GET", path+"/versions/1", bearer(bob)).Body, &got)
		want := versionWire{VersionNumber: 1, Title: "First", Status: "draft", CreatedAt: formatTime(t1),
			CreatedBy: personWire{ada.ID, "Ada"}, Authors: []personWire{}, Content: ptr("one"), ContentType: "plain", Summary: ptr("s1"),
			Visibility: "department", Tags: []string{"x"}, FolderID: ptr(folder.ID)}
		if diff := cmp.Diff(want, got.Version); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("restoring version 1 records version 4 with its fields, the deleted folder as none", func(t *testing.T) {
		fx := fx.in(t)
		fx.clock.Advance(time.Minute)
		got := decodeDoc(t, fx.do("POST", path+"/versions/1/restore", bearer(bob)))
		want := doc
		want.Version, want.UpdatedAt, want.FolderID = 4, formatTime(fx.clock.Now()), nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		vs := decodeVersions(t, fx.do("GET", path+"/versions", bearer(tok)))
		if len(vs) != 4 || vs[0].VersionNumber != 4 || vs[0].CreatedBy.ID != bobUser.ID || vs[0].Title != "First" {
			t.Fatalf("versions after restore: %+v", vs)
		}
	})
	t.Run("restoring the current version still records one", func(t *testing.T) {
		got := decodeDoc(t, fx.in(t).do("POST", path+"/versions/4/restore", bearer(tok), rawBody("")))
		if got.Version != 5 {
			t.Fatalf("version %d", got.Version)
		}
	})
	t.Run("a version number that names no version is 404", func(t *testing.T) {
		fx := fx.in(t)
		for _, n := range []string{"0", "6", "-1", "01", "+1", "1.0", "x", "99999999999999999999", "1%20"} {
			fx.wantError(fx.do("GET", path+"/versions/"+n, bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
			fx.wantError(fx.do("POST", path+"/versions/"+n+"/restore", bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
		}
	})
}

func TestDocumentSearch(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	other := fx.person("bob@example.com", "editor", "Engineering", false)
	cafe := fx.create(tok, map[string]any{"title": "Café opening hours", "content": "Open from 8am", "visibility": "public"})
	deploy := fx.create(tok, map[string]any{"title": "Deploying", "summary": "Blue-green deployments", "content": "Use the pipeline", "visibility": "public"})
	secret := fx.create(other, map[string]any{"title": "Secret deployment plan", "content": "café", "visibility": "private"})
	ids := func(t *testing.T, query string) []string {
		list := decodeList(t, fx.in(t).do("GET", docsPath+"?"+query, bearer(tok)))
		out := []string{}
		for _, d := range list.Documents {
			out = append(out, d.ID)
		}
		if list.Pagination.Total != len(out) {
			t.Fatalf("total %d for %d documents", list.Pagination.Total, len(out))
		}
		return out
	}
	found := []struct {
		name, search string
		want         []string
	}{
		{"a word ignoring case and accents", "CAFE", []string{cafe.ID}},
		{"the start of a word", "deplo", []string{deploy.ID}},
		{"words in any field, all of them", "green pipeline", []string{deploy.ID}},
		{"nothing when one word is missing", "green missing", []string{}},
		{"not the middle of a word", "ploy", []string{}},
		{"punctuation as separators", `"blue-green"`, []string{deploy.ID}},
	}
	for _, c := range found {
		t.Run("search finds "+c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, ids(t, "search="+url.QueryEscape(c.search))); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
	t.Run("no search reveals a private document of another user", func(t *testing.T) {
		for _, q := range []string{"search=secret", "search=deployment", "search=caf%C3%A9", "departmentId=" + fx.eng,
			"departmentId=" + fx.eng + "&search=plan", "visibility=private", "tags=", "sortBy=title&sortOrder=asc"} {
			for _, id := range ids(t, q) {
				if id == secret.ID {
					t.Fatalf("%s revealed the private document", q)
				}
			}
		}
	})

	hostile := []string{
		`"`, `""`, `"unterminated`, `*`, `deplo*`, `NEAR(a b)`, `NEAR(`, `-`, `-deploy`, `a OR b`, `OR`, `AND NOT`,
		`%`, `_`, `%_%`, `\`, `\\`, `\"`, `'`, `''`, `'; DROP TABLE documents; --`, `1' OR '1'='1`, `title:secret`,
		`{title}: x`, `^deploy`, `(deploy)`, `deploy)`, `:`, `+`, `!`, `$1`, `?`, `@@`, `<script>`, `café`, `ＣＡＦＥ`,
		"e\u0301", "\u0301", "日本語の文書", "🚀 deploy", "🚀", "\u200b", "\t\n", " ", "a\u00a0b", "ß", "İstanbul",
		strings.Repeat("a ", quire.MaxSearchWords), strings.Repeat("x", quire.MaxSearchLength),
	}
	t.Run("hostile searches are answered 200", func(t *testing.T) {
		fx := fx.in(t)
		for _, s := range hostile {
			r := fx.do("GET", docsPath+"?search="+url.QueryEscape(s), bearer(tok))
			list := decodeList(t, r)
			for _, d := range list.Documents {
				if d.ID == secret.ID {
					t.Fatalf("%q revealed the private document", s)
				}
			}
		}
	})
	t.Run("too long searches are 400 naming search", func(t *testing.T) {
		fx := fx.in(t)
		for _, s := range []string{
			strings.Repeat("x", 10000), strings.Repeat("🚀", quire.MaxSearchLength+1),
			strings.Repeat("a ", quire.MaxSearchWords+1),
		} {
			r := fx.do("GET", docsPath+"?search="+url.QueryEscape(s), bearer(tok))
			fx.wantError(r, http.StatusBadRequest, quire.EVALIDATION)
			var body struct{ Fields map[string]string }
			r.decode(t, &body)
			if _, ok := body.Fields["search"]; !ok || len(body.Fields) != 1 {
				t.Fatalf("fields %v", body.Fields)
			}
		}
	})
}

func TestDocumentListParameters(t *testing.T) {
	t.Parallel()
	fx := newDocsFixture(t)
	tok := fx.person("ada@example.com", "editor", "Engineering", true)
	folder := createFolder(fx.env, tok, map[string]any{"name": "F"})
	a := fx.create(tok, map[string]any{"title": "A", "status": "published", "tags": []string{"Go", "DB"}, "folder_id": folder.ID})
	b := fx.create(tok, map[string]any{"title": "B", "visibility": "project", "project_id": fx.project, "tags": []string{"go"}})
	c := fx.create(tok, map[string]any{"title": "C", "visibility": "public"})
	ids := func(t *testing.T, query string) []string {
		list := decodeList(t, fx.in(t).do("GET", docsPath+"?sortBy=title&sortOrder=asc&"+query, bearer(tok)))
		out := []string{}
		for _, d := range list.Documents {
			out = append(out, d.ID)
		}
		return out
	}
	filters := []struct {
		query string
		want  []string
	}{
		{"status=published", []string{a.ID}},
		{"status=draft", []string{b.ID, c.ID}},
		{"visibility=project", []string{b.ID}},
		{"tags=go", []string{a.ID, b.ID}},
		{"tags=%20GO%20,,db", []string{a.ID}},
		{"tags=go,missing", []string{}},
		{"folderId=" + folder.ID, []string{a.ID}},
		{"projectId=" + fx.project, []string{b.ID}},
		{"departmentId=" + fx.eng, []string{a.ID, b.ID, c.ID}},
		{"departmentId=0190a0b0-0000-7000-8000-0000000000ff", []string{}},
		{"status=&visibility=&search=&tags=", []string{a.ID, b.ID, c.ID}},
		// Contract section 5: any characters are searched literally, NUL
		// too, which separates words as any other non-letter does; a tag
		// with a NUL is carried by no document.
		{"search=%00a%00", []string{a.ID}},
		{"search=%00", []string{}},
		{"search=a%00b", []string{}},
		{"tags=go%00", []string{}},
		{"tags=go,%00", []string{}},
	}
	for _, f := range filters {
		t.Run("filter "+f.query, func(t *testing.T) {
			if diff := cmp.Diff(f.want, ids(t, f.query)); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
	bad := []struct{ query, field string }{
		{"page=0", "page"}, {"page=-3", "page"}, {"page=x", "page"}, {"page=1.5", "page"},
		{"limit=0", "limit"}, {"limit=-1", "limit"}, {"limit=abc", "limit"},
		{"status=gone", "status"}, {"visibility=team", "visibility"}, {"sortBy=owner", "sortBy"},
		{"sortOrder=random", "sortOrder"}, {"includeContent=yes", "includeContent"},
		{"departmentId=1%20OR%201=1", "departmentId"}, {"folderId=x", "folderId"}, {"projectId=%25", "projectId"},
		{"search=%FF%FE", "search"}, {"tags=%FF", "tags"}, {"status=draft%00", "status"}, {"sortBy=title%00", "sortBy"},
		{"folderId=%00", "folderId"}, {"page=1;limit=2", "query"}, {"search=%zz", "query"},
	}
	for _, c := range bad {
		t.Run(c.query+" is 400 naming "+c.field, func(t *testing.T) {
			fx := fx.in(t)
			r := fx.do("GET", docsPath+"?"+c.query, bearer(tok))
			fx.wantError(r, http.StatusBadRequest, quire.EVALIDATION)
			var body struct{ Fields map[string]string }
			r.decode(t, &body)
			if _, ok := body.Fields[c.field]; !ok || len(body.Fields) != 1 {
				t.Fatalf("fields %v, want %s", body.Fields, c.field)
			}
		})
	}
	t.Run("a limit above 100 is clamped to 100", func(t *testing.T) {
		for _, l := range []string{"101", "100000", "99999999999999999999999"} {
			list := decodeList(t, fx.in(t).do("GET", docsPath+"?limit="+l, bearer(tok)))
			if list.Pagination.Limit != 100 {
				t.Fatalf("limit=%s: %+v", l, list.Pagination)
			}
		}
	})
	t.Run("a page past the end is empty", func(t *testing.T) {
		list := decodeList(t, fx.in(t).do("GET", docsPath+"?page=9223372036854775807&limit=100", bearer(tok)))
		want := paginationWire{CurrentPage: 9223372036854775807, Limit: 100, Total: 3, TotalPages: 1, HasMore: false}
		if diff := cmp.Diff(want, list.Pagination); diff != "" || len(list.Documents) != 0 {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("the role is checked before the parameters and the body", func(t *testing.T) {
		fx := fx.in(t)
		guest := fx.person("gus@example.com", "guest", "Engineering", false)
		viewer := fx.person("vic@example.com", "viewer", "Engineering", false)
		fx.wantError(fx.do("GET", docsPath+"?page=0&sortBy=x", bearer(guest)), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("POST", docsPath, bearer(viewer), rawBody("{"), header("Content-Type", "application/json")),
			http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("PUT", docsPath+"/"+a.ID, bearer(viewer), jsonBody(map[string]any{"title": nil})), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("POST", docsPath+"/"+a.ID+"/versions/x/restore", bearer(viewer)), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("GET", docsPath+"/"+a.ID+"/versions/x", bearer(guest)), http.StatusForbidden, quire.EFORBIDDEN)
	})
	t.Run("camelCase sort keys are accepted", func(t *testing.T) {
		fx := fx.in(t)
		for _, k := range []string{"updatedAt", "createdAt", "updated_at", "created_at", "title", "status", "relevance"} {
			decodeList(t, fx.do("GET", docsPath+"?sortBy="+k, bearer(tok)))
		}
	})
}
