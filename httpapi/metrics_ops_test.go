package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestMetricsForOperators: /metrics reports the webhook backlog, the
// requests in flight and the size of the database, and passes promtool.
func TestMetricsForOperators(t *testing.T) {
	e := newEnv(t, withHTTPConfig(func(c *serverConfig) { c.Webhooks.AllowPrivate = true }))
	admin := e.login(e.user("root@example.com", "admin", "").Email)
	before, _ := scrape(t, e)
	for _, name := range []string{"quire_webhook_deliveries_pending", "quire_webhook_oldest_pending_age_seconds"} {
		if got, ok := before[name]; !ok || got != 0 {
			t.Errorf("before any webhook: %s = %v (present %t), want 0", name, got, ok)
		}
	}

	// No worker runs: every delivery stays pending.
	r := e.do("POST", "/api/admin/webhooks", bearer(admin), jsonBody(map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"document.*"}}))
	if r.Status != http.StatusCreated {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	big := make([]byte, 300<<10)
	rand.Read(big)
	for i, content := range []string{"x", hex.EncodeToString(big)} {
		r := e.do("POST", "/api/documentation/documents", bearer(admin), jsonBody(map[string]any{"title": "Hooked " + string(rune('A'+i)), "content": content}))
		if r.Status != http.StatusCreated {
			t.Fatalf("create document: %d %.200s", r.Status, r.Body)
		}
		e.clock.Advance(30 * time.Second)
	}
	after, body := scrape(t, e)
	for name, want := range map[string]float64{
		"quire_webhook_deliveries_pending":         2,
		"quire_webhook_oldest_pending_age_seconds": 60,
		"quire_http_requests_in_flight":            1, // the scrape itself
	} {
		if got, ok := after[name]; !ok || got != want {
			t.Errorf("%s = %v (present %t), want %v", name, got, ok, want)
		}
	}
	// 600 KB of text that does not compress went into the database.
	if grew := after["quire_database_size_bytes"] - before["quire_database_size_bytes"]; before["quire_database_size_bytes"] <= 0 || grew < 300<<10 {
		t.Errorf("quire_database_size_bytes went from %v to %v, want it to grow by 300 KiB at least",
			before["quire_database_size_bytes"], after["quire_database_size_bytes"])
	}
	checkWithPromtool(t, body)
}

// TestMetricsBehindAToken: with a metrics token, a scrape without it, or
// with another, is 401 UNAUTHORIZED; with it, the metrics.
func TestMetricsBehindAToken(t *testing.T) {
	const token = "a-long-random-metrics-token"
	e := newEnv(t, withHTTPConfig(func(c *serverConfig) { c.MetricsToken = token }))
	user := e.login(e.user("ed@example.com", "editor", "").Email)
	for name, opts := range map[string][]reqOpt{
		"no token":         nil,
		"another token":    {bearer(token + "x")},
		"a prefix":         {bearer(token[:10])},
		"a session":        {bearer(user)},
		"the token, bare":  {header("Authorization", token)},
		"the token, basic": {header("Authorization", "Basic "+token)},
	} {
		r := e.do("GET", "/metrics", opts...)
		e.wantError(r, http.StatusUnauthorized, "UNAUTHORIZED")
		if r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", name)
		}
	}
	r := e.do("GET", "/metrics", bearer(token))
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "quire_build_info{") {
		t.Errorf("with the token: %d %.200s", r.Status, r.Body)
	}
}

// TestMetricsOnTheirOwnAddress: with the metrics served elsewhere, the
// API's address answers 404 at /metrics, and MetricsHandler serves them
// (behind the token, when there is one).
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	var srv *Server
	e := newEnv(t, withHTTPConfig(func(c *serverConfig) { c.MetricsElsewhere, c.MetricsToken = true, "tok" }))
	e.wantError(e.do("GET", "/metrics", bearer("tok")), http.StatusNotFound, "NOT_FOUND")

	srv = e.server.Config.Handler.(*Server)
	ops := httptest.NewServer(srv.MetricsHandler())
	t.Cleanup(ops.Close)
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", ops.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := get("/metrics", "tok"); status != http.StatusOK || !strings.Contains(body, "quire_http_requests_in_flight 1") {
		t.Errorf("the metrics address: %d %.300s", status, body)
	}
	if status, _ := get("/metrics", ""); status != http.StatusUnauthorized {
		t.Errorf("the metrics address without the token: %d", status)
	}
	if status, _ := get("/api/auth/me", "tok"); status != http.StatusNotFound {
		t.Errorf("the metrics address serves the API: %d", status)
	}
}
