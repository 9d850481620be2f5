package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"quire"
)

// bulkItemWire and bulkWire are the answer of POST .../documents/bulk,
// decoded strictly.
type bulkItemWire struct {
	ID       string         `json:"id"`
	Result   string         `json:"result"`
	Document *docWire       `json:"document"`
	Error    map[string]any `json:"error"`
}

type bulkWire struct {
	Results   []bulkItemWire `json:"results"`
	Updated   int            `json:"updated"`
	Unchanged int            `json:"unchanged"`
	Failed    int            `json:"failed"`
}

// bulk sends a bulk change and decodes its 200 answer.
func (fx *docsFixture) bulk(token string, body map[string]any, opts ...reqOpt) bulkWire {
	fx.t.Helper()
	r := fx.do("POST", bulkPath, append([]reqOpt{bearer(token), jsonBody(body)}, opts...)...)
	if r.Status != http.StatusOK {
		fx.t.Fatalf("bulk: %d %s", r.Status, r.Body)
	}
	var out bulkWire
	strictDecode(fx.t, r.Body, &out)
	return out
}

// results returns id → result of a bulk answer, and its ids in order.
func (b bulkWire) results() (map[string]string, []string) {
	m, order := map[string]string{}, []string{}
	for _, it := range b.Results {
		m[it.ID] = it.Result
		order = append(order, it.ID)
	}
	return m, order
}

// get reads a document as token, failing unless 200.
func (fx *docsFixture) get(token, id string) docWire {
	fx.t.Helper()
	return decodeDoc(fx.t, fx.do("GET", docsPath+"/"+id, bearer(token)))
}

