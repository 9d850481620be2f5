package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const auditPath = "/api/admin/audit"

type eventWire struct {
	ID        string         `json:"id"`
	At        string         `json:"at"`
	Action    string         `json:"action"`
	Actor     *personWire    `json:"actor"`
	Target    *targetWire    `json:"target"`
	IP        string         `json:"ip"`
	RequestID string         `json:"requestId"`
	Details   map[string]any `json:"details"`
}

type targetWire struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

type auditPageWire struct {
	Events     []eventWire `json:"events"`
	NextCursor *string     `json:"nextCursor"`
}

// audit reads one page of the log as the holder of token.
func (e *env) audit(t *testing.T, token string, q url.Values) (auditPageWire, []byte) {
	t.Helper()
	r := e.do("GET", auditPath+"?"+q.Encode(), bearer(token))
	if r.Status != http.StatusOK {
		t.Fatalf("audit %v: %d %s", q, r.Status, r.Body)
	}
	var out auditPageWire
	strictDecode(t, r.Body, &out)
	return out, r.Body
}

func eventActions(evs []eventWire) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Action)
	}
	return out
}

func TestAuditLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user("root@example.com", "admin", "")
	ed := e.user("ed@example.com", "editor", "Engineering")
	admin := e.login("root@example.com")

	t.Run("only administrators read the log", func(t *testing.T) {
		e.wantError(e.do("GET", auditPath, bearer(e.login("ed@example.com"))), http.StatusForbidden, "FORBIDDEN")
		e.wantError(e.do("GET", auditPath), http.StatusUnauthorized, "UNAUTHORIZED")
	})

	t.Run("a filter it does not understand is 400 naming it", func(t *testing.T) {
		for q, field := range map[string]string{
			"limit=0": "limit", "limit=201": "limit", "limit=ten": "limit", "limit=-1": "limit",
			"action=AUTH.LOGIN": "action", "action=auth..x": "action", "action=%27%3B": "action",
			"since=yesterday": "since", "until=2026-13-01": "until",
			"cursor=bm90LWEtY3Vyc29y": "cursor", "cursor=%25%25": "cursor",
		} {
			body := e.wantError(e.do("GET", auditPath+"?"+q, bearer(admin)), http.StatusBadRequest, "VALIDATION_ERROR")
			if fields, _ := body["fields"].(map[string]any); fields[field] == nil {
				t.Errorf("%s: fields %v do not name %s", q, body["fields"], field)
			}
		}
		for _, q := range []string{"limit=1", "limit=200", "action=auth.", "action=document.updated"} {
			e.audit(t, admin, mustQuery(t, q))
		}
	})

	t.Run("sign-ins, password flows and document changes are recorded, with who, where and which request", func(t *testing.T) {
		// Failed sign-ins: an unknown email and a wrong password.
		e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": " Nobody@Example.com ", "password": "x-secret-guess-1"}))
		e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": "ed@example.com", "password": "x-secret-guess-2"}))
		r := e.do("POST", "/api/auth/login", jsonBody(map[string]string{"email": "ed@example.com", "password": testPassword}),
			header("X-Request-Id", "req-login-1"), fromAddr("127.0.0.9"))
		var login struct {
			AccessToken string `json:"accessToken"`
		}
		r.decode(t, &login)
		tok := login.AccessToken

		const secretText = "the launch codes are 0000"
		r = e.do("POST", "/api/documentation/documents", bearer(tok), header("X-Request-Id", "req-create-1"),
			jsonBody(map[string]any{"title": "Plan", "content": secretText}))
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		doc := decodeDoc(t, r)
		put := func(body map[string]any) {
			t.Helper()
			if r := e.do("PUT", "/api/documentation/documents/"+doc.ID, bearer(tok), jsonBody(body)); r.Status != http.StatusOK {
				t.Fatalf("update: %d %s", r.Status, r.Body)
			}
		}
		put(map[string]any{"title": "Plan B", "content": secretText + " and more"})
		put(map[string]any{"title": "Plan B"}) // changes nothing: no event
		if r := e.do("DELETE", "/api/documentation/documents/"+doc.ID, bearer(tok)); r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.do("POST", trashPath+"/"+doc.ID+"/restore", bearer(tok)); r.Status != http.StatusOK {
			t.Fatalf("restore: %d %s", r.Status, r.Body)
		}
		token := forgotToken(t, e, "ed@example.com")
		newPassword := "a whole new passphrase for ed 7"
		if r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": token, "password": newPassword})); r.Status != http.StatusOK {
			t.Fatalf("reset: %d %s", r.Status, r.Body)
		}

		page, raw := e.audit(t, admin, url.Values{"limit": {"200"}})
		want := []string{
			"auth.password_reset", "auth.password_reset_requested",
			"document.restored", "document.deleted", "document.updated", "document.created",
			"auth.login", "auth.login_failed", "auth.login_failed",
			"auth.login", "auth.login", // the admin's, and ed's in the first subtest
			"user.created", "department.created", "user.created", // made by the service, as the CLI does
		}
		if diff := cmp.Diff(want, eventActions(page.Events)); diff != "" {
			t.Fatalf("actions, newest first (-want +got):\n%s", diff)
		}
		byAction := map[string][]eventWire{}
		for _, ev := range page.Events {
			byAction[ev.Action] = append(byAction[ev.Action], ev)
		}
		edActor := &personWire{ID: ed.ID, Name: ed.Name}
		edTarget := &targetWire{Type: "user", ID: ed.ID, Name: ed.Name}

		failed := byAction["auth.login_failed"]
		if diff := cmp.Diff([]eventWire{
			{Action: "auth.login_failed", Target: edTarget, IP: "127.0.0.1",
				Details: map[string]any{"email": "ed@example.com", "reason": "password"}},
			{Action: "auth.login_failed", IP: "127.0.0.1",
				Details: map[string]any{"email": "nobody@example.com", "reason": "unknown"}},
		}, failed, ignoreEventIDs); diff != "" {
			t.Errorf("failed sign-ins (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(eventWire{Action: "auth.login", Actor: edActor, Target: edTarget, IP: "127.0.0.9",
			RequestID: "req-login-1", Details: map[string]any{}}, byAction["auth.login"][0], ignoreEventIDs); diff != "" {
			t.Errorf("sign-in (-want +got):\n%s", diff)
		}
		docTarget := func(name string) *targetWire { return &targetWire{Type: "document", ID: doc.ID, Name: name} }
		if diff := cmp.Diff([]eventWire{
			{Action: "document.restored", Actor: edActor, Target: docTarget("Plan B"), IP: "127.0.0.1", Details: map[string]any{}},
			{Action: "document.deleted", Actor: edActor, Target: docTarget("Plan B"), IP: "127.0.0.1", Details: map[string]any{}},
			{Action: "document.updated", Actor: edActor, Target: docTarget("Plan B"), IP: "127.0.0.1",
				Details: map[string]any{"fields": []any{"title", "content"}}},
			{Action: "document.created", Actor: edActor, Target: docTarget("Plan"), IP: "127.0.0.1", RequestID: "req-create-1",
				Details: map[string]any{}},
		}, page.Events[2:6], ignoreEventIDs); diff != "" {
			t.Errorf("document events (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(eventWire{Action: "auth.password_reset", Actor: edActor, Target: edTarget, IP: "127.0.0.1",
			Details: map[string]any{}}, page.Events[0], ignoreEventIDs); diff != "" {
			t.Errorf("reset (-want +got):\n%s", diff)
		}
		for _, ev := range page.Events {
			if ev.RequestID == "" && ev.Details["via"] != "cli" {
				t.Errorf("%s has no request id", ev.Action)
			}
		}
		if got := byAction["auth.login"][0].RequestID; got != "req-login-1" {
			t.Errorf("sign-in's request id = %q, want the one the client sent", got)
		}
		if got := byAction["document.created"][0].RequestID; got != "req-create-1" {
			t.Errorf("create's request id = %q, want the one the client sent", got)
		}
		for _, secret := range []string{testPassword, newPassword, "x-secret-guess", token, tok, admin, "reset-password", secretText, "launch codes"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("the log holds a secret %q:\n%s", secret, raw)
			}
		}

		t.Run("filters narrow it", func(t *testing.T) {
			for q, want := range map[string][]string{
				"action=auth.login_failed":           {"auth.login_failed", "auth.login_failed"},
				"action=document.&limit=2":           {"document.restored", "document.deleted"},
				"targetId=" + doc.ID:                 {"document.restored", "document.deleted", "document.updated", "document.created"},
				"actorId=" + ed.ID + "&action=auth.": {"auth.password_reset", "auth.login", "auth.login"},
			} {
				page, _ := e.audit(t, admin, mustQuery(t, q))
				if diff := cmp.Diff(want, eventActions(page.Events)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", q, diff)
				}
			}
		})

		t.Run("following nextCursor walks the whole log once", func(t *testing.T) {
			var got []string
			q := url.Values{"limit": {"3"}}
			for range 20 {
				p, _ := e.audit(t, admin, q)
				for _, ev := range p.Events {
					got = append(got, ev.ID)
				}
				if p.NextCursor == nil {
					break
				}
				q.Set("cursor", *p.NextCursor)
			}
			all, _ := e.audit(t, admin, url.Values{"limit": {"200"}})
			var want []string
			for _, ev := range all.Events {
				want = append(want, ev.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("paged ids (-whole +paged):\n%s", diff)
			}
		})
	})
}

// ignoreEventIDs compares events without their id, time and request id
// (generated, checked apart).
var ignoreEventIDs = cmp.FilterPath(func(p cmp.Path) bool {
	s := p.String()
	return s == "ID" || s == "At" || s == "RequestID"
}, cmp.Ignore())

func mustQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
