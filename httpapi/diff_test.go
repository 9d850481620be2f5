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
	fx := newDocsFixture(t)
	ada := fx.person("ada@example.com", "editor", "Engineering", false)
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
