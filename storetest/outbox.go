package storetest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() {
	register("outbox", testOutbox)
}

// claimAll claims every mail due at now with a long lease.
func claimAll(t *testing.T, s quire.Store, now time.Time) []quire.Mail {
	t.Helper()
	mails, err := s.ClaimMail(t.Context(), now, time.Hour, 1000)
	if err != nil {
		t.Fatalf("claim mail: %v", err)
	}
	return mails
}

func queue(t *testing.T, s quire.Store, to string, at time.Time) *quire.Mail {
	t.Helper()
	m := &quire.Mail{To: to, Subject: "Subject " + to, Text: "Text " + to, HTML: "<p>" + to + "</p>", CreatedAt: at}
	if err := s.QueueMail(t.Context(), m); err != nil {
		t.Fatalf("queue mail: %v", err)
	}
	if m.ID == "" {
		t.Fatal("QueueMail did not fill the ID")
	}
	return m
}

func ids(mails []quire.Mail) []string {
	return pluck(mails, func(m quire.Mail) string { return m.ID })
}

func testOutbox(t *testing.T, open Opener) {
	t.Run("a queued mail is due at once and is claimed with its bodies and one attempt", func(t *testing.T) {
		s := open(t)
		m := queue(t, s, "ann@example.com", baseTime)
		// A worker whose clock is far behind the mail's creation still
		// sees it due: queued mail never waits for a clock.
		got := claimAll(t, s, baseTime.Add(-24*time.Hour))
		want := []quire.Mail{{ID: m.ID, To: m.To, Subject: m.Subject, Text: m.Text, HTML: m.HTML, CreatedAt: baseTime,
			Attempts: 1, NextTryAt: baseTime.Add(-23 * time.Hour)}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("claimed (-want +got):\n%s", diff)
		}
	})

	t.Run("a claimed mail is hidden until its lease ends", func(t *testing.T) {
		s := open(t)
		m := queue(t, s, "ann@example.com", baseTime)
		if got := claimAll(t, s, baseTime); len(got) != 1 {
			t.Fatalf("claimed %d, want 1", len(got))
		}
		if got := claimAll(t, s, baseTime.Add(time.Hour-time.Microsecond)); len(got) != 0 {
			t.Errorf("claimed %d during the lease, want 0", len(got))
		}
		got := claimAll(t, s, baseTime.Add(time.Hour))
		if len(got) != 1 || got[0].ID != m.ID || got[0].Attempts != 2 {
			t.Errorf("after the lease claimed %+v, want %s on its second attempt", got, m.ID)
		}
	})

	t.Run("claims take the mails in the order they fell due, up to n", func(t *testing.T) {
		s := open(t)
		var want []string
		for i := range 5 {
			want = append(want, queue(t, s, fmt.Sprintf("u%d@example.com", i), baseTime.Add(time.Duration(i)*time.Second)).ID)
		}
		first := must(s.ClaimMail(t.Context(), baseTime, time.Hour, 3))(t)
		rest := claimAll(t, s, baseTime)
		if diff := cmp.Diff(want, append(ids(first), ids(rest)...)); diff != "" {
			t.Errorf("claim order (-want +got):\n%s", diff)
		}
	})

	t.Run("a sent mail is never claimed again and keeps no body", func(t *testing.T) {
		s, m := openWithClaimedMail(t, open)
		at := baseTime.Add(time.Second)
		if err := s.MailSent(t.Context(), m.ID, at); err != nil {
			t.Fatal(err)
		}
		if got := claimAll(t, s, baseTime.Add(48*time.Hour)); len(got) != 0 {
			t.Errorf("claimed %d after it was sent, want 0", len(got))
		}
		got := must(s.MailByID(t.Context(), m.ID))(t)
		want := &quire.Mail{ID: m.ID, To: m.To, Subject: m.Subject, CreatedAt: baseTime, Attempts: 1, SentAt: at}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sent mail (-want +got):\n%s", diff)
		}
	})

	t.Run("a failed mail waits for its next try and records why", func(t *testing.T) {
		s, m := openWithClaimedMail(t, open)
		next := baseTime.Add(time.Minute)
		if err := s.MailFailed(t.Context(), m.ID, "451 try later", next); err != nil {
			t.Fatal(err)
		}
		if got := claimAll(t, s, next.Add(-time.Microsecond)); len(got) != 0 {
			t.Errorf("claimed %d before the next try, want 0", len(got))
		}
		got := claimAll(t, s, next)
		if len(got) != 1 || got[0].LastError != "451 try later" || got[0].Attempts != 2 || got[0].Text != m.Text {
			t.Errorf("at the next try claimed %+v, want the mail with its error, body and 2 attempts", got)
		}
	})

	t.Run("a mail given up is never claimed again and keeps no body", func(t *testing.T) {
		s, m := openWithClaimedMail(t, open)
		if err := s.MailFailed(t.Context(), m.ID, "550 no such user", time.Time{}); err != nil {
			t.Fatal(err)
		}
		if got := claimAll(t, s, baseTime.Add(48*time.Hour)); len(got) != 0 {
			t.Errorf("claimed %d after giving up, want 0", len(got))
		}
		got := must(s.MailByID(t.Context(), m.ID))(t)
		want := &quire.Mail{ID: m.ID, To: m.To, Subject: m.Subject, CreatedAt: baseTime, Attempts: 1, LastError: "550 no such user"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("given-up mail (-want +got):\n%s", diff)
		}
	})

	t.Run("an unknown mail is not found", func(t *testing.T) {
		s := open(t)
		wantCode(t, s.MailSent(t.Context(), "0190a1b2-0000-7000-8000-000000000000", baseTime), quire.ENOTFOUND)
		wantCode(t, s.MailFailed(t.Context(), "0190a1b2-0000-7000-8000-000000000000", "x", baseTime), quire.ENOTFOUND)
		_, err := s.MailByID(t.Context(), "0190a1b2-0000-7000-8000-000000000000")
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a NUL in a mail is kept as U+FFFD, and a mail without a time is stamped when queued", func(t *testing.T) {
		s := open(t)
		m := &quire.Mail{To: "ann@example.com", Subject: "a\x00b", Text: "t\x00", HTML: "<p>\x00</p>"}
		if err := s.QueueMail(t.Context(), m); err != nil {
			t.Fatal(err)
		}
		if err := s.MailFailed(t.Context(), m.ID, "451 \x00", baseTime); err != nil {
			t.Fatal(err)
		}
		got := must(s.MailByID(t.Context(), m.ID))(t)
		if got.CreatedAt.IsZero() {
			t.Error("a mail queued without a time has none")
		}
		want := &quire.Mail{ID: m.ID, To: m.To, Subject: "a\uFFFDb", Text: "t\uFFFD", HTML: "<p>\uFFFD</p>",
			CreatedAt: got.CreatedAt, NextTryAt: baseTime, LastError: "451 \uFFFD"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mail (-want +got):\n%s", diff)
		}
		_, err := s.MailByID(t.Context(), m.ID+"\x00")
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("parallel workers never claim the same mail", func(t *testing.T) {
		s := open(t)
		var want []string
		for i := range 40 {
			want = append(want, queue(t, s, fmt.Sprintf("u%d@example.com", i), baseTime).ID)
		}
		var (
			mu  sync.Mutex
			got []string
			wg  sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				// Bounded, so that a store that never hides a claimed mail
				// fails the test rather than hangs it.
				for range 40 {
					mails, err := s.ClaimMail(t.Context(), baseTime, time.Hour, 3)
					if err != nil {
						t.Errorf("claim: %v", err)
						return
					}
					if len(mails) == 0 {
						return
					}
					mu.Lock()
					got = append(got, ids(mails)...)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		sort.Strings(want)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("claimed mails (-want +got):\n%s", diff)
		}
	})
}

// openWithClaimedMail opens a fresh store holding one mail, to
// ann@example.com, queued at baseTime and claimed (in flight) at once.
func openWithClaimedMail(t *testing.T, open Opener) (quire.Store, *quire.Mail) {
	t.Helper()
	s := open(t)
	m := queue(t, s, "ann@example.com", baseTime)
	if got := claimAll(t, s, baseTime); len(got) != 1 {
		t.Fatalf("claimed %d, want the one queued", len(got))
	}
	return s, m
}
