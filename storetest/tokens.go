package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() {
	register("tokens", testTokens)
	register("reset requests", testResetRequests)
	register("redeem requests", testRedeemRequests)
}

func newToken(t *testing.T, s quire.Store, userID string, purpose quire.TokenPurpose, secret string, m *quire.Mail) *quire.OneTimeToken {
	t.Helper()
	tok := &quire.OneTimeToken{
		UserID:    userID,
		Purpose:   purpose,
		TokenHash: tokenHash(secret),
		CreatedAt: baseTime,
		ExpiresAt: baseTime.Add(time.Hour),
	}
	if err := s.CreateToken(t.Context(), tok, m); err != nil {
		t.Fatalf("create token: %v", err)
	}
	if tok.ID == "" {
		t.Fatal("CreateToken did not fill the ID")
	}
	return tok
}

func newInvitedUser(t *testing.T, s quire.Store, email string) *quire.User {
	t.Helper()
	u := &quire.User{Email: email, Name: "Invited " + email, Role: quire.Role{Key: "viewer"}, Status: quire.UserInvited}
	if err := s.CreateUser(t.Context(), u); err != nil {
		t.Fatalf("create invited user %s: %v", email, err)
	}
	return u
}

const newHash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdG5ld3NhbHQ$bmV3aGFzaG5ld2hhc2huZXdoYXNobmV3aGFzaA"

