package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/mail"
	"quire/mail/mailtest"
)

// mailer is an in-process SMTP server and an outbox worker delivering the
// env's outbox to it, with the worker's log kept for inspection.
type mailer struct {
	srv  *mailtest.Server
	mu   sync.Mutex
	logs bytes.Buffer
}

func (m *mailer) logText() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logs.String()
}

// startMailer runs a worker for e's outbox that sends to srv, polling
// fast, retrying after a few milliseconds, until the test ends.
func startMailer(t *testing.T, e *env, srv *mailtest.Server) *mailer {
	t.Helper()
	m := &mailer{srv: srv}
	logger := slog.New(slog.NewJSONHandler(syncWriter{&m.mu, &m.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sender, err := mail.NewSender(srv.URL, "Quire <quire@quire.test>", "", logger)
	if err != nil {
		t.Fatal(err)
	}
	runWorker(t, e, sender, logger, 100*time.Millisecond)
	return m
}

// runWorker runs a worker for e's outbox that sends with sender, polling
// fast and retrying after 20 ms at first and maxBackoff at the most, until
// the test ends.
func runWorker(t *testing.T, e *env, sender mail.Sender, logger *slog.Logger, maxBackoff time.Duration) {
	t.Helper()
	w := mail.NewWorker(e.store, sender, logger,
		mail.WithPollInterval(10*time.Millisecond), mail.WithBackoff(20*time.Millisecond, maxBackoff))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// delivered is what a test compares of a delivered mail.
type delivered struct {
	From, To, Subject string
	Links, HTMLLinks  int
}

// oneMail waits for the next mail (the nth in all) and returns it with the
// one link it carries to page.
func oneMail(t *testing.T, srv *mailtest.Server, n int, page string) (delivered, string) {
	t.Helper()
	msgs := srv.Wait(t, n, 10*time.Second)
	if len(msgs) != n {
		t.Fatalf("%d mails delivered, want %d", len(msgs), n)
	}
	p, err := msgs[n-1].Parse()
	if err != nil {
		t.Fatal(err)
	}
	links := p.Links()
	d := delivered{From: msgs[n-1].From, To: strings.Join(msgs[n-1].To, ","), Subject: p.Subject, Links: len(links)}
	if len(links) == 0 || !strings.HasPrefix(links[0], "http://quire.test/"+page+"?token=") {
		t.Fatalf("mail text carries no %s link:\n%s", page, p.Text)
	}
	d.HTMLLinks = strings.Count(p.HTML, `href="`+links[0]+`"`)
	return d, links[0]
}

func TestMailedResetLink(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	srv := mailtest.NewServer(t)
	m := startMailer(t, e, srv)
	before := e.login("ada@example.com")

	message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "Ada@Example.com"})))
	got, link := oneMail(t, srv, 1, "reset-password")
	want := delivered{From: "quire@quire.test", To: "ada@example.com", Subject: "Reset your quire password", Links: 1, HTMLLinks: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivered mail (-want +got):\n%s", diff)
	}
	tok := tokenOf(t, link)

	t.Run("opening the link does not use the token up", func(t *testing.T) {
		path := strings.TrimPrefix(link, "http://quire.test")
		e.withT(t).do("GET", path, noSpecCheck())
		e.withT(t).do("HEAD", path, noSpecCheck())
	})

	t.Run("the link's token resets the password once", func(t *testing.T) {
		r := e.withT(t).do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
		if got := message(t, r); got != "Password has been reset" {
			t.Errorf("message %q", got)
		}
		r = e.withT(t).do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tok, "password": "one more good passphrase"}))
		e.withT(t).wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
	})

	t.Run("the session from before the reset is revoked and the new password signs in", func(t *testing.T) {
		e.withT(t).wantError(e.withT(t).do("GET", "/api/auth/me", bearer(before)), 401, quire.EUNAUTHORIZED)
		if r := e.withT(t).do("POST", "/api/auth/login", creds("ada@example.com", newPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in: %d %s", r.Status, r.Body)
		}
	})

	t.Run("an expired link is refused", func(t *testing.T) {
		message(t, e.withT(t).do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})))
		_, link := oneMail(t, srv, 2, "reset-password")
		e.clock.Advance(time.Hour)
		r := e.withT(t).do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tokenOf(t, link), "password": "one more good passphrase"}))
		e.withT(t).wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
	})

	t.Run("neither the server's log nor the worker's shows a token", func(t *testing.T) {
		for name, logs := range map[string]string{"server": e.logText(), "worker": m.logText()} {
			if strings.Contains(logs, tok) || strings.Contains(logs, "token=") {
				t.Errorf("the %s log shows a token:\n%s", name, logs)
			}
		}
		if !strings.Contains(m.logText(), `"msg":"mail sent"`) {
			t.Errorf("the worker logged no delivery:\n%s", m.logText())
		}
	})
}