func TestDocumentBulk(t *testing.T) {
	t.Parallel()
	fx := newDocsFixture(t)
	ada := fx.person("ada@example.com", "editor", "Engineering", true)
	sam := fx.person("sam@example.com", "editor", "Sales", false)
	vic := fx.person("vic@example.com", "viewer", "Engineering", false)
	root := fx.person("root@example.com", "admin", "", false)

	t.Run("each document is changed as a single update would, with a result per id in order", func(t *testing.T) {
		fx := fx.in(t)
		a := fx.create(ada, map[string]any{"title": "A"})
		b := fx.create(ada, map[string]any{"title": "B", "status": "review"})
		c := fx.create(ada, map[string]any{"title": "C"})
		got := fx.bulk(ada, map[string]any{"ids": []string{c.ID, a.ID, b.ID}, "status": "published", "visibility": "department"})
		if got.Updated != 3 || got.Unchanged != 0 || got.Failed != 0 {
			t.Fatalf("counts %d/%d/%d, want 3/0/0", got.Updated, got.Unchanged, got.Failed)
		}
		_, order := got.results()
		if diff := cmp.Diff([]string{c.ID, a.ID, b.ID}, order); diff != "" {
			t.Fatalf("order (-want +got)\n%s", diff)
		}
		for _, it := range got.Results {
			if it.Result != "updated" || it.Document == nil || it.Error != nil {
				t.Fatalf("%s: %+v", it.ID, it)
			}
			if it.Document.Content != nil {
				t.Errorf("%s: the answer carries content", it.ID)
			}
			saved := fx.get(ada, it.ID)
			if saved.Status != "published" || saved.Visibility != "department" || saved.Version != 2 {
				t.Errorf("%s: %s/%s version %d, want published/department version 2", it.ID, saved.Status, saved.Visibility, saved.Version)
			}
			if saved.DepartmentID == nil || *saved.DepartmentID != fx.eng {
				t.Errorf("%s: department %v, want Engineering", it.ID, saved.DepartmentID)
			}
			if it.Document.UpdatedAt != saved.UpdatedAt || it.Document.Version != saved.Version {
				t.Errorf("%s: the answer's document is not the saved one", it.ID)
			}
		}
		// sam (Sales) does not see them; vic (Engineering, viewer) does.
		fx.wantError(fx.do("GET", docsPath+"/"+a.ID, bearer(sam)), http.StatusNotFound, quire.ENOTFOUND)
		if fx.get(vic, a.ID).ID != a.ID {
			t.Fatal("vic does not see the departmental document")
		}

		t.Run("a document that already has the values is unchanged and records no version", func(t *testing.T) {
			again := fx.in(t).bulk(ada, map[string]any{"ids": []string{a.ID, b.ID, c.ID}, "status": "published"})
			if again.Updated != 0 || again.Unchanged != 3 || again.Failed != 0 {
				t.Fatalf("counts %d/%d/%d, want 0/3/0", again.Updated, again.Unchanged, again.Failed)
			}
			for _, id := range []string{a.ID, b.ID, c.ID} {
				if n := len(decodeVersions(t, fx.do("GET", docsPath+"/"+id+"/versions", bearer(ada)))); n != 2 {
					t.Errorf("%s: %d versions, want 2", id, n)
				}
			}
		})
	})

	t.Run("folders: moved in, then out with null", func(t *testing.T) {
		fx := fx.in(t)
		f := createFolder(fx.env, ada, map[string]any{"name": "Runbooks"})
		a := fx.create(ada, map[string]any{"title": "A"})
		b := fx.create(ada, map[string]any{"title": "B"})
		fx.bulk(ada, map[string]any{"ids": []string{a.ID, b.ID}, "folder_id": f.ID})
		for _, id := range []string{a.ID, b.ID} {
			if d := fx.get(ada, id); d.FolderID == nil || *d.FolderID != f.ID {
				t.Fatalf("%s: folder %v, want %s", id, d.FolderID, f.ID)
			}
		}
		fx.bulk(ada, map[string]any{"ids": []string{a.ID}, "folder_id": nil})
		if d := fx.get(ada, a.ID); d.FolderID != nil {
			t.Fatalf("folder %v after null, want none", *d.FolderID)
		}
		if d := fx.get(ada, b.ID); d.FolderID == nil {
			t.Fatal("b left its folder too")
		}
	})

	t.Run("a document the caller cannot see is answered exactly as an unknown id", func(t *testing.T) {
		fx := fx.in(t)
		samPrivate := fx.create(sam, map[string]any{"title": "Sam's notes"})
		samDept := fx.create(sam, map[string]any{"title": "Sales plan", "visibility": "department"})
		samPublic := fx.create(sam, map[string]any{"title": "Handbook", "visibility": "public"})
		trashed := fx.create(ada, map[string]any{"title": "Old"})
		if r := fx.do("DELETE", docsPath+"/"+trashed.ID, bearer(ada)); r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		own := fx.create(ada, map[string]any{"title": "Mine"})
		unknown := "019abcde-0000-7000-8000-000000000099"
		ids := []string{samPrivate.ID, samDept.ID, unknown, "not-an-id", trashed.ID, samPublic.ID, own.ID}
		got := fx.bulk(ada, map[string]any{"ids": ids, "status": "archived"})
		results, _ := got.results()
		want := map[string]string{
			samPrivate.ID: "not_found", samDept.ID: "not_found", unknown: "not_found", "not-an-id": "not_found",
			trashed.ID: "not_found", samPublic.ID: "updated", own.ID: "updated",
		}
		if diff := cmp.Diff(want, results); diff != "" {
			t.Fatalf("results (-want +got)\n%s", diff)
		}
		if got.Updated != 2 || got.Failed != 5 {
			t.Fatalf("counts %d/%d/%d, want 2/0/5", got.Updated, got.Unchanged, got.Failed)
		}
		// Every not_found entry is the same, but for its id.
		var first map[string]any
		for _, it := range got.Results {
			if it.Result != "not_found" {
				continue
			}
			if it.Document != nil {
				t.Errorf("%s: a not_found entry carries a document", it.ID)
			}
			if first == nil {
				first = it.Error
				if first["code"] != quire.ENOTFOUND {
					t.Fatalf("error %v, want NOT_FOUND", first)
				}
				continue
			}
			if diff := cmp.Diff(first, it.Error); diff != "" {
				t.Errorf("%s: its error differs from an unknown id's (-first +this)\n%s", it.ID, diff)
			}
		}
		// Nothing was written to what ada cannot see.
		for _, d := range []docWire{samPrivate, samDept} {
			if cur := fx.get(sam, d.ID); cur.Status != "draft" || cur.Version != 1 {
				t.Errorf("%s: %s version %d, want untouched", d.Title, cur.Status, cur.Version)
			}
		}
		// An administrator sees every document, so changes every one.
		byRoot := fx.bulk(root, map[string]any{"ids": []string{samPrivate.ID, samDept.ID}, "status": "review"})
		if byRoot.Updated != 2 {
			t.Fatalf("admin: %+v", byRoot)
		}
	})

	t.Run("a change that does not fit one document is invalid for it alone", func(t *testing.T) {
		fx := fx.in(t)
		inProject := fx.create(ada, map[string]any{"title": "Apollo notes", "visibility": "project", "project_id": fx.project})
		noProject := fx.create(ada, map[string]any{"title": "Loose", "visibility": "private"})
		got := fx.bulk(ada, map[string]any{"ids": []string{noProject.ID, inProject.ID}, "visibility": "project", "status": "review"})
		results, _ := got.results()
		if diff := cmp.Diff(map[string]string{noProject.ID: "invalid", inProject.ID: "updated"}, results); diff != "" {
			t.Fatalf("results (-want +got)\n%s", diff)
		}
		wantErr := map[string]any{"code": quire.EVALIDATION, "message": "Validation failed",
			"fields": map[string]any{"project_id": "is required for project visibility"}}
		if diff := cmp.Diff(wantErr, got.Results[0].Error); diff != "" {
			t.Fatalf("error (-want +got)\n%s", diff)
		}
		if d := fx.get(ada, noProject.ID); d.Version != 1 || d.Status != "draft" {
			t.Fatalf("the invalid document was changed: %s version %d", d.Status, d.Version)
		}
		// With the project named, it fits.
		got = fx.bulk(ada, map[string]any{"ids": []string{noProject.ID}, "visibility": "project", "project_id": fx.project})
		if got.Updated != 1 {
			t.Fatalf("with project_id: %+v", got)
		}
	})

	t.Run("what is wrong whatever the document refuses the whole request and changes nothing", func(t *testing.T) {
		fx := fx.in(t)
		d := fx.create(ada, map[string]any{"title": "Steady"})
		ids := []string{d.ID}
		many := make([]string, 101)
		for i := range many {
			many[i] = d.ID
		}
		cases := []struct {
			name   string
			body   map[string]any
			fields map[string]string
		}{
			{"without ids", map[string]any{"status": "review"}, map[string]string{"ids": "is required"}},
			{"with no id", map[string]any{"ids": []string{}, "status": "review"}, map[string]string{"ids": "must hold at least one id"}},
			{"with null ids", map[string]any{"ids": nil, "status": "review"}, map[string]string{"ids": "must be an array of strings"}},
			{"with ids not strings", map[string]any{"ids": []any{d.ID, 7}, "status": "review"}, map[string]string{"ids": "must be an array of strings"}},
			{"with ids not an array", map[string]any{"ids": d.ID, "status": "review"}, map[string]string{"ids": "must be an array of strings"}},
			{"with 101 ids", map[string]any{"ids": many, "status": "review"}, map[string]string{"ids": "must hold at most 100 ids"}},
			{"with no change", map[string]any{"ids": ids},
				map[string]string{"body": "must change at least one of status, visibility, folder_id, department_id, project_id"}},
			{"with a status that is not one", map[string]any{"ids": ids, "status": "done"},
				map[string]string{"status": "must be one of draft, review, published, archived"}},
			{"with a null visibility", map[string]any{"ids": ids, "visibility": nil}, map[string]string{"visibility": "must not be null"}},
			{"with a status of the wrong type", map[string]any{"ids": ids, "status": 3}, map[string]string{"status": "must be a string"}},
			{"with an unknown folder", map[string]any{"ids": ids, "folder_id": "019abcde-0000-7000-8000-000000000042"},
				map[string]string{"folder_id": "must name an existing folder"}},
			{"with a malformed folder", map[string]any{"ids": ids, "folder_id": "x"}, map[string]string{"folder_id": "must name an existing folder"}},
			{"with a null department", map[string]any{"ids": ids, "department_id": nil}, map[string]string{"department_id": "must not be null"}},
			{"with the query's spelling of the folder", map[string]any{"ids": ids, "status": "review", "folderId": nil},
				map[string]string{"folderId": "is spelled folder_id in a body, as in a document's"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				fx := fx.in(t)
				fx.wantFields(fx.do("POST", bulkPath, bearer(ada), jsonBody(c.body)), c.fields)
			})
		}
		if cur := fx.get(ada, d.ID); cur.Version != 1 || cur.Status != "draft" {
			t.Fatalf("changed by a refused request: %s version %d", cur.Status, cur.Version)
		}
		t.Run("bodies that are not JSON objects", func(t *testing.T) {
			fx := fx.in(t)
			fx.wantError(fx.do("POST", bulkPath, bearer(ada), rawBody(""), header("Content-Type", "application/json")),
				http.StatusBadRequest, quire.EINVALIDJSON)
			fx.wantError(fx.do("POST", bulkPath, bearer(ada), rawBody(`["x"]`), header("Content-Type", "application/json")),
				http.StatusBadRequest, quire.EINVALIDJSON)
			fx.wantError(fx.do("POST", bulkPath, bearer(ada), rawBody(`ids=x`), header("Content-Type", "application/x-www-form-urlencoded")),
				http.StatusUnsupportedMediaType, quire.EUNSUPPORTEDMEDIATYPE)
		})
		t.Run("a body over the limit is 413", func(t *testing.T) {
			fx := fx.in(t)
			big := `{"ids":["` + strings.Repeat("a", 3<<20) + `"],"status":"review"}`
			fx.wantError(fx.do("POST", bulkPath, bearer(ada), rawBody(big), header("Content-Type", "application/json")),
				http.StatusRequestEntityTooLarge, quire.EPAYLOADTOOLARGE)
		})
	})

	t.Run("a role without write, or a read token, is refused as for a single update", func(t *testing.T) {
		fx := fx.in(t)
		d := fx.create(ada, map[string]any{"title": "Shared", "visibility": "department"})
		body := map[string]any{"ids": []string{d.ID}, "status": "archived"}
		fx.wantError(fx.do("POST", bulkPath, bearer(vic), jsonBody(body)), http.StatusForbidden, quire.EFORBIDDEN)
		_, readOnly := fx.newAPIToken(ada, "reader", "read")
		fx.wantError(fx.do("POST", bulkPath, bearer(readOnly), jsonBody(body)), http.StatusForbidden, quire.EFORBIDDEN)
		fx.wantError(fx.do("POST", bulkPath, jsonBody(body)), http.StatusUnauthorized, quire.EUNAUTHORIZED)
		if cur := fx.get(ada, d.ID); cur.Version != 1 {
			t.Fatalf("changed: version %d", cur.Version)
		}
		_, writer := fx.newAPIToken(ada, "writer", "write")
		if got := fx.bulk(writer, body); got.Updated != 1 {
			t.Fatalf("write token: %+v", got)
		}
	})

	t.Run("each document changed has its own document.updated event, none for the others", func(t *testing.T) {
		fx := fx.in(t)
		a := fx.create(ada, map[string]any{"title": "Audited A"})
		b := fx.create(ada, map[string]any{"title": "Audited B", "status": "published"})
		hidden := fx.create(sam, map[string]any{"title": "Hidden"})
		const rid = "bulk-audit-1"
		got := fx.bulk(ada, map[string]any{"ids": []string{a.ID, b.ID, hidden.ID}, "status": "published", "visibility": "public"},
			header("X-Request-Id", rid))
		if got.Updated != 2 || got.Failed != 1 {
			t.Fatalf("counts %+v", got)
		}
		page, _ := fx.audit(t, root, url.Values{"action": {"document.updated"}, "actorId": {fx.users["ada@example.com"].ID}})
		byTarget := map[string]eventWire{}
		for _, ev := range page.Events {
			if ev.RequestID == rid {
				if _, dup := byTarget[ev.Target.ID]; dup {
					t.Errorf("two events for %s", ev.Target.ID)
				}
				byTarget[ev.Target.ID] = ev
			}
		}
		if len(byTarget) != 2 {
			t.Fatalf("%d events of the request, want 2: %v", len(byTarget), byTarget)
		}
		wantFields := map[string][]any{a.ID: {"status", "visibility"}, b.ID: {"visibility"}}
		for id, fields := range wantFields {
			ev, ok := byTarget[id]
			if !ok {
				t.Fatalf("no event for %s", id)
			}
			if ev.Actor == nil || ev.Actor.ID != fx.users["ada@example.com"].ID || ev.Target.Type != "document" {
				t.Errorf("%s: actor %v target %v", id, ev.Actor, ev.Target)
			}
			if diff := cmp.Diff(fields, ev.Details["fields"]); diff != "" {
				t.Errorf("%s: fields (-want +got)\n%s", id, diff)
			}
		}
	})

	t.Run("100 ids are accepted; a repeated id counts and is answered once", func(t *testing.T) {
		fx := fx.in(t)
		a := fx.create(ada, map[string]any{"title": "Once"})
		ids := []string{a.ID, a.ID}
		for i := 0; len(ids) < 100; i++ {
			ids = append(ids, fmt.Sprintf("019abcde-0000-7000-8000-%012d", i))
		}
		got := fx.bulk(ada, map[string]any{"ids": ids, "status": "review"})
		if len(got.Results) != 99 || got.Updated != 1 || got.Failed != 98 {
			t.Fatalf("%d results, counts %d/%d/%d; want 99, 1/0/98", len(got.Results), got.Updated, got.Unchanged, got.Failed)
		}
		if got.Results[0].ID != a.ID || got.Results[1].ID == a.ID {
			t.Fatalf("the repeated id is answered twice: %s, %s", got.Results[0].ID, got.Results[1].ID)
		}
		if v := fx.get(ada, a.ID).Version; v != 2 {
			t.Fatalf("version %d, want 2 (one save)", v)
		}
	})

	t.Run("an Idempotency-Key replays the answer and changes nothing more", func(t *testing.T) {
		fx := fx.in(t)
		a := fx.create(ada, map[string]any{"title": "Key A"})
		b := fx.create(ada, map[string]any{"title": "Key B"})
		body := map[string]any{"ids": []string{a.ID, b.ID}, "status": "review"}
		first := fx.do("POST", bulkPath, bearer(ada), jsonBody(body), idemKey("bulk-1"))
		if first.Status != http.StatusOK || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %s", first.Status, first.Body)
		}
		// Someone changes a meanwhile; the repeat must not undo it.
		if r := fx.do("PUT", docsPath+"/"+a.ID, bearer(ada), jsonBody(map[string]any{"status": "draft"})); r.Status != http.StatusOK {
			t.Fatalf("put: %d %s", r.Status, r.Body)
		}
		again := fx.do("POST", bulkPath, bearer(ada), jsonBody(body), idemKey("bulk-1"))
		if again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, again.Body) {
			t.Fatalf("repeat: %d replayed=%q\n%s\nfirst:\n%s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body, first.Body)
		}
		if d := fx.get(ada, a.ID); d.Status != "draft" || d.Version != 3 {
			t.Fatalf("the repeat ran again: %s version %d", d.Status, d.Version)
		}
		other := map[string]any{"ids": []string{a.ID}, "status": "archived"}
		fx.wantError(fx.do("POST", bulkPath, bearer(ada), jsonBody(other), idemKey("bulk-1")),
			http.StatusUnprocessableEntity, quire.EIDEMPOTENCYKEYREUSED)
		// A refusal is kept too.
		bad := map[string]any{"ids": []string{a.ID}}
		r1 := fx.do("POST", bulkPath, bearer(ada), jsonBody(bad), idemKey("bulk-2"))
		r2 := fx.do("POST", bulkPath, bearer(ada), jsonBody(bad), idemKey("bulk-2"))
		if r1.Status != http.StatusBadRequest || r2.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r1.Body, r2.Body) {
			t.Fatalf("refusal: %d, repeat %d replayed=%q", r1.Status, r2.Status, r2.Header.Get("Idempotent-Replayed"))
		}
	})
}

