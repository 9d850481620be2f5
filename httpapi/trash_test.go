package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

const trashPath = "/api/documentation/trash"

// trashedWire is a document of the trash list: DOCUMENT without content,
// plus deleted_at and deleted_by.
type trashedWire struct {
	docWire
	DeletedAt string     `json:"deleted_at"`
	DeletedBy personWire `json:"deleted_by"`
}

type trashListWire struct {
	Documents  []trashedWire  `json:"documents"`
	Pagination paginationWire `json:"pagination"`
}

func decodeTrash(t testing.TB, r *resp) trashListWire {
	t.Helper()
	return wantBody[trashListWire](t, r, http.StatusOK)
}

func trashTitles(l trashListWire) []string {
	titles := []string{}
	for _, d := range l.Documents {
		titles = append(titles, d.Title)
	}
	return titles
}

func wantMessage(t testing.TB, r *resp, msg string) {
	t.Helper()
	var body map[string]string
	strictDecode(t, r.Body, &body)
	if r.Status != http.StatusOK || body["message"] != msg {
		t.Fatalf("%d %s, want 200 %q", r.Status, r.Body, msg)
	}
}

func TestTrash(t *testing.T) {
	t.Parallel()
	fx := newDocsFixture(t)
	ada := fx.person("ada@example.com", "editor", "Engineering", true)
	bob := fx.person("bob@example.com", "editor", "Engineering", false)
	carol := fx.person("carol@example.com", "editor", "Sales", false)
	vic := fx.person("vic@example.com", "viewer", "Engineering", false)
	root := fx.person("root@example.com", "admin", "", false)
	guest := fx.person("guest@example.com", "guest", "", false)
	folder := createFolder(fx.env, ada, map[string]any{"name": "Handbook"})

	eng := fx.create(ada, map[string]any{"title": "Eng notes", "content": "zeppelin", "visibility": "department"})
	fx.clock.Advance(time.Second)
	eng = decodeDoc(t, fx.do("PUT", docsPath+"/"+eng.ID, bearer(ada), jsonBody(map[string]any{"content": "zeppelin v2"})))
	private := fx.create(ada, map[string]any{"title": "Ada's diary", "content": "zeppelin"})
	public := fx.create(ada, map[string]any{"title": "Handbook", "visibility": "public", "folder_id": folder.ID})

	fx.clock.Advance(time.Minute)
	deletedAt := formatTime(fx.clock.Now())
	t.Run("a delete keeps its answer and the document leaves every documents endpoint", func(t *testing.T) {
		fx := fx.in(t)
		wantMessage(t, fx.do("DELETE", docsPath+"/"+eng.ID, bearer(bob)), "Document deleted")
		for _, c := range []struct{ method, path string }{
			{"GET", ""}, {"PUT", ""}, {"DELETE", ""}, {"GET", "/versions"}, {"GET", "/versions/1"},
			{"POST", "/versions/1/restore"},
		} {
			var opts []reqOpt
			if c.method == "PUT" {
				opts = append(opts, jsonBody(map[string]any{"title": "back"}))
			}
			fx.wantError(fx.do(c.method, docsPath+"/"+eng.ID+c.path, append(opts, bearer(ada))...), http.StatusNotFound, quire.ENOTFOUND)
		}
		for _, q := range []string{"", "?search=zeppelin", "?status=draft", "?visibility=department"} {
			list := decodeList(t, fx.do("GET", docsPath+q, bearer(ada)))
			for _, d := range list.Documents {
				if d.ID == eng.ID {
					t.Errorf("%s lists the deleted document", q)
				}
			}
			if q == "?visibility=department" && list.Pagination.Total != 0 {
				t.Errorf("%s counts %d", q, list.Pagination.Total)
			}
		}
	})

	t.Run("the trash lists it with who deleted it and when, without content", func(t *testing.T) {
		fx := fx.in(t)
		got := decodeTrash(t, fx.do("GET", trashPath, bearer(vic)))
		want := trashListWire{
			Documents:  []trashedWire{{docWire: eng, DeletedAt: deletedAt, DeletedBy: personWire{ID: fx.users["bob@example.com"].ID, Name: "Bob"}}},
			Pagination: paginationWire{CurrentPage: 1, Limit: 20, Total: 1, TotalPages: 1},
		}
		want.Documents[0].Content = nil
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(trashedWire{})); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})

	fx.clock.Advance(time.Minute)
	fx.do("DELETE", docsPath+"/"+private.ID, bearer(ada))
	fx.clock.Advance(time.Minute)
	fx.do("DELETE", docsPath+"/"+public.ID, bearer(carol))

	t.Run("visibility applies in the trash: newest deletion first, only what each could see", func(t *testing.T) {
		fx := fx.in(t)
		for _, c := range []struct {
			who   string
			token string
			want  []string
		}{
			{"the owner", ada, []string{"Handbook", "Ada's diary", "Eng notes"}},
			{"a colleague", bob, []string{"Handbook", "Eng notes"}},
			{"a viewer of the department", vic, []string{"Handbook", "Eng notes"}},
			{"another department", carol, []string{"Handbook"}},
			{"an administrator", root, []string{"Handbook", "Ada's diary", "Eng notes"}},
		} {
			got := decodeTrash(t, fx.do("GET", trashPath, bearer(c.token)))
			if diff := cmp.Diff(c.want, trashTitles(got)); diff != "" || got.Pagination.Total != len(c.want) {
				t.Errorf("%s: total %d (-want +got)\n%s", c.who, got.Pagination.Total, diff)
			}
		}
		page := decodeTrash(t, fx.do("GET", trashPath+"?page=2&limit=1", bearer(ada)))
		if diff := cmp.Diff([]string{"Ada's diary"}, trashTitles(page)); diff != "" ||
			page.Pagination != (paginationWire{CurrentPage: 2, Limit: 1, Total: 3, TotalPages: 3, HasMore: true}) {
			t.Errorf("page 2 of 1: %+v (-want +got)\n%s", page.Pagination, diff)
		}
		clamped := decodeTrash(t, fx.do("GET", trashPath+"?limit=1000&search=ignored", bearer(ada)))
		if clamped.Pagination.Limit != 100 || len(clamped.Documents) != 3 {
			t.Errorf("limit=1000: %+v", clamped.Pagination)
		}
	})

	t.Run("bad paging is 400 naming it; a guest is 403", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantFields(fx.do("GET", trashPath+"?page=0&limit=x", bearer(ada)),
			map[string]string{"page": "must be an integer of at least 1", "limit": "must be an integer from 1 to 100"})
		fx.wantError(fx.do("GET", trashPath, bearer(guest)), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("GET", trashPath), http.StatusUnauthorized, quire.EUNAUTHORIZED)
	})

	t.Run("a document the caller could not see is 404 in the trash, never 403", func(t *testing.T) {
		fx := fx.in(t)
		for _, tok := range []string{bob, carol} {
			fx.wantError(fx.do("POST", trashPath+"/"+private.ID+"/restore", bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
			fx.wantError(fx.do("DELETE", trashPath+"/"+private.ID, bearer(tok)), http.StatusNotFound, quire.ENOTFOUND)
		}
		fx.wantError(fx.do("POST", trashPath+"/"+eng.ID+"/restore", bearer(carol)), http.StatusNotFound, quire.ENOTFOUND)
	})

	t.Run("a trash call on a document not in the trash is 404", func(t *testing.T) {
		fx := fx.in(t)
		live := fx.create(ada, map[string]any{"title": "Live"})
		for _, id := range []string{live.ID, "0190b2a4-0000-7000-8000-000000000000", "nope"} {
			fx.wantError(fx.do("POST", trashPath+"/"+id+"/restore", bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
			fx.wantError(fx.do("DELETE", trashPath+"/"+id, bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		}
		decodeDoc(t, fx.do("GET", docsPath+"/"+live.ID, bearer(ada)))
	})

	t.Run("restore needs write, and deleting for good the owner or an administrator", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("POST", trashPath+"/"+eng.ID+"/restore", bearer(vic)), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("DELETE", trashPath+"/"+eng.ID, bearer(vic)), http.StatusForbidden, quire.EFORBIDDEN)
		r := fx.wantError(fx.do("DELETE", trashPath+"/"+eng.ID, bearer(bob)), http.StatusForbidden, quire.EFORBIDDEN)
		if r["message"] != "Only the owner of the document or an administrator may delete it for good" {
			t.Errorf("message %q", r["message"])
		}
		if got := decodeTrash(t, fx.do("GET", trashPath, bearer(bob))); got.Pagination.Total != 2 {
			t.Errorf("refused calls changed the trash: %q", trashTitles(got))
		}
	})

	t.Run("a restore brings the document back as it was, same version and versions", func(t *testing.T) {
		fx := fx.in(t)
		fx.clock.Advance(time.Hour)
		r := fx.do("POST", trashPath+"/"+eng.ID+"/restore", bearer(bob))
		if diff := cmp.Diff(eng, decodeDoc(t, r)); diff != "" {
			t.Fatalf("restored (-want +got)\n%s", diff)
		}
		if r.Header.Get("ETag") == "" {
			t.Error("no ETag")
		}
		if diff := cmp.Diff(eng, decodeDoc(t, fx.do("GET", docsPath+"/"+eng.ID, bearer(ada)))); diff != "" {
			t.Errorf("read (-want +got)\n%s", diff)
		}
		if vs := decodeVersions(t, fx.do("GET", docsPath+"/"+eng.ID+"/versions", bearer(ada))); len(vs) != 2 {
			t.Errorf("%d versions, want the 2 it had", len(vs))
		}
		fx.wantError(fx.do("POST", trashPath+"/"+eng.ID+"/restore", bearer(bob)), http.StatusNotFound, quire.ENOTFOUND)
	})

	t.Run("a folder holding only trashed documents may be deleted, and its document comes back at the top", func(t *testing.T) {
		fx := fx.in(t)
		wantMessage(t, fx.do("DELETE", foldersPath+"/"+folder.ID, bearer(ada)), "Folder deleted")
		got := decodeDoc(t, fx.do("POST", trashPath+"/"+public.ID+"/restore", bearer(carol)))
		if got.FolderID != nil || got.Version != public.Version || got.UpdatedAt != public.UpdatedAt {
			t.Errorf("restored: folder %v, version %d, updated_at %s; want none, %d, %s",
				got.FolderID, got.Version, got.UpdatedAt, public.Version, public.UpdatedAt)
		}
	})

	t.Run("the owner deletes for good, and then it is gone from the trash too", func(t *testing.T) {
		fx := fx.in(t)
		wantMessage(t, fx.do("DELETE", trashPath+"/"+private.ID, bearer(ada)), "Document permanently deleted")
		fx.wantError(fx.do("POST", trashPath+"/"+private.ID+"/restore", bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("DELETE", trashPath+"/"+private.ID, bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		if got := decodeTrash(t, fx.do("GET", trashPath, bearer(root))); got.Pagination.Total != 0 {
			t.Errorf("trash after: %q", trashTitles(got))
		}
	})

	t.Run("an administrator deletes another's document for good", func(t *testing.T) {
		fx := fx.in(t)
		d := fx.create(carol, map[string]any{"title": "Carol's", "visibility": "private"})
		fx.do("DELETE", docsPath+"/"+d.ID, bearer(carol))
		wantMessage(t, fx.do("DELETE", trashPath+"/"+d.ID, bearer(root)), "Document permanently deleted")
	})
}
