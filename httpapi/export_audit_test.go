package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

// An export records one document.exported with how many documents it
// wrote (and the folder exported), never which nor what they say; the
// audit API lists it and filters by it.
func TestExportIsAudited(t *testing.T) {
	t.Parallel()
	e, _, admin := newEnvWithRoot(t)
	ed := e.user("ed@example.com", "editor", "")
	editor := e.login(ed.Email)

	f := createFolder(e, editor, map[string]any{"name": "Runbooks"})
	for _, d := range []map[string]any{
		{"title": "Secret title one", "content": "classified body one"},
		{"title": "Secret title two", "content": "classified body two"},
		{"title": "Secret title three", "content": "classified body three", "folder_id": f.ID},
	} {
		if r := e.do("POST", "/api/documentation/documents", bearer(editor), jsonBody(d)); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	exported := url.Values{"action": {quire.ActionDocumentExported}}
	if page, _ := e.audit(t, admin, exported); len(page.Events) != 0 {
		t.Fatalf("events before any export: %v", eventActions(page.Events))
	}

	// A refused export (an unknown folder) writes nothing.
	e.wantError(e.do("GET", "/api/documentation/export?folderId=0190b2a4-0000-7000-8000-000000000000", bearer(editor)),
		http.StatusNotFound, quire.ENOTFOUND)
	if r := e.do("GET", "/api/documentation/export", bearer(editor)); r.Status != http.StatusOK || len(unzip(t, r.Body)) != 4 {
		t.Fatalf("export: %d, %d entries", r.Status, len(unzip(t, r.Body)))
	}
	if r := e.do("GET", "/api/documentation/export?folderId="+f.ID, bearer(editor)); r.Status != http.StatusOK {
		t.Fatalf("folder export: %d %s", r.Status, r.Body)
	}

	page, body := e.audit(t, admin, exported)
	for _, secret := range []string{"Secret title", "classified"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the audit log holds %q: %s", secret, body)
		}
	}
	type got struct {
		Actor   string
		Target  *targetWire
		Details map[string]any
	}
	var gots []got
	for _, ev := range page.Events {
		if ev.Actor == nil || ev.RequestID == "" {
			t.Errorf("event without its actor or request: %+v", ev)
			continue
		}
		gots = append(gots, got{ev.Actor.ID, ev.Target, ev.Details})
	}
	want := []got{ // newest first
		{ed.ID, &targetWire{Type: quire.TargetFolder, ID: f.ID, Name: "Runbooks"}, map[string]any{"count": float64(1), "folderId": f.ID}},
		{ed.ID, nil, map[string]any{"count": float64(3)}},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("document.exported events (-want +got):\n%s", diff)
	}

	// The prefix lists them with the other document events; the folder's
	// export is found by its target.
	all, _ := e.audit(t, admin, url.Values{"action": {"document."}})
	if n := strings.Count(strings.Join(eventActions(all.Events), " "), quire.ActionDocumentExported); n != 2 {
		t.Errorf("document. events %v: %d exports", eventActions(all.Events), n)
	}
	byFolder, _ := e.audit(t, admin, url.Values{"targetId": {f.ID}, "action": {quire.ActionDocumentExported}})
	if len(byFolder.Events) != 1 {
		t.Errorf("events of the folder: %v", eventActions(byFolder.Events))
	}
}
