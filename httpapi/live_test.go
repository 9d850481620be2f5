package httpapi

import (
	"net/http"
	"testing"

	"quire"
)

// TestPresence: who is on a document edited live, as the OpenAPI document
// says (nobody, when nobody has it open on this node); 404 for a document
// the caller cannot see, 401 without a session.
func TestPresence(t *testing.T) {
	t.Parallel()
	e, ada := newSignedIn(t, "editor", "ada@example.com", "bob@example.com")
	bob := e.login("bob@example.com")
	r := e.do("POST", "/api/documentation/documents", bearer(ada), jsonBody(map[string]any{"title": "Mine"}))
	var created struct {
		Document struct {
			ID string `json:"id"`
		} `json:"document"`
	}
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	r.decode(t, &created)
	doc := created.Document
	path := "/api/documentation/documents/" + doc.ID + "/presence"
	var got struct {
		Viewing []any `json:"viewing"`
		Editing []any `json:"editing"`
	}
	e.wantJSON(e.do("GET", path, bearer(ada)), http.StatusOK, &got)
	if got.Viewing == nil || got.Editing == nil || len(got.Viewing)+len(got.Editing) != 0 {
		t.Errorf("presence of a document nobody has open: %+v", got)
	}
	e.wantError(e.do("GET", path, bearer(bob)), http.StatusNotFound, quire.ENOTFOUND)
	e.wantError(e.do("GET", path), http.StatusUnauthorized, quire.EUNAUTHORIZED)
}
