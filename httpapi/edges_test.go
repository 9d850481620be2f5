package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire"
)

// TestWebhookRegistrationRefusesIPv6FormsOfPrivateAddresses: the IPv6
// forms that embed or stand for an internal IPv4 address, or that name a
// site's own network, are refused like the addresses they stand for.
func TestWebhookRegistrationRefusesIPv6FormsOfPrivateAddresses(t *testing.T) {
	e := newEnv(t)
	admin := e.login(e.user("root@example.com", "admin", "").Email)
	for _, url := range []string{
		"http://[::127.0.0.1]/hook",         // IPv4-compatible (::/96)
		"http://[::a9fe:a9fe]/hook",         // ::169.254.169.254
		"http://[::808:808]/hook",           // ::8.8.8.8, still IPv4-compatible
		"http://[fec0::1]/hook",             // site-local
		"http://[feff:ffff::1]/hook",        // end of fec0::/10
		"http://[2001:0:4136:e378::1]/hook", // Teredo
		"http://[2001:0:ffff:ffff::1]/hook", // end of 2001::/32
	} {
		body := e.wantError(e.do("POST", "/api/admin/webhooks", bearer(admin),
			jsonBody(map[string]any{"url": url, "events": []string{"*"}})), http.StatusBadRequest, quire.EVALIDATION)
		if fields, _ := body["fields"].(map[string]any); fields["url"] == nil {
			t.Errorf("%s: refusal %v does not name url", url, body)
		}
	}
	// Public IPv6 just beside those blocks is taken.
	for _, url := range []string{"https://[2001:4860:4860::8888]/hook", "https://[2606:4700::1111]/hook"} {
		r := e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(map[string]any{"url": url, "events": []string{"*"}}))
		if r.Status != http.StatusCreated {
			t.Errorf("%s: %d %s", url, r.Status, r.Body)
		}
	}
}

// TestOpenAPIDeclaresWhatTheEdgesAnswer: every operation with a path
// parameter declares the 404 a path outside the parameter's shape gets;
// the download's bytes have a binary schema (generated clients read them
// as bytes, not as JSON); the TOTP set-up declares the optional body
// clients send.
func TestOpenAPIDeclaresWhatTheEdgesAnswer(t *testing.T) {
	sp, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range sp.doc.Paths.Map() {
		if !strings.Contains(path, "{") {
			continue
		}
		for method, op := range item.Operations() {
			if op.Responses.Status(http.StatusNotFound) == nil {
				t.Errorf("%s %s (%s) has a path parameter but declares no 404", method, path, op.OperationID)
			}
		}
	}

	dl := sp.doc.Paths.Find("/api/documentation/attachments/{id}/content").Get
	for _, status := range []int{http.StatusOK, http.StatusPartialContent} {
		r := dl.Responses.Status(status)
		if r == nil || r.Value == nil {
			t.Fatalf("download declares no %d", status)
		}
		for mt, c := range r.Value.Content {
			if c.Schema == nil || c.Schema.Value == nil || !c.Schema.Value.Type.Is("string") || c.Schema.Value.Format != "binary" {
				t.Errorf("download %d %s: the schema is not {type: string, format: binary}", status, mt)
			}
		}
	}

	totp := sp.doc.Paths.Find("/api/auth/mfa/totp").Post
	if rb := totp.RequestBody; rb == nil || rb.Value == nil || rb.Value.Required || rb.Value.Content.Get("application/json") == nil {
		t.Errorf("POST /api/auth/mfa/totp declares no optional JSON body")
	}
}

// TestTOTPSetUpTakesAnEmptyObject: a client that sends {} with its POST
// (as many do) gets the set-up, as one that sends nothing does.
func TestTOTPSetUpTakesAnEmptyObject(t *testing.T) {
	e := newEnv(t)
	for i, opt := range []reqOpt{jsonBody(map[string]any{}), header("X-Nothing", "1")} {
		u := e.user(fmt.Sprintf("t%d@example.com", i), "editor", "")
		tok := e.login(u.Email)
		r := e.do("POST", "/api/auth/mfa/totp", bearer(tok), opt)
		if r.Status != http.StatusOK {
			t.Errorf("body %d: %d %s", i, r.Status, r.Body)
		}
	}
	// A body that is sent is one JSON object, as everywhere else.
	tok := e.login(e.user("bad@example.com", "editor", "").Email)
	e.wantError(e.do("POST", "/api/auth/mfa/totp", bearer(tok), rawBody("[1]"), header("Content-Type", "application/json")),
		http.StatusBadRequest, quire.EINVALIDJSON)
	e.wantError(e.do("POST", "/api/auth/mfa/totp", bearer(tok), rawBody("x=1"), header("Content-Type", "application/x-www-form-urlencoded")),
		http.StatusUnsupportedMediaType, quire.EUNSUPPORTEDMEDIATYPE)
}
