package mail

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/mail/mailtest"
)

var testMail = quire.Mail{
	ID:        "0192f7a0-0000-7000-8000-000000000001",
	To:        "ann@example.com",
	Subject:   "Reset your quire password",
	Text:      "Hello,\n\nhttps://docs.example.com/reset-password?token=abc\n",
	HTML:      `<p><a href="https://docs.example.com/reset-password?token=abc">Reset</a></p>`,
	CreatedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC),
}

// received is what a test compares of an accepted message.
type received struct {
	From, Subject, MessageID, AutoSubmitted, Text, HTML string
	To                                                  []string
	TLS                                                 bool
	Auth                                                string
}

func receivedOf(t *testing.T, m mailtest.Message) received {
	t.Helper()
	p, err := m.Parse()
	if err != nil {
		t.Fatalf("parse message: %v\n%s", err, m.Data)
	}
	return received{From: m.From, To: m.To, Subject: p.Subject, MessageID: p.Header.Get("Message-Id"),
		AutoSubmitted: p.Header.Get("Auto-Submitted"), Text: p.Text, HTML: p.HTML, TLS: m.TLS, Auth: m.Auth}
}

func wantReceived(tls bool, auth string) received {
	return received{From: "quire@localhost", To: []string{"ann@example.com"}, Subject: testMail.Subject,
		MessageID: "<" + testMail.ID + "@quire>", AutoSubmitted: "auto-generated",
		Text: strings.ReplaceAll(testMail.Text, "\n", "\r\n"), HTML: testMail.HTML, TLS: tls, Auth: auth}
}

// discardSender is NewSender for rawURL, with no sender address of its own,
// no outbox folder and a logger that discards.
func discardSender(t *testing.T, rawURL string) Sender {
	t.Helper()
	s, err := NewSender(rawURL, "", "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// trustingSender is an SMTP sender for srv that trusts its certificate.
func trustingSender(t *testing.T, srv *mailtest.Server) Sender {
	t.Helper()
	s, err := newSMTPSender(srv.URL, DefaultFrom, srv.ClientTLS())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantDelivered sends testMail with s and checks that srv received it as want.
func wantDelivered(t *testing.T, srv *mailtest.Server, s Sender, want received) {
	t.Helper()
	if err := s.Send(t.Context(), testMail); err != nil {
		t.Fatal(err)
	}
	got := receivedOf(t, srv.Wait(t, 1, 5*time.Second)[0])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("received (-want +got):\n%s", diff)
	}
}

// wantRefused sends testMail with s and checks that the send fails (failing
// the test with msg when it does not) and that srv accepted nothing.
func wantRefused(t *testing.T, srv *mailtest.Server, s Sender, msg string) {
	t.Helper()
	if err := s.Send(t.Context(), testMail); err == nil {
		t.Error(msg)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server accepted %d messages", n)
	}
}

func TestSMTPSender(t *testing.T) {
	t.Run("a plain server without auth gets the mail with both parts", func(t *testing.T) {
		srv := mailtest.NewServer(t)
		wantDelivered(t, srv, discardSender(t, srv.URL), wantReceived(false, ""))
	})

	t.Run("smtp upgrades with STARTTLS when offered and authenticates from the URL", func(t *testing.T) {
		srv := mailtest.NewServer(t, mailtest.WithSTARTTLS(), mailtest.WithAuth("quire", "p@ss word"))
		wantDelivered(t, srv, trustingSender(t, srv), wantReceived(true, "quire"))
	})

	t.Run("smtps speaks TLS from the first byte", func(t *testing.T) {
		srv := mailtest.NewServer(t, mailtest.WithImplicitTLS(), mailtest.WithAuth("quire", "secret"))
		if !strings.HasPrefix(srv.URL, "smtps://") {
			t.Fatalf("URL %s", srv.URL)
		}
		wantDelivered(t, srv, trustingSender(t, srv), wantReceived(true, "quire"))
	})

	t.Run("a certificate the system does not trust is refused", func(t *testing.T) {
		srv := mailtest.NewServer(t, mailtest.WithImplicitTLS())
		wantRefused(t, srv, discardSender(t, srv.URL), "sent over TLS to an untrusted certificate")
	})

	t.Run("credentials are never sent unencrypted to a host that is not loopback by name", func(t *testing.T) {
		// 127.0.0.2 is reached over loopback, but the client only knows it
		// by a name that is not "localhost" or "127.0.0.1", as it would a
		// remote server; this one offers no STARTTLS.
		srv := mailtest.NewServerAt(t, "127.0.0.2:0", mailtest.WithAuth("quire", "secret"))
		wantRefused(t, srv, discardSender(t, srv.URL), "sent with a password over plain text")
	})

	t.Run("a wrong password is an error and delivers nothing", func(t *testing.T) {
		srv := mailtest.NewServer(t, mailtest.WithAuth("quire", "secret"))
		wantRefused(t, srv, discardSender(t, strings.Replace(srv.URL, "secret", "wrong", 1)), "no error")
	})
}

func TestNewSender(t *testing.T) {
	for _, c := range []struct{ name, url, from string }{
		{"another scheme", "http://user:hunter22@mail.example.com", ""},
		{"no host", "smtp://user:hunter22@:25", ""},
		{"a port out of range", "smtp://user:hunter22@mail.example.com:70000", ""},
		{"a port that is not a number", "smtp://user:hunter22@mail.example.com:x", ""},
		{"a malformed URL", "smtp://user:hunter22@mail.example.com:25/%zz", ""},
		{"a malformed sender address", "smtp://mail.example.com", "not an address"},
	} {
		t.Run(c.name+" is refused without showing the password", func(t *testing.T) {
			_, err := NewSender(c.url, c.from, "", slog.New(slog.DiscardHandler))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "hunter22") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}

	t.Run("no URL and no folder is refused", func(t *testing.T) {
		if _, err := NewSender("", "", "", slog.New(slog.DiscardHandler)); err == nil {
			t.Error("no error")
		}
	})
}

func TestLocalSender(t *testing.T) {
	t.Run("without a mail server each mail is a private .eml file and one log line with its link", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "outbox")
		var logs bytes.Buffer
		s, err := NewSender("", "Docs <docs@example.com>", dir, slog.New(slog.NewJSONHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a mail sent twice replaces its file
			if err := s.Send(t.Context(), testMail); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if diff := cmp.Diff([]string{testMail.ID + ".eml"}, names); diff != "" {
			t.Fatalf("outbox files (-want +got):\n%s", diff)
		}
		path := filepath.Join(dir, testMail.ID+".eml")
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("file mode %o, want 600", perm)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := mailtest.Message{Data: data}.Parse()
		if err != nil {
			t.Fatal(err)
		}
		got := []string{p.Header.Get("From"), p.Header.Get("To"), p.Subject, p.Text, p.HTML}
		want := []string{`"Docs" <docs@example.com>`, "<ann@example.com>", testMail.Subject,
			strings.ReplaceAll(testMail.Text, "\n", "\r\n"), testMail.HTML}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("file (-want +got):\n%s", diff)
		}
		if !strings.Contains(logs.String(), "reset-password?token=abc") {
			t.Errorf("the log does not show the link:\n%s", logs.String())
		}
	})
}