func testTokens(t *testing.T, open Opener) {
	t.Run("a token is found by its hash and purpose only", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		tok := newToken(t, s, u.ID, quire.PurposeReset, "secret-1", nil)
		got := must(s.TokenByHash(t.Context(), quire.PurposeReset, tokenHash("secret-1")))(t)
		if diff := cmp.Diff(tok, got); diff != "" {
			t.Errorf("token (-created +read):\n%s", diff)
		}
		_, err := s.TokenByHash(t.Context(), quire.PurposeSetup, tokenHash("secret-1"))
		wantCode(t, err, quire.ENOTFOUND)
		_, err = s.TokenByHash(t.Context(), quire.PurposeReset, tokenHash("secret-2"))
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a token's mail is queued with it", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		m := &quire.Mail{To: u.Email, Subject: "Reset", Text: "text", HTML: "<p>html</p>", CreatedAt: baseTime}
		newToken(t, s, u.ID, quire.PurposeReset, "secret-1", m)
		if m.ID == "" {
			t.Fatal("CreateToken did not fill the mail's ID")
		}
		got := claimAll(t, s, baseTime)
		if len(got) != 1 || got[0].ID != m.ID || got[0].Text != "text" || got[0].To != u.Email {
			t.Fatalf("claimed %+v, want the mail %s", got, m.ID)
		}
	})

	t.Run("a reset redeems once, activates the password, revokes sessions and clears failures", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		ctx := t.Context()
		sess := &quire.Session{UserID: u.ID, TokenHash: tokenHash("session"), CreatedAt: baseTime,
			ExpiresAt: baseTime.Add(time.Hour), LastUsedAt: baseTime}
		if err := s.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		lim := quire.LoginLimits{Limit: 1, Window: time.Hour, LockThreshold: 1, LockDuration: time.Hour}
		if _, err := s.BeginLogin(ctx, "10.0.0.1", u.Email, baseTime, lim); err != nil {
			t.Fatal(err)
		}
		if err := s.LoginFailed(ctx, u.Email, baseTime, lim, nil); err != nil {
			t.Fatal(err)
		}
		_, err := s.BeginLogin(ctx, "10.0.0.1", u.Email, baseTime, lim)
		wantCode(t, err, quire.EACCOUNTLOCKED)

		tok := newToken(t, s, u.ID, quire.PurposeReset, "secret-1", nil)
		other := newToken(t, s, u.ID, quire.PurposeReset, "secret-2", nil)
		at := baseTime.Add(time.Minute)
		got := must(s.RedeemToken(ctx, quire.PurposeReset, tokenHash("secret-1"), newHash, at))(t)
		if got.ID != u.ID || got.PasswordHash != newHash || got.Status != quire.UserActive {
			t.Errorf("redeemed user = %+v, want %s active with the new hash", got, u.ID)
		}
		used := must(s.TokenByHash(ctx, quire.PurposeReset, tok.TokenHash))(t)
		if !used.UsedAt.Equal(at) {
			t.Errorf("UsedAt = %v, want %v", used.UsedAt, at)
		}
		sessNow, _, err := s.SessionByTokenHash(ctx, sess.TokenHash)
		if err != nil {
			t.Fatal(err)
		}
		if !sessNow.RevokedAt.Equal(at) {
			t.Errorf("session RevokedAt = %v, want %v", sessNow.RevokedAt, at)
		}
		if _, err := s.BeginLogin(ctx, "10.0.0.1", u.Email, at, lim); err != nil {
			t.Errorf("sign-in after the reset: %v, want lock and window cleared", err)
		}

		_, err = s.RedeemToken(ctx, quire.PurposeReset, tokenHash("secret-1"), newHash, at)
		wantCode(t, err, quire.EINVALIDTOKEN)
		_, err = s.RedeemToken(ctx, quire.PurposeReset, other.TokenHash, newHash, at)
		wantCode(t, err, quire.EINVALIDTOKEN)
	})

	t.Run("a password change voids every unused token of the user, and only of that user", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		ctx := t.Context()
		other := newUser(t, s, "bob@example.com", "viewer", "")
		newToken(t, s, u.ID, quire.PurposeReset, "secret-1", nil)
		newToken(t, s, u.ID, quire.PurposeReset, "secret-2", nil)
		newToken(t, s, other.ID, quire.PurposeReset, "secret-3", nil)
		at := baseTime.Add(time.Minute)
		if err := s.SetPassword(ctx, u.ID, newHash, at); err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"secret-1", "secret-2"} {
			tok := must(s.TokenByHash(ctx, quire.PurposeReset, tokenHash(secret)))(t)
			if !tok.UsedAt.Equal(at) {
				t.Errorf("%s UsedAt = %v, want %v", secret, tok.UsedAt, at)
			}
			_, err := s.RedeemToken(ctx, quire.PurposeReset, tokenHash(secret), "hash-3", at)
			wantCode(t, err, quire.EINVALIDTOKEN)
		}
		if _, err := s.RedeemToken(ctx, quire.PurposeReset, tokenHash("secret-3"), "hash-3", at); err != nil {
			t.Errorf("another user's link after the change: %v, want it to work", err)
		}
		got := must(s.UserByID(ctx, u.ID))(t)
		if got.PasswordHash != newHash {
			t.Errorf("hash %q, want the one SetPassword stored", got.PasswordHash)
		}
	})

	t.Run("a token is refused when unknown, expired, of another purpose or for a user in the wrong state", func(t *testing.T) {
		s, active := openWithUser(t, open, "ann@example.com", "viewer")
		ctx := t.Context()
		invited := newInvitedUser(t, s, "bob@example.com")
		disabled := newUser(t, s, "cy@example.com", "viewer", "")
		newToken(t, s, active.ID, quire.PurposeReset, "reset-active", nil)
		newToken(t, s, active.ID, quire.PurposeSetup, "setup-active", nil)
		newToken(t, s, invited.ID, quire.PurposeReset, "reset-invited", nil)
		newToken(t, s, disabled.ID, quire.PurposeReset, "reset-disabled", nil)
		if err := s.DisableUser(ctx, disabled.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name    string
			purpose quire.TokenPurpose
			secret  string
			at      time.Time
		}{
			{"unknown", quire.PurposeReset, "nope", baseTime},
			{"expired at its expiry", quire.PurposeReset, "reset-active", baseTime.Add(time.Hour)},
			{"of another purpose", quire.PurposeSetup, "reset-active", baseTime},
			{"setup for an active user", quire.PurposeSetup, "setup-active", baseTime},
			{"reset for an invited user", quire.PurposeReset, "reset-invited", baseTime},
			{"reset for a disabled user", quire.PurposeReset, "reset-disabled", baseTime},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := s.RedeemToken(ctx, c.purpose, tokenHash(c.secret), newHash, c.at)
				wantCode(t, err, quire.EINVALIDTOKEN)
			})
		}
		for _, u := range []*quire.User{active, invited, disabled} {
			got := must(s.UserByID(ctx, u.ID))(t)
			if got.PasswordHash == newHash {
				t.Errorf("%s: a refused token changed the password", u.Email)
			}
		}
		// The refusals used nothing up: the reset token still works.
		if _, err := s.RedeemToken(ctx, quire.PurposeReset, tokenHash("reset-active"), newHash,
			baseTime.Add(time.Hour-time.Microsecond)); err != nil {
			t.Errorf("valid token after refusals: %v", err)
		}
	})

	t.Run("a setup token activates an invited user", func(t *testing.T) {
		s := open(t)
		u := newInvitedUser(t, s, "bob@example.com")
		newToken(t, s, u.ID, quire.PurposeSetup, "setup", nil)
		got := must(s.RedeemToken(t.Context(), quire.PurposeSetup, tokenHash("setup"), newHash, baseTime))(t)
		if got.Status != quire.UserActive || got.PasswordHash != newHash {
			t.Errorf("user after setup = %+v, want active with the new hash", got)
		}
		_, err := s.RedeemToken(t.Context(), quire.PurposeSetup, tokenHash("setup"), newHash, baseTime)
		wantCode(t, err, quire.EINVALIDTOKEN)
	})

	t.Run("of parallel redemptions of one token exactly one succeeds", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		newToken(t, s, u.ID, quire.PurposeReset, "secret", nil)
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = s.RedeemToken(t.Context(), quire.PurposeReset, tokenHash("secret"), newHash, baseTime)
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case quire.ErrorCode(err) != quire.EINVALIDTOKEN:
				t.Errorf("redeem: %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d redemptions succeeded, want 1", ok)
		}
	})
}

