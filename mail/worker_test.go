package mail_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
	"quire/mail"
	"quire/mail/mailtest"
	"quire/sqlite"
)

func openDB(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queue(t *testing.T, db *sqlite.DB, to, subject string) *quire.Mail {
	t.Helper()
	m := &quire.Mail{To: to, Subject: subject, Text: "Text of " + subject, HTML: "<p>" + subject + "</p>", CreatedAt: time.Now()}
	if err := db.QueueMail(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// start runs a worker until the test ends or stop is called; stop waits
// for Run to return.
func start(t *testing.T, w *mail.Worker) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("worker did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

func fast(extra ...mail.Option) []mail.Option {
	return append([]mail.Option{mail.WithPollInterval(10 * time.Millisecond), mail.WithBackoff(20*time.Millisecond, 80*time.Millisecond)}, extra...)
}

func sender(t *testing.T, srv *mailtest.Server) mail.Sender {
	t.Helper()
	s, err := mail.NewSender(srv.URL, "", "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFor polls cond until it holds or fails the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWorker(t *testing.T) {
	t.Run("a server that refuses the first two deliveries gets the mail on the third attempt", func(t *testing.T) {
		db := openDB(t, filepath.Join(t.TempDir(), "quire.db"))
		srv := mailtest.NewServer(t, mailtest.RefuseFirst(2))
		m := queue(t, db, "ann@example.com", "Hello")
		w := mail.NewWorker(db, sender(t, srv), slog.New(slog.DiscardHandler), fast()...)
		start(t, w)

		got := srv.Wait(t, 1, 10*time.Second)
		if srv.Refused() != 2 || len(got) != 1 || got[0].To[0] != "ann@example.com" {
			t.Fatalf("refused %d, accepted %+v; want 2 refusals, then the mail", srv.Refused(), got)
		}
		var sent *quire.Mail
		waitFor(t, "the mail to be marked sent", func() bool {
			var err error
			sent, err = db.MailByID(t.Context(), m.ID)
			return err == nil && !sent.SentAt.IsZero()
		})
		if sent.Attempts != 3 || sent.Text != "" || sent.HTML != "" || sent.LastError != "" {
			t.Errorf("stored mail %+v, want 3 attempts, no body, no error", sent)
		}
		waitFor(t, "the sent mail to be counted", func() bool { return w.Stats().Sent == 1 })
		if st := w.Stats(); st != (mail.Stats{Sent: 1, Retried: 2}) {
			t.Errorf("worker counts %+v, want 1 sent after 2 retried attempts", st)
		}
	})

	t.Run("a mail the server keeps refusing is given up after the last attempt", func(t *testing.T) {
		db := openDB(t, filepath.Join(t.TempDir(), "quire.db"))
		srv := mailtest.NewServer(t, mailtest.RefuseFirst(1000))
		m := queue(t, db, "ann@example.com", "Hello")
		w := mail.NewWorker(db, sender(t, srv), slog.New(slog.DiscardHandler), fast(mail.WithMaxAttempts(3))...)
		start(t, w)

		var got *quire.Mail
		waitFor(t, "the mail to be given up", func() bool {
			var err error
			got, err = db.MailByID(t.Context(), m.ID)
			return err == nil && got.Attempts == 3 && got.NextTryAt.IsZero()
		})
		time.Sleep(100 * time.Millisecond) // several polls: none may try it again
		if n := srv.Refused(); n != 3 {
			t.Errorf("server saw %d attempts, want 3", n)
		}
		if !strings.Contains(got.LastError, "451") || got.Text != "" || !got.SentAt.IsZero() {
			t.Errorf("given-up mail %+v, want the 451 recorded and no body", got)
		}
		waitFor(t, "the given-up mail to be counted", func() bool { return w.Stats().GivenUp == 1 })
		if st := w.Stats(); st != (mail.Stats{Retried: 2, GivenUp: 1}) {
			t.Errorf("worker counts %+v, want 2 retried attempts, then given up", st)
		}
	})

	t.Run("a worker stopped mid-queue and one restarted on the same database deliver every mail exactly once", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "quire.db")
		db := openDB(t, path)
		const n = 20
		var want []string
		for i := range n {
			subject := fmt.Sprintf("Mail %02d", i)
			queue(t, db, fmt.Sprintf("u%02d@example.com", i), subject)
			want = append(want, subject)
		}
		srv := mailtest.NewServer(t)
		stop := start(t, mail.NewWorker(db, sender(t, srv), slog.New(slog.DiscardHandler), fast()...))
		// Stop the worker from inside the server while it delivers the
		// 7th mail: it must finish that one and take no other.
		stopped := make(chan struct{})
		srv.OnData(func(n int) {
			if n == 7 {
				go func() { stop(); close(stopped) }()
			}
		})
		<-stopped
		if got := len(srv.Messages()); got < 7 || got >= n {
			t.Fatalf("%d delivered when the first worker stopped, want 7 or a few more, not all", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		db2 := openDB(t, path)
		start(t, mail.NewWorker(db2, sender(t, srv), slog.New(slog.DiscardHandler), fast()...))
		srv.Wait(t, n, 10*time.Second)
		time.Sleep(100 * time.Millisecond) // several polls: nothing more may come
		var got []string
		for _, m := range srv.Messages() {
			p, err := m.Parse()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Subject)
		}
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("delivered subjects (-want +got):\n%s", diff)
		}
		left, err := db2.ClaimMail(t.Context(), time.Now().Add(time.Hour), time.Minute, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			t.Errorf("%d mails still due after delivery", len(left))
		}
	})
}
