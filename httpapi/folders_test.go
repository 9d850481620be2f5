package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

const foldersPath = "/api/documentation/folders"

type folderWire struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	ParentID  *string `json:"parent_id"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

// createFolder posts body and returns the folder, failing unless 201.
func createFolder(e *env, token string, body map[string]any) folderWire {
	e.t.Helper()
	return wantMember[folderWire](e.t, e.do("POST", foldersPath, bearer(token), jsonBody(body)), http.StatusCreated, "folder")
}

func listFolders(t testing.TB, e *env, token string) []folderWire {
	t.Helper()
	return wantMember[[]folderWire](t, e.do("GET", foldersPath, bearer(token)), http.StatusOK, "folders")
}

func TestFolders(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	viewer := fx.person("vic@example.com", "viewer", "Sales", false)
	guest := fx.person("gus@example.com", "guest", "Sales", false)
	now := formatTime(fx.clock.Now())

	var top, child, grandchild folderWire
	t.Run("a folder is created at the top, 201 with its fields", func(t *testing.T) {
		top = createFolder(fx.in(t).env, tok, map[string]any{"name": "  Engineering  ", "parent_id": nil})
		want := folderWire{ID: top.ID, Name: "Engineering", ParentID: nil, CreatedAt: now, UpdatedAt: now}
		if diff := cmp.Diff(want, top); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("folders nest", func(t *testing.T) {
		e := fx.in(t).env
		child = createFolder(e, tok, map[string]any{"name": "Runbooks", "parent_id": top.ID})
		grandchild = createFolder(e, tok, map[string]any{"name": "Databases", "parent_id": child.ID})
		if child.ParentID == nil || *child.ParentID != top.ID || *grandchild.ParentID != child.ID {
			t.Fatalf("child %+v grandchild %+v", child, grandchild)
		}
	})
	t.Run("every caller with view sees every folder", func(t *testing.T) {
		got := listFolders(t, fx.in(t).env, viewer)
		if diff := cmp.Diff([]folderWire{grandchild, top, child}, got); diff != "" {
			t.Fatalf("ordered by name (-want +got)\n%s", diff)
		}
	})
	t.Run("a guest may not list folders and a viewer may not change them", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("GET", foldersPath, bearer(guest)), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("POST", foldersPath, bearer(viewer), jsonBody(map[string]any{"name": "x"})), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("PUT", foldersPath+"/"+top.ID, bearer(viewer), jsonBody(map[string]any{"name": "x"})), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("DELETE", foldersPath+"/"+grandchild.ID, bearer(viewer)), http.StatusForbidden, quire.EFORBIDDEN)
	})
	invalid := []struct {
		name, method, path, body string
		fields                   map[string]string
	}{
		{"a create without name", "POST", foldersPath, `{}`, map[string]string{"name": "is required"}},
		{"a blank name", "POST", foldersPath, `{"name":"  "}`, map[string]string{"name": "is required"}},
		{"a name of 201 characters", "POST", foldersPath, `{"name":"` + strings.Repeat("n", 201) + `"}`, map[string]string{"name": "must be at most 200 characters"}},
		{"a name that is a number", "POST", foldersPath, `{"name":7}`, map[string]string{"name": "must be a string"}},
		{"an unknown parent", "POST", foldersPath, `{"name":"x","parent_id":"0190a0b0-0000-7000-8000-0000000000ff"}`, map[string]string{"parent_id": "must name an existing folder"}},
		{"a parent that is no id", "POST", foldersPath, `{"name":"x","parent_id":"top"}`, map[string]string{"parent_id": "must name an existing folder"}},
		{"a parent that is an array", "POST", foldersPath, `{"name":"x","parent_id":[]}`, map[string]string{"parent_id": "must be a string"}},
		{"a null name on update", "PUT", foldersPath + "/" + "TOP", `{"name":null}`, map[string]string{"name": "must not be null"}},
		{"a folder as its own parent", "PUT", foldersPath + "/" + "TOP", `{"parent_id":"TOP"}`,
			map[string]string{"parent_id": "must not be the folder itself or one of its descendants"}},
	}
	for _, c := range invalid {
		t.Run(c.name+" is a validation error naming it", func(t *testing.T) {
			fx := fx.in(t)
			r := fx.do(c.method, strings.ReplaceAll(c.path, "TOP", top.ID), bearer(tok),
				rawBody(strings.ReplaceAll(c.body, "TOP", top.ID)), header("Content-Type", "application/json"))
			fx.wantFields(r, c.fields)
		})
	}
	t.Run("a folder cannot move under one of its descendants", func(t *testing.T) {
		fx := fx.in(t)
		for _, under := range []string{child.ID, grandchild.ID} {
			r := fx.do("PUT", foldersPath+"/"+top.ID, bearer(tok), jsonBody(map[string]any{"parent_id": under}))
			fx.wantError(r, http.StatusBadRequest, quire.EVALIDATION)
			var body struct{ Fields map[string]string }
			r.decode(t, &body)
			if _, ok := body.Fields["parent_id"]; !ok {
				t.Fatalf("fields %v", body.Fields)
			}
		}
	})
	t.Run("a folder is renamed and moved to the top, 200 with its fields", func(t *testing.T) {
		fx := fx.in(t)
		fx.clock.Advance(time.Minute)
		r := fx.do("PUT", foldersPath+"/"+grandchild.ID, bearer(tok), jsonBody(map[string]any{"name": "DB", "parent_id": nil}))
		var out struct {
			Folder folderWire `json:"folder"`
		}
		strictDecode(t, r.Body, &out)
		want := grandchild
		want.Name, want.ParentID, want.UpdatedAt = "DB", nil, formatTime(fx.clock.Now())
		if diff := cmp.Diff(want, out.Folder); diff != "" || r.Status != http.StatusOK {
			t.Fatalf("%d (-want +got)\n%s", r.Status, diff)
		}
		grandchild = out.Folder
	})
	t.Run("a folder that holds a folder or a document is not deleted", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("DELETE", foldersPath+"/"+top.ID, bearer(tok)), http.StatusConflict, quire.EFOLDERNOTEMPTY)
		doc := fx.create(tok, map[string]any{"title": "In DB", "folder_id": grandchild.ID})
		fx.wantError(fx.do("DELETE", foldersPath+"/"+grandchild.ID, bearer(tok)), http.StatusConflict, quire.EFOLDERNOTEMPTY)
		list := decodeList(t, fx.do("GET", docsPath+"?folderId="+grandchild.ID, bearer(tok)))
		if len(list.Documents) != 1 || list.Documents[0].ID != doc.ID {
			t.Fatalf("folderId filter: %+v", list.Documents)
		}
		decodeDoc(t, fx.do("PUT", docsPath+"/"+doc.ID, bearer(tok), jsonBody(map[string]any{"folder_id": nil})))
	})
	t.Run("an empty folder is deleted with a message", func(t *testing.T) {
		fx := fx.in(t)
		r := fx.do("DELETE", foldersPath+"/"+grandchild.ID, bearer(tok))
		fx.wantMessage(r, "Folder deleted")
		if got := listFolders(t, fx.env, tok); len(got) != 2 {
			t.Fatalf("%d folders left", len(got))
		}
	})
	t.Run("an unknown folder is 404", func(t *testing.T) {
		fx := fx.in(t)
		for _, id := range []string{grandchild.ID, "nope"} {
			fx.wantError(fx.do("PUT", foldersPath+"/"+id, bearer(tok), jsonBody(map[string]any{"name": "x"})), http.StatusNotFound, quire.ENOTFOUND)
			fx.wantError(fx.do("DELETE", foldersPath+"/"+id, bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
		}
	})
}