// resetRequest is one RequestReset call with fresh token and mail.
func resetRequest(t *testing.T, s quire.Store, addr, email string, at time.Time, perAddr, perEmail int) (bool, *quire.OneTimeToken, *quire.Mail, error) {
	t.Helper()
	tok := &quire.OneTimeToken{Purpose: quire.PurposeReset, TokenHash: tokenHash(fmt.Sprintf("%s %s %v", addr, email, at.UnixNano())),
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	m := &quire.Mail{To: email, Subject: "Reset", Text: "link", HTML: "<a>link</a>", CreatedAt: at}
	created, err := s.RequestReset(t.Context(), addr, email, at, time.Hour, perAddr, perEmail, tok, m)
	return created, tok, m, err
}

func testResetRequests(t *testing.T, open Opener) {
	t.Run("an active user's request creates the token and queues the mail", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		created, tok, m, err := resetRequest(t, s, "10.0.0.1", u.Email, baseTime, 10, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !created || tok.ID == "" || tok.UserID != u.ID || m.ID == "" {
			t.Fatalf("created = %v, token %+v, mail ID %q; want a token of %s and a mail", created, tok, m.ID, u.ID)
		}
		got := must(s.TokenByHash(t.Context(), quire.PurposeReset, tok.TokenHash))(t)
		if diff := cmp.Diff(tok, got); diff != "" {
			t.Errorf("token (-sent +stored):\n%s", diff)
		}
		mails := claimAll(t, s, baseTime)
		if len(mails) != 1 || mails[0].ID != m.ID || mails[0].To != u.Email || mails[0].Text != "link" {
			t.Errorf("claimed %+v, want the one mail to %s", mails, u.Email)
		}
	})

	t.Run("no token or mail for an unknown, invited or disabled email", func(t *testing.T) {
		s := open(t)
		invited := newInvitedUser(t, s, "bob@example.com")
		disabled := newUser(t, s, "cy@example.com", "viewer", "")
		if err := s.DisableUser(t.Context(), disabled.ID, baseTime); err != nil {
			t.Fatal(err)
		}
		for _, email := range []string{"nobody@example.com", invited.Email, disabled.Email} {
			created, tok, m, err := resetRequest(t, s, "10.0.0.1", email, baseTime, 10, 3)
			if err != nil {
				t.Fatal(err)
			}
			if created || tok.ID != "" || m.ID != "" {
				t.Errorf("%s: created = %v (token %q, mail %q), want nothing", email, created, tok.ID, m.ID)
			}
			_, err = s.TokenByHash(t.Context(), quire.PurposeReset, tok.TokenHash)
			wantCode(t, err, quire.ENOTFOUND)
		}
		if mails := claimAll(t, s, baseTime); len(mails) != 0 {
			t.Errorf("claimed %d mails, want none", len(mails))
		}
	})

	t.Run("an email gets at most perEmail mails in the window, counted whether or not it has an account", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "viewer")
		var got []bool
		for i := range 4 {
			// Each from another address, so only the per-email cap applies.
			created, _, _, err := resetRequest(t, s, fmt.Sprintf("10.0.0.%d", i), u.Email, baseTime.Add(time.Duration(i)*time.Second), 10, 2)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, created)
		}
		if diff := cmp.Diff([]bool{true, true, false, false}, got); diff != "" {
			t.Errorf("created per request (-want +got):\n%s", diff)
		}
		created, _, _, err := resetRequest(t, s, "10.0.0.9", u.Email, baseTime.Add(time.Hour+2*time.Second), 10, 2)
		if err != nil || !created {
			t.Errorf("after the window: created = %v, err = %v; want a new token", created, err)
		}
		if mails := claimAll(t, s, baseTime); len(mails) != 3 {
			t.Errorf("claimed %d mails, want 3", len(mails))
		}
	})

	t.Run("an address is refused after perAddr requests until the oldest leaves the window", func(t *testing.T) {
		s := open(t)
		newUser(t, s, "ann@example.com", "viewer", "")
		for i := range 3 {
			if _, _, _, err := resetRequest(t, s, "10.0.0.1", fmt.Sprintf("u%d@example.com", i), baseTime.Add(time.Duration(i)*time.Minute), 3, 3); err != nil {
				t.Fatal(err)
			}
		}
		at := baseTime.Add(10 * time.Minute)
		created, tok, _, err := resetRequest(t, s, "10.0.0.1", "ann@example.com", at, 3, 3)
		wantCode(t, err, quire.ETOOMANYATTEMPTS)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.RetryAfter != 50*time.Minute {
			t.Errorf("refusal %#v, want RetryAfter 50m", err)
		}
		if created {
			t.Error("a refused request created a token")
		}
		_, err = s.TokenByHash(t.Context(), quire.PurposeReset, tok.TokenHash)
		wantCode(t, err, quire.ENOTFOUND)
		if _, _, _, err := resetRequest(t, s, "10.0.0.2", "ann@example.com", at, 3, 3); err != nil {
			t.Errorf("another address: %v, want accepted", err)
		}
		if _, _, _, err := resetRequest(t, s, "10.0.0.1", "ann@example.com", baseTime.Add(time.Hour+time.Second), 3, 3); err != nil {
			t.Errorf("after the oldest left the window: %v, want accepted", err)
		}
	})
}

