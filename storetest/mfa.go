package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"quire"
)

func init() { register("mfa", testMFA) }

func testMFA(t *testing.T, open Opener) {
	t.Run("a TOTP waits until confirmed, and only then counts as a second factor", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		if has, err := s.HasSecondFactor(ctx, u.ID); err != nil || has {
			t.Fatalf("HasSecondFactor before = %v, %v", has, err)
		}
		_, err := s.TOTP(ctx, u.ID)
		wantCode(t, err, quire.ENOTFOUND)
		if err := s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("sealed-1"), CreatedAt: baseTime}); err != nil {
			t.Fatal(err)
		}
		// Begun again: the new secret replaces the waiting one.
		if err := s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("sealed-2"), CreatedAt: baseTime.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		got, err := s.TOTP(ctx, u.ID)
		if err != nil || string(got.Secret) != "sealed-2" || !got.ConfirmedAt.IsZero() || !got.CreatedAt.Equal(baseTime.Add(time.Minute)) {
			t.Fatalf("TOTP = %+v, %v", got, err)
		}
		if has, _ := s.HasSecondFactor(ctx, u.ID); has {
			t.Fatal("a waiting TOTP counts as a second factor")
		}
		au, err := s.AdminUser(ctx, baseTime, u.ID)
		if err != nil || au.MFA {
			t.Fatalf("AdminUser.MFA of a waiting TOTP = %v, %v", au.MFA, err)
		}
		// The earlier secret no longer confirms.
		wantCode(t, s.ConfirmTOTP(ctx, u.ID, []byte("sealed-1"), 100, nil, baseTime), quire.ENOTFOUND)
		var hashes [][]byte
		for i := range 10 {
			hashes = append(hashes, tokenHash(fmt.Sprint("code", i)))
		}
		if err := s.ConfirmTOTP(ctx, u.ID, []byte("sealed-2"), 100, hashes, baseTime.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, err = s.TOTP(ctx, u.ID)
		if err != nil || !got.ConfirmedAt.Equal(baseTime.Add(2*time.Minute)) || got.LastStep != 100 {
			t.Fatalf("confirmed TOTP = %+v, %v", got, err)
		}
		if has, err := s.HasSecondFactor(ctx, u.ID); err != nil || !has {
			t.Fatalf("HasSecondFactor after confirmation = %v, %v", has, err)
		}
		users, err := s.AdminUsers(ctx, baseTime)
		if err != nil || len(users) != 1 || !users[0].MFA {
			t.Fatalf("AdminUsers = %+v, %v", users, err)
		}
		// Confirmed: no second confirmation, no new set-up.
		wantCode(t, s.ConfirmTOTP(ctx, u.ID, []byte("sealed-2"), 101, nil, baseTime), quire.ENOTFOUND)
		wantCode(t, s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("sealed-3"), CreatedAt: baseTime}), quire.EMFAENABLED)
		codes, err := s.RecoveryCodes(ctx, u.ID)
		if err != nil || len(codes) != 10 {
			t.Fatalf("RecoveryCodes = %d, %v", len(codes), err)
		}
		if has, _ := s.HasSecondFactor(ctx, unknownID); has {
			t.Fatal("an unknown user has a second factor")
		}
	})

	t.Run("a passkey counts as a second factor too", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		newPasskey(t, s, u.ID, "Laptop", 9, baseTime)
		if has, err := s.HasSecondFactor(ctx, u.ID); err != nil || !has {
			t.Fatalf("HasSecondFactor with a passkey = %v, %v", has, err)
		}
		if au, err := s.AdminUser(ctx, baseTime, u.ID); err != nil || !au.MFA {
			t.Fatalf("AdminUser.MFA with a passkey = %v, %v", au, err)
		}
	})

	t.Run("a time step is accepted once, and never one older than the last", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		if ok, err := s.UseTOTPStep(ctx, u.ID, 200); err != nil || ok {
			t.Fatalf("UseTOTPStep without a TOTP = %v, %v", ok, err)
		}
		s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("x"), CreatedAt: baseTime})
		if ok, _ := s.UseTOTPStep(ctx, u.ID, 200); ok {
			t.Fatal("a waiting TOTP accepted a step")
		}
		if err := s.ConfirmTOTP(ctx, u.ID, []byte("x"), 100, nil, baseTime); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			step int64
			want bool
		}{{100, false}, {99, false}, {101, true}, {101, false}, {103, true}, {102, false}} {
			if ok, err := s.UseTOTPStep(ctx, u.ID, c.step); err != nil || ok != c.want {
				t.Errorf("UseTOTPStep(%d) = %v, %v; want %v", c.step, ok, err, c.want)
			}
		}
		// Of many requests with the same step, one wins.
		wins := atOnce(8, func() bool {
			ok, err := s.UseTOTPStep(ctx, u.ID, 110)
			if err != nil {
				t.Error(err)
			}
			return ok
		})
		if wins != 1 {
			t.Errorf("%d parallel uses of one step won, want 1", wins)
		}
	})

	t.Run("a recovery code is used once; a new confirmation replaces them all", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		other := newUser(t, s, "bob@example.com", "editor", "")
		s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("x"), CreatedAt: baseTime})
		if err := s.ConfirmTOTP(ctx, u.ID, []byte("x"), 1, [][]byte{tokenHash("a"), tokenHash("b")}, baseTime); err != nil {
			t.Fatal(err)
		}
		codes, _ := s.RecoveryCodes(ctx, u.ID)
		if len(codes) != 2 {
			t.Fatalf("codes = %d", len(codes))
		}
		var idA string
		for _, c := range codes {
			if bytes.Equal(c.CodeHash, tokenHash("a")) {
				idA = c.ID
			}
		}
		if ok, _ := s.UseRecoveryCode(ctx, other.ID, idA, baseTime); ok {
			t.Fatal("another user used the code")
		}
		if ok, err := s.UseRecoveryCode(ctx, u.ID, idA, baseTime); err != nil || !ok {
			t.Fatalf("first use = %v, %v", ok, err)
		}
		if ok, _ := s.UseRecoveryCode(ctx, u.ID, idA, baseTime); ok {
			t.Fatal("a used code was used again")
		}
		codes, _ = s.RecoveryCodes(ctx, u.ID)
		if len(codes) != 1 || !bytes.Equal(codes[0].CodeHash, tokenHash("b")) {
			t.Fatalf("unused codes = %+v", codes)
		}
		// Off, then on again with new codes: the old ones are gone.
		if had, err := s.DeleteTOTP(ctx, u.ID); err != nil || !had {
			t.Fatalf("DeleteTOTP = %v, %v", had, err)
		}
		if codes, _ := s.RecoveryCodes(ctx, u.ID); len(codes) != 0 {
			t.Fatalf("codes after DeleteTOTP = %d", len(codes))
		}
		s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("y"), CreatedAt: baseTime})
		s.ConfirmTOTP(ctx, u.ID, []byte("y"), 1, [][]byte{tokenHash("c")}, baseTime)
		codes, _ = s.RecoveryCodes(ctx, u.ID)
		if len(codes) != 1 || !bytes.Equal(codes[0].CodeHash, tokenHash("c")) {
			t.Fatalf("codes after a new confirmation = %+v", codes)
		}
	})

	t.Run("switching off records its event only when a TOTP was on", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		ev := func() *quire.Event {
			return quire.NewEvent(quire.ActionMFADisabled, baseTime, nil, quire.RequestInfo{}).On(quire.TargetUser, u.ID, u.Name)
		}
		if had, err := s.Recording(ev()).DeleteTOTP(ctx, u.ID); err != nil || had {
			t.Fatalf("DeleteTOTP of nothing = %v, %v", had, err)
		}
		s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("x"), CreatedAt: baseTime})
		if had, err := s.Recording(ev()).DeleteTOTP(ctx, u.ID); err != nil || had {
			t.Fatalf("DeleteTOTP of a waiting set-up = %v, %v", had, err)
		}
		if _, err := s.TOTP(ctx, u.ID); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Fatalf("a waiting set-up survived DeleteTOTP: %v", err)
		}
		s.BeginTOTP(ctx, &quire.TOTP{UserID: u.ID, Secret: []byte("x"), CreatedAt: baseTime})
		s.ConfirmTOTP(ctx, u.ID, []byte("x"), 1, nil, baseTime)
		if had, err := s.Recording(ev()).DeleteTOTP(ctx, u.ID); err != nil || !had {
			t.Fatalf("DeleteTOTP = %v, %v", had, err)
		}
		evs, err := s.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionMFADisabled, Limit: 10})
		if err != nil || len(evs) != 1 {
			t.Fatalf("events = %d, %v; want 1", len(evs), err)
		}
		if has, _ := s.HasSecondFactor(ctx, u.ID); has {
			t.Fatal("second factor after DeleteTOTP")
		}
	})

	t.Run("an mfa token takes a limited number of tries, expires, and is used once", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		tok := &quire.MFAToken{UserID: u.ID, TokenHash: tokenHash("t1"), Timezone: "Europe/Paris",
			CreatedAt: baseTime, ExpiresAt: baseTime.Add(5 * time.Minute)}
		if err := s.CreateMFAToken(ctx, tok); err != nil || tok.ID == "" {
			t.Fatalf("CreateMFAToken = %v (id %q)", err, tok.ID)
		}
		got, err := s.MFATokenByHash(ctx, tokenHash("t1"))
		if err != nil || got.ID != tok.ID || got.UserID != u.ID || got.Timezone != "Europe/Paris" || got.Tries != 0 ||
			!got.ExpiresAt.Equal(tok.ExpiresAt) || !got.UsedAt.IsZero() {
			t.Fatalf("MFATokenByHash = %+v, %v", got, err)
		}
		_, err = s.MFATokenByHash(ctx, tokenHash("nothing"))
		wantCode(t, err, quire.ENOTFOUND)
		for i := range 3 {
			if ok, err := s.TryMFAToken(ctx, tok.ID, baseTime, 3); err != nil || !ok {
				t.Fatalf("try %d = %v, %v", i+1, ok, err)
			}
		}
		if ok, _ := s.TryMFAToken(ctx, tok.ID, baseTime, 3); ok {
			t.Fatal("a fourth try of three was counted")
		}
		if got, _ := s.MFATokenByHash(ctx, tokenHash("t1")); got.Tries != 3 {
			t.Fatalf("tries = %d, want 3", got.Tries)
		}
		tok2 := &quire.MFAToken{UserID: u.ID, TokenHash: tokenHash("t2"), CreatedAt: baseTime, ExpiresAt: baseTime.Add(5 * time.Minute)}
		s.CreateMFAToken(ctx, tok2)
		if ok, _ := s.TryMFAToken(ctx, tok2.ID, baseTime.Add(5*time.Minute), 5); ok {
			t.Fatal("an expired token was tried")
		}
		if ok, err := s.UseMFAToken(ctx, tok2.ID, baseTime); err != nil || !ok {
			t.Fatalf("UseMFAToken = %v, %v", ok, err)
		}
		if ok, _ := s.UseMFAToken(ctx, tok2.ID, baseTime); ok {
			t.Fatal("a token was used twice")
		}
		if ok, _ := s.TryMFAToken(ctx, tok2.ID, baseTime, 5); ok {
			t.Fatal("a used token was tried")
		}
		// A new token deletes the user's ended ones (used, expired).
		tok3 := &quire.MFAToken{UserID: u.ID, TokenHash: tokenHash("t3"), CreatedAt: baseTime.Add(6 * time.Minute),
			ExpiresAt: baseTime.Add(11 * time.Minute)}
		if err := s.CreateMFAToken(ctx, tok3); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"t1", "t2"} {
			_, err := s.MFATokenByHash(ctx, tokenHash(h))
			wantCode(t, err, quire.ENOTFOUND)
		}
		// Switching the TOTP off ends the tokens waiting too.
		s.DeleteTOTP(ctx, u.ID)
		_, err = s.MFATokenByHash(ctx, tokenHash("t3"))
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a withdrawn attempt no longer counts and leaves the consecutive count", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		l := quire.LoginLimits{Limit: 2, Window: time.Minute, LockThreshold: 100, LockDuration: time.Minute}
		for range 5 {
			id, err := s.BeginLogin(ctx, "10.0.0.1", "ann@example.com", baseTime, l)
			if err != nil {
				t.Fatalf("BeginLogin after withdrawals: %v", err)
			}
			if err := s.WithdrawLoginAttempt(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		// The consecutive count is left as it is: two failures, a
		// withdrawn attempt and one more failure lock at a threshold of 3.
		l3 := quire.LoginLimits{Limit: 10, Window: time.Minute, LockThreshold: 3, LockDuration: time.Minute}
		for range 2 {
			if err := s.LoginFailed(ctx, "bob@example.com", baseTime, l3, nil); err != nil {
				t.Fatal(err)
			}
		}
		id := must(s.BeginLogin(ctx, "10.0.0.3", "bob@example.com", baseTime, l3))(t)
		if err := s.WithdrawLoginAttempt(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := s.LoginFailed(ctx, "bob@example.com", baseTime, l3, nil); err != nil {
			t.Fatal(err)
		}
		_, err := s.BeginLogin(ctx, "10.0.0.4", "bob@example.com", baseTime, l3)
		wantCode(t, err, quire.EACCOUNTLOCKED)
	})

	t.Run("the first value of a setting initialised twice stays", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		var (
			wg  sync.WaitGroup
			got = make([]string, 6)
		)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := s.InitSetting(ctx, quire.SettingSecretKey, fmt.Sprint("key-", i))
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			}()
		}
		wg.Wait()
		stored := must(s.Setting(ctx, quire.SettingSecretKey))(t)
		for i, v := range got {
			if v != stored {
				t.Errorf("InitSetting %d = %q, stored %q", i, v, stored)
			}
		}
		if v, _ := s.InitSetting(ctx, quire.SettingSecretKey, "later"); v != stored {
			t.Errorf("a later InitSetting = %q, want %q", v, stored)
		}
	})

	t.Run("a value with NUL is refused by name, and a lookup by one finds nothing, on every engine", func(t *testing.T) {
		s, u := openWithUser(t, open, "ann@example.com", "editor")
		ctx := t.Context()
		p := newPasskey(t, s, u.ID, "Laptop", 1, baseTime)
		const bad = "a\x00b"
		for _, c := range []struct {
			name string
			err  error
			code string
		}{
			{"passkey name", s.CreatePasskey(ctx, &quire.Passkey{UserID: u.ID, CredentialID: []byte{9}, Name: bad,
				PublicKey: []byte{1}, CreatedAt: baseTime}), quire.EVALIDATION},
			{"passkey rename", s.RenamePasskey(ctx, u.ID, p.ID, bad), quire.EVALIDATION},
			{"passkey of a NUL user", s.RenamePasskey(ctx, bad, p.ID, "x"), quire.ENOTFOUND},
			{"mfa token timezone", s.CreateMFAToken(ctx, &quire.MFAToken{UserID: u.ID, TokenHash: tokenHash("t"),
				Timezone: bad, CreatedAt: baseTime, ExpiresAt: baseTime.Add(time.Minute)}), quire.EVALIDATION},
			{"sso flow", s.CreateSSOFlow(ctx, &quire.SSOFlow{StateHash: tokenHash("s"), Nonce: bad, Verifier: "v",
				CreatedAt: baseTime, ExpiresAt: baseTime.Add(time.Minute)}, 0), quire.EVALIDATION},
			{"identity subject", s.LinkIdentity(ctx, &quire.Identity{Issuer: "https://id.example.com", Subject: bad,
				UserID: u.ID, CreatedAt: baseTime}), quire.EVALIDATION},
			{"setting key", func() error { _, err := s.InitSetting(ctx, bad, "v"); return err }(), quire.EVALIDATION},
			{"totp of a NUL user", func() error { _, err := s.TOTP(ctx, bad); return err }(), quire.ENOTFOUND},
		} {
			if got := quire.ErrorCode(c.err); c.err == nil || got != c.code {
				t.Errorf("%s: error %v (code %s), want %s", c.name, c.err, got, c.code)
			}
		}
		if got := listPasskeys(t, s, u.ID); len(got) != 1 || got[0].Name != "Laptop" {
			t.Errorf("passkeys after the refusals = %+v", got)
		}
	})
}
