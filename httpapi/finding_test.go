package httpapi

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

type highlightWire struct {
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// TestSearchHighlights: a search's results say why they matched, escaped
// with <mark> only, and tags are searched as words (product.md section 14).
func TestSearchHighlights(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	guide := fx.create(tok, map[string]any{"title": "Deploy <guide>", "visibility": "public",
		"content": "Run `make deploy` & watch the <b>dashboards</b>.\n\n<script>alert('x')</script>"})
	pager := fx.create(tok, map[string]any{"title": "Pager", "content": "Who answers at night.",
		"tags": []string{"deploy-team", "on-call"}, "visibility": "public"})
	list := func(t *testing.T, query string) listWire {
		return decodeList(t, fx.in(t).do("GET", docsPath+"?"+query, bearer(tok)))
	}

	t.Run("each result carries its title and a snippet, escaped, the matched words marked", func(t *testing.T) {
		got := map[string]*highlightWire{}
		for _, d := range list(t, "search=deplo&sortBy=title").Documents {
			got[d.ID] = d.Highlight
		}
		want := map[string]*highlightWire{
			guide.ID: {Title: "<mark>Deploy</mark> &lt;guide&gt;",
				Snippet: "Run `make <mark>deploy</mark>` &amp; watch the &lt;b&gt;dashboards&lt;/b&gt;. &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"},
			pager.ID: {Title: "Pager", Snippet: "Who answers at night."},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("highlights (-want +got):\n%s", diff)
		}
	})
	t.Run("a tag is searched as words", func(t *testing.T) {
		docs := list(t, "search="+url.QueryEscape("call night")).Documents
		if len(docs) != 1 || docs[0].ID != pager.ID {
			t.Fatalf("search call night found %d documents, want the pager", len(docs))
		}
	})
	t.Run("a list without a search has no highlight", func(t *testing.T) {
		for _, d := range list(t, "").Documents {
			if d.Highlight != nil {
				t.Errorf("%s has a highlight without a search", d.Title)
			}
		}
	})
	t.Run("content stays out unless asked, and in when asked", func(t *testing.T) {
		for _, d := range list(t, "search=deploy").Documents {
			if d.Content != nil {
				t.Errorf("%s carries content without includeContent", d.Title)
			}
		}
		for _, d := range list(t, "search=deploy&includeContent=true").Documents {
			if d.Content == nil || d.Highlight == nil {
				t.Errorf("%s: content %v, highlight %v with includeContent", d.Title, d.Content, d.Highlight)
			}
		}
	})
}

// TestListSubfolders: folderId with includeSubfolders takes the folders
// below it too.
func TestListSubfolders(t *testing.T) {
	t.Parallel()
	fx, tok := newDocsFixtureWithAda(t)
	top := createFolder(fx.env, tok, map[string]any{"name": "Engineering"})
	low := createFolder(fx.env, tok, map[string]any{"name": "Runbooks", "parent_id": top.ID})
	doc := fx.create(tok, map[string]any{"title": "Restart the database", "folder_id": low.ID})
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"folderId=" + top.ID, []string{}},
		{"folderId=" + top.ID + "&includeSubfolders=true", []string{doc.ID}},
		{"folderId=" + top.ID + "&includeSubfolders=1&search=database", []string{doc.ID}},
		{"folderId=" + low.ID + "&includeSubfolders=false", []string{doc.ID}},
		{"includeSubfolders=true", []string{doc.ID}},
	} {
		list := decodeList(t, fx.in(t).do("GET", docsPath+"?"+tc.query, bearer(tok)))
		got := []string{}
		for _, d := range list.Documents {
			got = append(got, d.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" || list.Pagination.Total != len(tc.want) {
			t.Errorf("%s: total %d (-want +got):\n%s", tc.query, list.Pagination.Total, diff)
		}
	}
	fx.wantError(fx.do("GET", docsPath+"?folderId="+top.ID+"&includeSubfolders=yes", bearer(tok)), http.StatusBadRequest, quire.EVALIDATION)
}