func testRedeemRequests(t *testing.T, open Opener) {
	t.Run("an address is refused after perAddr requests until the oldest leaves the window", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		for i := range 3 {
			if err := s.BeginRedeem(ctx, "10.0.0.1", baseTime.Add(time.Duration(i)*time.Minute), 15*time.Minute, 3); err != nil {
				t.Fatal(err)
			}
		}
		at := baseTime.Add(10 * time.Minute)
		err := s.BeginRedeem(ctx, "10.0.0.1", at, 15*time.Minute, 3)
		wantCode(t, err, quire.ETOOMANYATTEMPTS)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.RetryAfter != 5*time.Minute || qe.Message != "Too many login attempts, please try again later." {
			t.Errorf("refusal %#v, want RetryAfter 5m and the contract's message", err)
		}
		if err := s.BeginRedeem(ctx, "10.0.0.2", at, 15*time.Minute, 3); err != nil {
			t.Errorf("another address: %v, want accepted", err)
		}
		// The refusal recorded nothing: once the oldest has left the
		// window, exactly one more is let past.
		later := baseTime.Add(15*time.Minute + time.Second)
		if err := s.BeginRedeem(ctx, "10.0.0.1", later, 15*time.Minute, 3); err != nil {
			t.Errorf("after the oldest left the window: %v, want accepted", err)
		}
		wantCode(t, s.BeginRedeem(ctx, "10.0.0.1", later, 15*time.Minute, 3), quire.ETOOMANYATTEMPTS)
	})

	t.Run("under a lowered limit the retry waits for enough requests to leave the window, not the oldest", func(t *testing.T) {
		s := open(t)
		for i := range 5 {
			if err := s.BeginRedeem(t.Context(), "10.0.0.1", baseTime.Add(time.Duration(i)*time.Minute), 15*time.Minute, 5); err != nil {
				t.Fatal(err)
			}
		}
		// Under a limit of 3, a place is free once the requests at 0, 1
		// and 2 minutes have left: at 17 minutes.
		err := s.BeginRedeem(t.Context(), "10.0.0.1", baseTime.Add(10*time.Minute), 15*time.Minute, 3)
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Code != quire.ETOOMANYATTEMPTS || qe.RetryAfter != 7*time.Minute {
			t.Errorf("refusal %#v, want TOO_MANY_ATTEMPTS with RetryAfter 7m", err)
		}
	})

	t.Run("forgot-password requests and redemptions are counted apart", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		if err := s.BeginRedeem(ctx, "10.0.0.1", baseTime, time.Hour, 1); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := resetRequest(t, s, "10.0.0.1", "ann@example.com", baseTime, 1, 1); err != nil {
			t.Errorf("a forgot-password request after a redemption: %v, want accepted", err)
		}
		wantCode(t, s.BeginRedeem(ctx, "10.0.0.1", baseTime, time.Hour, 1), quire.ETOOMANYATTEMPTS)
	})

	t.Run("of parallel requests from one address at most perAddr get past", func(t *testing.T) {
		s := open(t)
		passed := atOnce(20, func() bool {
			err := s.BeginRedeem(t.Context(), "10.0.0.1", baseTime, time.Hour, 5)
			if err != nil && quire.ErrorCode(err) != quire.ETOOMANYATTEMPTS {
				t.Errorf("BeginRedeem: %v", err)
			}
			return err == nil
		})
		if passed != 5 {
			t.Errorf("%d of 20 parallel requests got past, want 5", passed)
		}
	})
}
