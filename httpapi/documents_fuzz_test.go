package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"quire"
)

// FuzzListQuery sends arbitrary raw query strings to the document list, as
// a signed-in editor, straight to the server's handler (so that no client
// cleans the query first). Whatever the query, the answer is 200 with a
// list of the contract's shape that never shows or counts a document the
// caller may not see, or 400 VALIDATION_ERROR naming what is wrong; never
// anything else, never a 5xx.
//
//	go test -run='^$' -fuzz=FuzzListQuery -fuzztime=3m ./httpapi/
func FuzzListQuery(f *testing.F) {
	hostile := []string{
		`"`, `""`, `"unterminated`, `*`, `a*`, `NEAR(`, `NEAR(a b, 2)`, `-`, `-deploy`, `a OR b`, `OR`, `AND`, `NOT x`,
		`%`, `_`, `%_%`, `\`, `\\`, `\"`, `'`, `'; DROP TABLE documents; --`, `1' OR '1'='1`, `" OR 1=1 --`,
		`title:secret`, `{title content}: x`, `^x`, `(x)`, `x)`, `:`, `+`, `@@`, `!!`, `$1`, `?`, `<script>`,
		`café`, `CAFÉ`, "e\u0301", "\u0301", `日本語`, `🚀 launch`, `🚀`, "\u200b", "\u202e", "\t", "ß", "İ",
		strings.Repeat("x", 10000), strings.Repeat("a ", 40), strings.Repeat("🚀", 501),
	}
	for _, s := range hostile {
		f.Add("search=" + url.QueryEscape(s))
		f.Add("search=" + s)
	}
	for _, q := range []string{
		"", "page=2&limit=1", "page=0", "page=-1", "page=1e3", "page=99999999999999999999", "limit=101", "limit=0",
		"status=draft", "status=DRAFT", "visibility=private", "tags=a,,B, c ", "tags=" + strings.Repeat(",", 100),
		"departmentId=x", "folderId=%00", "projectId=%FF", "sortBy=title&sortOrder=asc", "sortBy=relevance&search=secret",
		"sortBy=updated_at;--", "includeContent=1", "includeContent=TRUE", "page=1&page=2", "%zz", "a=%", "&&&==", ";",
		"search=%C0%AF", "search=%ED%A0%80", "search=secret&visibility=private&departmentId=",
	} {
		f.Add(q)
	}

	e := newEnv(f)
	e.user("ada@example.com", "editor", "Engineering")
	e.user("bob@example.com", "editor", "Engineering")
	ada, bob := e.login("ada@example.com"), e.login("bob@example.com")
	for _, body := range []map[string]any{
		{"title": "Launch checklist", "content": "🚀 launch café", "visibility": "public", "tags": []string{"a", "B"}},
		{"title": "Deploy runbook", "content": "-deploy NEAR(x) 100% _under_", "visibility": "department", "status": "review"},
		{"title": "日本語の文書", "content": "Ünïcode", "visibility": "private"},
	} {
		if r := e.do("POST", docsPath, bearer(ada), jsonBody(body)); r.Status != http.StatusCreated {
			f.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	secret := e.do("POST", docsPath, bearer(bob), jsonBody(map[string]any{
		"title": "Secret plan", "content": "secret launch café deploy", "visibility": "private", "tags": []string{"a", "b"}}))
	var sd struct {
		Document docWire `json:"document"`
	}
	if err := json.Unmarshal(secret.Body, &sd); err != nil || secret.Status != http.StatusCreated {
		f.Fatalf("create secret: %d %s", secret.Status, secret.Body)
	}
	const visibleToAda = 3
	handler := e.server.Config.Handler

	f.Fuzz(func(t *testing.T, rawQuery string) {
		req := httptest.NewRequest("GET", docsPath, nil)
		req.URL.RawQuery = rawQuery
		req.RequestURI = docsPath + "?" + rawQuery
		req.Header.Set("Authorization", "Bearer "+ada)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusOK:
			var list listWire
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&list); err != nil || list.Documents == nil {
				t.Fatalf("query %q: 200 with a body that is not a list (%v): %s", rawQuery, err, excerpt(body))
			}
			p := list.Pagination
			if p.Total > visibleToAda || len(list.Documents) > p.Limit || p.Limit < 1 || p.Limit > 100 || p.CurrentPage < 1 ||
				p.TotalPages != (p.Total+p.Limit-1)/p.Limit || p.HasMore != (p.CurrentPage < p.TotalPages) {
				t.Fatalf("query %q: pagination %+v with %d documents", rawQuery, p, len(list.Documents))
			}
			for _, d := range list.Documents {
				if d.ID == sd.Document.ID {
					t.Fatalf("query %q revealed a private document of another user", rawQuery)
				}
			}
		case http.StatusBadRequest:
			var e struct {
				Code    string            `json:"code"`
				Message string            `json:"message"`
				Fields  map[string]string `json:"fields"`
			}
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil || e.Code != quire.EVALIDATION || e.Message == "" || len(e.Fields) == 0 {
				t.Fatalf("query %q: 400 that is not a VALIDATION_ERROR naming a field (%v): %s", rawQuery, err, excerpt(body))
			}
		default:
			t.Fatalf("query %q: status %d: %s", rawQuery, rec.Code, excerpt(body))
		}
		checkResponse(t, req, rec.Code, rec.Header(), body)
	})
}
