package httpapi

import (
	"net/http"
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
