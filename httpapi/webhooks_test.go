package httpapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"quire"
	"quire/webhook"
)

type webhookWire struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Active    bool     `json:"active"`
	Secret    string   `json:"secret"`
	CreatedAt string   `json:"createdAt"`
}

type deliveryWire struct {
	ID         string  `json:"id"`
	EventID    string  `json:"eventId"`
	Action     string  `json:"action"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	LastStatus *int    `json:"lastStatusCode"`
	NextCursor *string `json:"-"`
}

func TestWebhooksRefuseEveryoneButAdministrators(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	editor := e.login(e.user("ed@example.com", "editor", "").Email)
	wantAdminsOnly(t, e, editor, []route{
		{"GET", "/api/admin/webhooks"},
		{"POST", "/api/admin/webhooks"},
		{"GET", "/api/admin/webhooks/x"},
		{"PATCH", "/api/admin/webhooks/x"},
		{"DELETE", "/api/admin/webhooks/x"},
		{"GET", "/api/admin/webhooks/x/deliveries"},
	})
}

func TestWebhookRegistrationRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	e, admin := newSignedIn(t, "admin", "root@example.com")
	for _, url := range []string{
		"http://127.0.0.1:9/hook",
		"http://localhost/hook", // resolves to loopback
		"http://[::1]/hook",
		"http://10.1.2.3/",
		"http://192.168.0.10/",
		"http://172.16.5.4/",
		"http://169.254.169.254/latest/meta-data/", // cloud metadata
		"http://[fe80::1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://0.0.0.0/",
		"http://100.64.0.1/",
	} {
		body := e.wantError(e.do("POST", "/api/admin/webhooks", bearer(admin),
			jsonBody(map[string]any{"url": url, "events": []string{"*"}})), http.StatusBadRequest, quire.EVALIDATION)
		if fields, _ := body["fields"].(map[string]any); fields["url"] == nil {
			t.Errorf("%s: refusal %v does not name url", url, body)
		}
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"url": "ftp://8.8.8.8/", "events": []string{"*"}}, "url"},
		{map[string]any{"url": "https://user:pw@8.8.8.8/", "events": []string{"*"}}, "url"},
		{map[string]any{"url": "https://8.8.8.8/", "events": []string{}}, "events"},
		{map[string]any{"url": "https://8.8.8.8/", "events": []string{"Document.*"}}, "events"},
		{map[string]any{"url": "https://8.8.8.8/", "events": []string{"document.**"}}, "events"},
		{map[string]any{"url": "https://8.8.8.8/", "events": []string{"*"}, "secret": "short"}, "secret"},
		{map[string]any{"url": "https://8.8.8.8/", "events": []string{"*"}, "active": "yes"}, "active"},
		{map[string]any{"events": []string{"*"}}, "url"},
	} {
		body := e.wantError(e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(c.body)), http.StatusBadRequest, quire.EVALIDATION)
		if fields, _ := body["fields"].(map[string]any); fields[c.field] == nil {
			t.Errorf("%v: refusal %v does not name %s", c.body, body, c.field)
		}
	}
	// A public address is taken (nothing is sent at registration).
	r := e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(map[string]any{"url": "https://8.8.8.8/hook", "events": []string{"document.*"}}))
	if r.Status != http.StatusCreated {
		t.Fatalf("public address: %d %s", r.Status, r.Body)
	}
}

// TestWebhooksEndToEnd registers a receiver through the API, changes a
// document through the API, and sees the receiver get the signed event
// and the delivery log say so.
func TestWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withHTTPConfig(func(c *serverConfig) { c.Webhooks.AllowPrivate = true }))
	admin := e.login(e.user("root@example.com", "admin", "").Email)

	var (
		mu     sync.Mutex
		secret string
		got    []map[string]any
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		ts, v1, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Quire-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + string(body)))
		if !hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(v1)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		got = append(got, p)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)

	r := e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(map[string]any{"url": rcv.URL + "/hook", "events": []string{"document.*"}}))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created struct{ Webhook webhookWire }
	r.decode(t, &created)
	h := created.Webhook
	if !strings.HasPrefix(h.Secret, "whsec_") || !h.Active || h.URL != rcv.URL+"/hook" {
		t.Fatalf("created %+v", h)
	}
	mu.Lock()
	secret = h.Secret
	mu.Unlock()

	// The secret is never shown again.
	for _, path := range []string{"/api/admin/webhooks", "/api/admin/webhooks/" + h.ID} {
		r := e.do("GET", path, bearer(admin))
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), h.Secret) {
			t.Errorf("GET %s: %d, shows the secret: %v", path, r.Status, strings.Contains(string(r.Body), h.Secret))
		}
	}

	worker := &webhook.Worker{Store: e.store, AllowPrivate: true, Now: e.clock.Now, Poll: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); worker.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	doc := e.do("POST", "/api/documentation/documents", bearer(admin), jsonBody(map[string]any{"title": "Hooked", "content": "x"}))
	if doc.Status != http.StatusCreated {
		t.Fatalf("create document: %d %s", doc.Status, doc.Body)
	}
	// A folder event matches no pattern of the webhook.
	e.do("POST", "/api/documentation/folders", bearer(admin), jsonBody(map[string]any{"name": "F"}))

	var log struct {
		Deliveries []deliveryWire
		NextCursor *string
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := e.do("GET", "/api/admin/webhooks/"+h.ID+"/deliveries", bearer(admin))
		if r.Status != http.StatusOK {
			t.Fatalf("deliveries: %d %s", r.Status, r.Body)
		}
		r.decode(t, &log)
		if len(log.Deliveries) == 1 && log.Deliveries[0].Status == quire.DeliveryDelivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not delivered: %+v", log.Deliveries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := log.Deliveries[0]
	if d.Action != quire.ActionDocumentCreated || d.Attempts != 1 || d.LastStatus == nil || *d.LastStatus != 204 || log.NextCursor != nil {
		t.Errorf("delivery %+v", d)
	}
	mu.Lock()
	if len(got) != 1 {
		t.Fatalf("receiver got %d signed deliveries, want 1", len(got))
	}
	ev, _ := got[0]["event"].(map[string]any)
	if ev["action"] != quire.ActionDocumentCreated || ev["id"] != d.EventID || got[0]["deliveryId"] != d.ID {
		t.Errorf("payload %v", got[0])
	}
	mu.Unlock()

	// Change and delete.
	r = e.do("PATCH", "/api/admin/webhooks/"+h.ID, bearer(admin), jsonBody(map[string]any{"active": false, "events": []string{"*"}}))
	var changed struct{ Webhook webhookWire }
	r.decode(t, &changed)
	if r.Status != http.StatusOK || changed.Webhook.Active || changed.Webhook.Secret != "" || len(changed.Webhook.Events) != 1 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	e.wantError(e.do("GET", "/api/admin/webhooks/"+h.ID+"/deliveries?limit=0", bearer(admin)), http.StatusBadRequest, quire.EVALIDATION)
	e.wantError(e.do("GET", "/api/admin/webhooks/"+h.ID+"/deliveries?cursor=abc", bearer(admin)), http.StatusBadRequest, quire.EVALIDATION)
	if r := e.do("DELETE", "/api/admin/webhooks/"+h.ID, bearer(admin)); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	e.wantError(e.do("GET", "/api/admin/webhooks/"+h.ID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
	e.wantError(e.do("GET", "/api/admin/webhooks/"+h.ID+"/deliveries", bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)
	e.wantError(e.do("DELETE", "/api/admin/webhooks/"+h.ID, bearer(admin)), http.StatusNotFound, quire.ENOTFOUND)

	// The changes are in the audit log, the URL without its query.
	r = e.do("GET", "/api/admin/audit?action=webhook.", bearer(admin))
	var audit struct {
		Events []struct{ Action string }
	}
	r.decode(t, &audit)
	if len(audit.Events) != 3 {
		t.Errorf("audit: %+v, want created, updated, deleted", audit.Events)
	}
}