// TestDocumentBulkRoute checks the route's neighbours: the path is not a
// document id, so its other methods are 405, not a document's 404.
func TestDocumentBulkRoute(t *testing.T) {
	t.Parallel()
	fx, ada := newDocsFixtureWithAda(t)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		r := fx.do(m, bulkPath, bearer(ada), jsonBody(map[string]any{"title": "x"}))
		fx.wantError(r, http.StatusMethodNotAllowed, quire.EMETHODNOTALLOWED)
		if allow := r.Header.Get("Allow"); allow != "POST" {
			t.Errorf("%s: Allow %q, want POST", m, allow)
		}
	}
}

// TestDocumentBulkWebhooks: each document changed queues its own
// document.updated delivery, as a single update does; the others none.
func TestDocumentBulkWebhooks(t *testing.T) {
	t.Parallel()
	fx := newDocsFixture(t, withHTTPConfig(func(c *serverConfig) { c.Webhooks.AllowPrivate = true }))
	e := fx.env
	admin := fx.person("root@example.com", "admin", "", false)
	ada := fx.person("ada@example.com", "editor", "Engineering", false)
	r := e.do("POST", "/api/admin/webhooks", bearer(admin),
		jsonBody(map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"document.updated"}}))
	if r.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	var created struct{ Webhook webhookWire }
	r.decode(t, &created)

	a := fx.create(ada, map[string]any{"title": "A"})
	b := fx.create(ada, map[string]any{"title": "B", "status": "published"})
	c := fx.create(ada, map[string]any{"title": "C"})
	got := fx.bulk(ada, map[string]any{"ids": []string{a.ID, b.ID, c.ID}, "status": "published"})
	if got.Updated != 2 || got.Unchanged != 1 {
		t.Fatalf("counts %+v", got)
	}
	r = e.do("GET", "/api/admin/webhooks/"+created.Webhook.ID+"/deliveries", bearer(admin))
	var log struct {
		Deliveries []deliveryWire `json:"deliveries"`
	}
	r.decode(t, &log)
	events := map[string]bool{}
	for _, d := range log.Deliveries {
		if d.Action != quire.ActionDocumentUpdated {
			t.Errorf("delivery of %s", d.Action)
		}
		events[d.EventID] = true
	}
	if len(log.Deliveries) != 2 || len(events) != 2 {
		t.Fatalf("%d deliveries of %d events, want 2 of 2: %+v", len(log.Deliveries), len(events), log.Deliveries)
	}
}
