package httpapi

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

type diffWire struct {
	From    int      `json:"from"`
	To      int      `json:"to"`
	Unified string   `json:"unified"`
	Added   int      `json:"added"`
	Removed int      `json:"removed"`
	Fields  []string `json:"fields"`
}

func TestVersionDiff(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	eve := fx.person("eve@example.com", "editor", "Sales", false)
	doc := fx.create(ada, map[string]any{"title": "Plan", "content": "one\ntwo\nthree\n", "visibility": "private"})
	path := docsPath + "/" + doc.ID
	decodeDoc(t, fx.do("PUT", path, bearer(ada), jsonBody(map[string]any{"content": "one\n2\nthree\n", "title": "Plan B"})))
	decodeDoc(t, fx.do("PUT", path, bearer(ada), jsonBody(map[string]any{"status": "published", "tags": []string{"x"}})))

	get := func(t *testing.T, url, token string) diffWire {
		t.Helper()
		r := fx.in(t).do("GET", url, bearer(token))
		if r.Status != http.StatusOK {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		var out diffWire
		strictDecode(t, r.Body, &out)
		return out
	}
	t.Run("without to a version is compared with the current one", func(t *testing.T) {
		got := get(t, path+"/versions/1/diff", ada)
		want := diffWire{From: 1, To: 3, Added: 1, Removed: 1, Fields: []string{"title", "status", "tags"},
			Unified: "--- version 1\n+++ version 3\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
	})
	t.Run("to names the other version, older or newer", func(t *testing.T) {
		got := get(t, path+"/versions/3/diff?to=2", ada)
		want := diffWire{From: 3, To: 2, Fields: []string{"status", "tags"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("(-want +got)\n%s", diff)
		}
		got = get(t, path+"/versions/2/diff?to=1", ada)
		if got.Added != 1 || got.Removed != 1 || !cmp.Equal(got.Fields, []string{"title"}) {
			t.Fatalf("2 → 1: %+v", got)
		}
	})
	t.Run("a document the caller cannot see is 404, as for its versions", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("GET", path+"/versions/1/diff", bearer(eve)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", path+"/versions/1/diff?to=2", bearer(eve)), http.StatusNotFound, quire.ENOTFOUND)
	})
	t.Run("a version that does not exist is 404", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("GET", path+"/versions/4/diff", bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", path+"/versions/1/diff?to=9", bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", docsPath+"/00000000-0000-7000-8000-000000000000/versions/1/diff", bearer(ada)),
			http.StatusNotFound, quire.ENOTFOUND)
	})
	t.Run("numbers that are not version numbers are 400", func(t *testing.T) {
		fx := fx.in(t)
		for _, n := range []string{"0", "-1", "01", "x", "1.0", "9999999999"} {
			fx.wantFields(fx.do("GET", path+"/versions/"+n+"/diff", bearer(ada)),
				map[string]string{"versionNumber": "must be a version number (an integer from 1)"})
			fx.wantFields(fx.do("GET", path+"/versions/1/diff?to="+n, bearer(ada)),
				map[string]string{"to": "must be a version number (an integer from 1)"})
		}
		fx.wantFields(fx.do("GET", path+"/versions/1/diff?to=", bearer(ada)),
			map[string]string{"to": "must be a version number (an integer from 1)"})
	})
}

func TestBacklinks(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	bob := fx.person("bob@example.com", "viewer", "Engineering", false)
	eve := fx.person("eve@example.com", "editor", "Sales", false)
	target := fx.create(ada, map[string]any{"title": "Target", "visibility": "public"})
	secret := fx.create(ada, map[string]any{"title": "Secret", "visibility": "private"})
	link := "/documents/" + target.ID
	fx.create(ada, map[string]any{"title": "Private note", "content": "[t](" + link + ")", "visibility": "private"})
	fx.create(ada, map[string]any{"title": "Team page", "content_type": "html",
		"content": `<a href="` + link + `">t</a>`, "visibility": "department"})
	fx.create(eve, map[string]any{"title": "Sales page", "content": "[t](" + link + ") and [s](/documents/" + secret.ID + ")",
		"visibility": "public"})
	path := docsPath + "/" + target.ID + "/backlinks"

	titles := func(t *testing.T, url, token string) ([]string, paginationWire) {
		t.Helper()
		l := decodeList(t, fx.in(t).do("GET", url, bearer(token)))
		var out []string
		for _, d := range l.Documents {
			if d.Content != nil {
				t.Errorf("%s carries its content", d.Title)
			}
			out = append(out, d.Title)
		}
		return out, l.Pagination
	}
	t.Run("each caller sees the linking documents it may see, newest first", func(t *testing.T) {
		for token, want := range map[string][]string{
			ada: {"Sales page", "Team page", "Private note"},
			bob: {"Sales page", "Team page"},
			eve: {"Sales page"},
		} {
			got, p := titles(t, path, token)
			if diff := cmp.Diff(want, got); diff != "" || p.Total != len(want) {
				t.Errorf("(-want +got), total %d\n%s", p.Total, diff)
			}
		}
	})
	t.Run("pages as lists do", func(t *testing.T) {
		got, p := titles(t, path+"?page=2&limit=2", ada)
		want := paginationWire{CurrentPage: 2, Limit: 2, Total: 3, TotalPages: 2, HasMore: false}
		if diff := cmp.Diff([]string{"Private note"}, got); diff != "" || p != want {
			t.Errorf("(-want +got), pagination %+v\n%s", p, diff)
		}
		fx.in(t).wantFields(fx.do("GET", path+"?page=0", bearer(ada)), map[string]string{"page": "must be an integer of at least 1"})
	})
	t.Run("a document the caller cannot see is 404, even when a visible one links to it", func(t *testing.T) {
		fx := fx.in(t)
		fx.wantError(fx.do("GET", docsPath+"/"+secret.ID+"/backlinks", bearer(eve)), http.StatusNotFound, quire.ENOTFOUND)
		fx.wantError(fx.do("GET", docsPath+"/not-an-id/backlinks", bearer(ada)), http.StatusNotFound, quire.ENOTFOUND)
	})
	t.Run("a linking document moved to the trash is left out", func(t *testing.T) {
		l := decodeList(t, fx.in(t).do("GET", path, bearer(ada)))
		r := fx.in(t).do("DELETE", docsPath+"/"+l.Documents[1].ID, bearer(ada))
		if r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		got, _ := titles(t, path, ada)
		if diff := cmp.Diff([]string{"Sales page", "Private note"}, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
}