func TestMailedInvitation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := mailtest.NewServer(t)
	startMailer(t, e, srv)
	_, tok := invite(t, e, "ivy@example.com")

	got, link := oneMail(t, srv, 1, "setup-password")
	want := delivered{From: "quire@quire.test", To: "ivy@example.com", Subject: "You are invited to quire", Links: 1, HTMLLinks: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivered mail (-want +got):\n%s", diff)
	}
	if tokenOf(t, link) != tok {
		t.Fatalf("the mailed link %s is not the one the CLI prints", link)
	}
	r := e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": newPassword}))
	if got := message(t, r); got != "Password set" {
		t.Errorf("message %q", got)
	}
	if r := e.do("POST", "/api/auth/login", creds("ivy@example.com", newPassword)); r.Status != http.StatusOK {
		t.Errorf("sign-in: %d %s", r.Status, r.Body)
	}
	e.wantError(e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": newPassword})),
		http.StatusBadRequest, quire.EINVALIDTOKEN)
}

func TestMailRetries(t *testing.T) {
	t.Parallel()
	t.Run("a server that refuses the first two deliveries gets the mail on a retry, and its link works", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		srv := mailtest.NewServer(t, mailtest.RefuseFirst(2))
		startMailer(t, e, srv)
		message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})))
		_, link := oneMail(t, srv, 1, "reset-password")
		if n := srv.Refused(); n != 2 {
			t.Errorf("%d refusals before the delivery, want 2", n)
		}
		r := e.do("POST", "/api/auth/reset-password", jsonBody(map[string]string{"token": tokenOf(t, link), "password": newPassword}))
		if got := message(t, r); got != "Password has been reset" {
			t.Errorf("message %q", got)
		}
	})

	t.Run("no request waits for the mail server: the mail waits in the outbox for it", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		// No mail server and no worker yet: the request is answered all
		// the same, and the mail is committed with the token.
		message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})))
		srv := mailtest.NewServer(t)
		startMailer(t, e, srv)
		_, link := oneMail(t, srv, 1, "reset-password")
		tokenOf(t, link)
	})

	t.Run("an unreachable server delays the mail until it is back", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		// A port with nothing listening, then a server on that port. The
		// address is one of loopback's own (127.x.y.z, at random), not
		// 127.0.0.1, so that no other test's listener or connection on
		// 127.0.0.1 takes the port while it is free.
		ln, err := net.Listen("tcp", fmt.Sprintf("127.%d.%d.%d:0", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254)))
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		// The server comes up once the worker has failed to reach it (not
		// after a fixed sleep: the answer to forgot-password may take longer
		// than all of the worker's attempts on a busy machine).
		failed := make(chan struct{})
		var once sync.Once
		logger := slog.New(onMessage{"mail not sent, will retry", func() { once.Do(func() { close(failed) }) }})
		sender, err := mail.NewSender("smtp://"+addr, "", "", logger)
		if err != nil {
			t.Fatal(err)
		}
		runWorker(t, e, sender, logger, 50*time.Millisecond)

		message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})))
		select {
		case <-failed:
		case <-time.After(10 * time.Second):
			t.Fatal("the worker did not try the unreachable server")
		}
		srv := mailtest.NewServerAt(t, addr)
		_, link := oneMail(t, srv, 1, "reset-password")
		tokenOf(t, link)
	})
}

// TestResetLinkVoidedByPasswordChange: a reset link mailed before a
// successful change of password no longer works after it, although its
// hour has not passed, and a link asked for afterwards does.
func TestResetLinkVoidedByPasswordChange(t *testing.T) {
	t.Parallel()
	e := newEnvWithAda(t)
	srv := mailtest.NewServer(t)
	startMailer(t, e, srv)
	session := e.login("ada@example.com")

	message(t, e.do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})))
	_, link := oneMail(t, srv, 1, "reset-password")
	r := e.do("POST", "/api/auth/change-password", bearer(session),
		jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": newPassword}))
	if got := message(t, r); got != "Password changed" {
		t.Fatalf("message %q", got)
	}
	e.clock.Advance(time.Minute)

	t.Run("the link from before the change is refused", func(t *testing.T) {
		r := e.withT(t).do("POST", "/api/auth/reset-password",
			jsonBody(map[string]string{"token": tokenOf(t, link), "password": "one more good passphrase"}))
		e.withT(t).wantError(r, http.StatusBadRequest, quire.EINVALIDTOKEN)
		if r := e.withT(t).do("POST", "/api/auth/login", creds("ada@example.com", newPassword)); r.Status != http.StatusOK {
			t.Errorf("sign-in with the changed password: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a link asked for after the change works", func(t *testing.T) {
		message(t, e.withT(t).do("POST", "/api/auth/forgot-password", jsonBody(map[string]string{"email": "ada@example.com"})))
		_, link := oneMail(t, srv, 2, "reset-password")
		r := e.withT(t).do("POST", "/api/auth/reset-password",
			jsonBody(map[string]string{"token": tokenOf(t, link), "password": "one more good passphrase"}))
		if got := message(t, r); got != "Password has been reset" {
			t.Errorf("message %q", got)
		}
	})
}

// onMessage is a log handler that calls f for every record whose message
// is msg, and drops every record.
type onMessage struct {
	msg string
	f   func()
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.f()
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }
