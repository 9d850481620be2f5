package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire"
	"quire/auth"
	"quire/mail"
)

// scrape reads /metrics into a map from a sample's name and labels, as
// written in the text format (quire_logins_total{outcome="success"}), to
// its value.
func scrape(t *testing.T, e *env) (map[string]float64, string) {
	t.Helper()
	r := e.do("GET", "/metrics")
	if r.Status != 200 {
		t.Fatalf("/metrics: %d %s", r.Status, r.Body)
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(string(r.Body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples, string(r.Body)
}

// recordingSender accepts every mail.
type recordingSender struct{}

func (recordingSender) Send(context.Context, quire.Mail) error { return nil }

// TestMetrics drives sign-ins of every outcome, documents and mail, and
// reads what an operator alerts on from /metrics, on each store.
func TestMetrics(t *testing.T) {
	t.Parallel()
	store := current.open(t)
	worker := mail.NewWorker(store, recordingSender{}, slog.New(slog.DiscardHandler), mail.WithPollInterval(10*time.Millisecond))
	e := newEnv(t, withStore(func(testing.TB) quire.Store { return store }),
		withAuthConfig(func(c *auth.Config) {
			// One failure per address and email in the window; two
			// failures of an email lock it.
			c.Limits.Limit, c.Limits.LockThreshold = 1, 2
		}),
		withHTTPConfig(func(c *serverConfig) {
			c.Mail = worker
			c.TrustedProxies = trustedProxies("127.0.0.1/32")
		}))
	e.user("ada@example.com", "editor", "")
	e.user("bob@example.com", "editor", "")
	e.user("cy@example.com", "editor", "")
	ada := e.login("ada@example.com")

	before, _ := scrape(t, e)
	steps := []struct {
		name, email, password, from string
		wantStatus                  int
		wantCode, outcome           string
	}{
		{"a right password", "ada@example.com", testPassword, "127.0.0.2", 200, "", auth.LoginSuccess},
		{"an unknown email", "nobody@example.com", testPassword, "127.0.0.2", 401, "INVALID_CREDENTIALS", quire.LoginFailedUnknown},
		{"a wrong password", "bob@example.com", "wrong password 1234", "127.0.0.2", 401, "INVALID_CREDENTIALS", quire.LoginFailedPassword},
		{"past the limit of the address and email", "bob@example.com", "wrong password 1234", "127.0.0.2", 429, "TOO_MANY_ATTEMPTS", auth.LoginLimited},
		{"a second wrong password locks", "cy@example.com", "wrong password 1234", "127.0.0.3", 401, "INVALID_CREDENTIALS", quire.LoginFailedPassword},
		{"a third", "cy@example.com", "wrong password 1234", "127.0.0.4", 401, "INVALID_CREDENTIALS", quire.LoginFailedPassword},
		{"the locked account", "cy@example.com", testPassword, "127.0.0.5", 429, "ACCOUNT_LOCKED", auth.LoginLocked},
	}
	want := map[string]float64{}
	for _, s := range steps {
		r := e.do("POST", "/api/auth/login", creds(s.email, s.password), fromAddr(s.from))
		if r.Status != s.wantStatus {
			t.Fatalf("%s: %d %s, want %d %s", s.name, r.Status, r.Body, s.wantStatus, s.wantCode)
		}
		if s.wantCode != "" {
			e.wantError(r, s.wantStatus, s.wantCode)
		}
		want[`quire_logins_total{outcome="`+s.outcome+`"}`]++
	}

	// Two documents, one of them deleted; a mail queued, then sent.
	for _, title := range []string{"Kept", "Deleted"} {
		r := e.do("POST", "/api/documentation/documents", bearer(ada), jsonBody(map[string]any{"title": title, "content": "x"}))
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		if title == "Deleted" {
			d := decodeDoc(t, r)
			if r := e.do("DELETE", "/api/documentation/documents/"+d.ID, bearer(ada)); r.Status != 200 {
				t.Fatalf("delete: %d %s", r.Status, r.Body)
			}
		}
	}
	if r := e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})); r.Status != 200 {
		t.Fatalf("forgot-password: %d %s", r.Status, r.Body)
	}
	e.clock.Advance(90 * time.Second)
	pending, _ := scrape(t, e)

	t.Run("sign-ins are counted by outcome", func(t *testing.T) {
		for _, o := range auth.LoginOutcomes {
			key := `quire_logins_total{outcome="` + o + `"}`
			if _, ok := pending[key]; !ok {
				t.Errorf("no sample %s", key)
				continue
			}
			if got := pending[key] - before[key]; got != want[key] {
				t.Errorf("%s rose by %v, want %v", key, got, want[key])
			}
		}
		if n := pending["quire_password_hash_wait_seconds_count"] - before["quire_password_hash_wait_seconds_count"]; n < float64(len(steps)) {
			t.Errorf("hashing queue: %v waits counted for %d sign-ins", n, len(steps))
		}
		for _, name := range []string{"quire_password_hash_waiting", "quire_password_hash_refused_total"} {
			if _, ok := pending[name]; !ok {
				t.Errorf("no sample %s", name)
			}
		}
	})

	t.Run("users, documents and the pending mail are reported", func(t *testing.T) {
		for name, v := range map[string]float64{"quire_users": 3, "quire_documents": 1, "quire_outbox_pending": 1,
			"quire_outbox_oldest_pending_age_seconds": 90, "quire_database_up": 1, "quire_outbox_sent_total": 0} {
			if got, ok := pending[name]; !ok || got != v {
				t.Errorf("%s = %v (present %t), want %v", name, got, ok, v)
			}
		}
	})

	t.Run("the build is labelled", func(t *testing.T) {
		found := false
		for k, v := range pending {
			if strings.HasPrefix(k, "quire_build_info{") && strings.Contains(k, `goversion="`+runtime.Version()+`"`) &&
				strings.Contains(k, `revision="`) && strings.Contains(k, `version="`) && v == 1 {
				found = true
			}
		}
		if !found {
			t.Error("no quire_build_info{version,revision,goversion} 1")
		}
	})

	t.Run("the store's own figures are reported", func(t *testing.T) {
		switch current.name {
		case "sqlite":
			if pending["quire_sqlite_commit_batch_size_count"] == 0 || pending["quire_sqlite_commit_duration_seconds_count"] == 0 {
				t.Errorf("group commit: %v batches, %v timed", pending["quire_sqlite_commit_batch_size_count"], pending["quire_sqlite_commit_duration_seconds_count"])
			}
		case "postgres":
			if pending["quire_postgres_pool_acquires_total"] == 0 || pending["quire_postgres_pool_max_connections"] == 0 {
				t.Errorf("pool: %v acquires, %v max", pending["quire_postgres_pool_acquires_total"], pending["quire_postgres_pool_max_connections"])
			}
			if _, ok := pending["quire_postgres_pool_acquire_wait_seconds_total"]; !ok {
				t.Error("no quire_postgres_pool_acquire_wait_seconds_total")
			}
		}
	})

	t.Run("the worker's deliveries are counted and the outbox empties", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); worker.Run(ctx) }()
		defer func() { cancel(); <-done }()
		for worker.Stats().Sent == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		after, _ := scrape(t, e)
		if after["quire_outbox_sent_total"] != 1 || after["quire_outbox_pending"] != 0 || after["quire_outbox_oldest_pending_age_seconds"] != 0 {
			t.Errorf("sent %v, pending %v, oldest %vs; want 1, 0, 0", after["quire_outbox_sent_total"],
				after["quire_outbox_pending"], after["quire_outbox_oldest_pending_age_seconds"])
		}
	})

	t.Run("promtool check metrics passes", func(t *testing.T) {
		_, body := scrape(t, e)
		checkWithPromtool(t, body)
	})

	t.Run("a request's log line carries the client address the limits see", func(t *testing.T) {
		e.do("GET", "/healthz", header("X-Forwarded-For", "203.0.113.9, 198.51.100.4"))
		e.do("GET", "/healthz", header("X-Forwarded-For", "203.0.113.9"), fromAddr("127.0.0.6"))
		logs := e.logText()
		for _, want := range []string{`"client":"198.51.100.4"`, `"client":"127.0.0.6"`} {
			if !strings.Contains(logs, want) {
				t.Errorf("no request log line with %s", want)
			}
		}
	})
}

// checkWithPromtool runs Prometheus's own linter on a scrape. Without
// promtool the check is skipped, loudly, unless QUIRE_REQUIRE_PROMTOOL=1
// (as in CI, which installs Debian's prometheus package).
func checkWithPromtool(t *testing.T, body string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("QUIRE_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is required (QUIRE_REQUIRE_PROMTOOL=1) but not installed: apt-get install -y prometheus")
		}
		t.Skip("promtool NOT AVAILABLE: the scrape is not linted; set QUIRE_REQUIRE_PROMTOOL=1 to make this a failure")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}
