package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire"
)

func init() {
	register("passkeys", testPasskeys)
	register("passkey ceremonies", testPasskeyCeremonies)
}

func newPasskey(t *testing.T, s quire.Store, userID, name string, credID byte, created time.Time) *quire.Passkey {
	t.Helper()
	p := &quire.Passkey{UserID: userID, CredentialID: []byte{credID, 1, 2, 3}, Name: name,
		PublicKey: []byte{0xa5, 1, 2, credID}, SignCount: 7, Transports: []string{"internal", "hybrid"},
		AAGUID: make([]byte, 16), Flags: 0x1d, CreatedAt: created}
	if err := s.CreatePasskey(t.Context(), p); err != nil {
		t.Fatalf("create passkey: %v", err)
	}
	if p.ID == "" {
		t.Fatal("CreatePasskey left ID empty")
	}
	return p
}

func listPasskeys(t *testing.T, s quire.Store, userID string) []quire.Passkey {
	t.Helper()
	ps := must(s.Passkeys(t.Context(), userID))(t)
	return ps
}

func testPasskeys(t *testing.T, open Opener) {
	t.Run("a passkey is kept with every field and found by its credential id with its user", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		p := newPasskey(t, s, u.ID, "Laptop", 1, baseTime.Add(123456*time.Microsecond))
		if err := s.SetUserRole(ctx, u.ID, "viewer"); err != nil {
			t.Fatal(err)
		}
		got, user, err := s.PasskeyByCredentialID(ctx, []byte{1, 1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*p, *got); diff != "" {
			t.Errorf("passkey (-want +got):\n%s", diff)
		}
		if user.ID != u.ID || user.Role.Key != "viewer" || user.Email != u.Email {
			t.Errorf("user = %s %s %s, want %s viewer %s", user.ID, user.Role.Key, user.Email, u.ID, u.Email)
		}
		if diff := cmp.Diff([]quire.Passkey{*p}, listPasskeys(t, s, u.ID)); diff != "" {
			t.Errorf("list (-want +got):\n%s", diff)
		}
	})

	t.Run("an unknown credential id is not found", func(t *testing.T) {
		s := open(t)
		_, _, err := s.PasskeyByCredentialID(t.Context(), []byte("nothing"))
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a credential id registered twice is a conflict, whoever registers it", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		bob := newUser(t, s, "bob@example.com", "editor", "")
		newPasskey(t, s, ada.ID, "Laptop", 1, baseTime)
		p := &quire.Passkey{UserID: bob.ID, CredentialID: []byte{1, 1, 2, 3}, Name: "Mine", PublicKey: []byte{1}, CreatedAt: baseTime}
		wantCode(t, s.CreatePasskey(t.Context(), p), quire.ECONFLICT)
		if got := listPasskeys(t, s, bob.ID); len(got) != 0 {
			t.Errorf("bob's passkeys = %v, want none", got)
		}
	})

	t.Run("the list holds the user's passkeys alone, oldest first", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		bob := newUser(t, s, "bob@example.com", "editor", "")
		second := newPasskey(t, s, ada.ID, "Phone", 2, baseTime.Add(time.Minute))
		first := newPasskey(t, s, ada.ID, "Laptop", 1, baseTime)
		newPasskey(t, s, bob.ID, "Key", 3, baseTime)
		var names []string
		for _, p := range listPasskeys(t, s, ada.ID) {
			names = append(names, p.ID)
		}
		if diff := cmp.Diff([]string{first.ID, second.ID}, names); diff != "" {
			t.Errorf("ids (-want +got):\n%s", diff)
		}
		if got := listPasskeys(t, s, unknownID); len(got) != 0 {
			t.Errorf("unknown user's passkeys = %v", got)
		}
	})

	t.Run("a passkey is renamed and removed by its user only", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		p := newPasskey(t, s, ada.ID, "Laptop", 1, baseTime)
		wantCode(t, s.RenamePasskey(ctx, bob.ID, p.ID, "Stolen"), quire.ENOTFOUND)
		wantCode(t, s.DeletePasskey(ctx, bob.ID, p.ID), quire.ENOTFOUND)
		wantCode(t, s.RenamePasskey(ctx, ada.ID, unknownID, "X"), quire.ENOTFOUND)
		if err := s.RenamePasskey(ctx, ada.ID, p.ID, "Work laptop"); err != nil {
			t.Fatal(err)
		}
		if got := listPasskeys(t, s, ada.ID); len(got) != 1 || got[0].Name != "Work laptop" {
			t.Fatalf("after rename: %+v", got)
		}
		if err := s.DeletePasskey(ctx, ada.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		if got := listPasskeys(t, s, ada.ID); len(got) != 0 {
			t.Fatalf("after delete: %+v", got)
		}
		wantCode(t, s.DeletePasskey(ctx, ada.ID, p.ID), quire.ENOTFOUND)
		_, _, err := s.PasskeyByCredentialID(ctx, p.CredentialID)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a removal records its event, a refused one none", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		p := newPasskey(t, s, ada.ID, "Laptop", 1, baseTime)
		ev := func() *quire.Event {
			return quire.NewEvent(quire.ActionPasskeyRemoved, baseTime, &quire.EventActor{ID: ada.ID, Name: ada.Name},
				quire.RequestInfo{}).On(quire.TargetPasskey, p.ID, p.Name)
		}
		wantCode(t, s.Recording(ev()).DeletePasskey(ctx, ada.ID, unknownID), quire.ENOTFOUND)
		if err := s.Recording(ev()).DeletePasskey(ctx, ada.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		evs := must(s.AuditEvents(ctx, quire.AuditFilter{Action: quire.ActionPasskeyRemoved, Limit: 10}))(t)
		if len(evs) != 1 || evs[0].Target == nil || evs[0].Target.ID != p.ID {
			t.Errorf("events = %+v, want one naming the passkey", evs)
		}
	})

	t.Run("a sign-in records the sign count, the flags and the time, never moving the time back", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		p := newPasskey(t, s, ada.ID, "Laptop", 1, baseTime)
		if err := s.PasskeyUsed(ctx, p.ID, 9, 0x05, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.PasskeyUsed(ctx, p.ID, 10, 0x05, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got := listPasskeys(t, s, ada.ID)[0]
		if got.SignCount != 10 || got.Flags != 0x05 || !got.LastUsedAt.Equal(baseTime.Add(time.Hour)) {
			t.Errorf("after use: count %d flags %#x last used %v", got.SignCount, got.Flags, got.LastUsedAt)
		}
		wantCode(t, s.PasskeyUsed(ctx, unknownID, 1, 0, baseTime), quire.ENOTFOUND)
	})

	t.Run("whether a user has a passkey", func(t *testing.T) {
		s, ada := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		bob := newUser(t, s, "bob@example.com", "editor", "")
		p := newPasskey(t, s, ada.ID, "Laptop", 1, baseTime)
		newPasskey(t, s, ada.ID, "Phone", 2, baseTime)
		for _, c := range []struct {
			id   string
			want bool
		}{{ada.ID, true}, {bob.ID, false}, {unknownID, false}} {
			got, err := s.HasPasskey(ctx, c.id)
			if err != nil || got != c.want {
				t.Errorf("HasPasskey(%s) = %v, %v, want %v", c.id, got, err, c.want)
			}
		}
		if err := s.DeletePasskey(ctx, ada.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.HasPasskey(ctx, ada.ID); !got {
			t.Error("HasPasskey false with one passkey left")
		}
	})
}

func testPasskeyCeremonies(t *testing.T, open Opener) {
	ceremony := func(challenge, kind, userID, addr string, expires time.Time) *quire.PasskeyCeremony {
		return &quire.PasskeyCeremony{ChallengeHash: tokenHash(challenge), Kind: kind, UserID: userID, Addr: addr,
			Data: []byte(`{"challenge":"` + challenge + `"}`), ExpiresAt: expires}
	}

	t.Run("a ceremony is taken once, with every field", func(t *testing.T) {
		s, u := openWithUser(t, open, "ada@example.com", "editor")
		ctx := t.Context()
		c := ceremony("abc", quire.PasskeyRegister, u.ID, "192.0.2.7", baseTime.Add(5*time.Minute))
		if err := s.BeginPasskeyCeremony(ctx, c, baseTime, 10); err != nil {
			t.Fatal(err)
		}
		got := must(s.TakePasskeyCeremony(ctx, quire.PasskeyRegister, tokenHash("abc"), baseTime.Add(time.Minute)))(t)
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("ceremony (-want +got):\n%s", diff)
		}
		_, err := s.TakePasskeyCeremony(ctx, quire.PasskeyRegister, tokenHash("abc"), baseTime.Add(time.Minute))
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("a ceremony of another kind, an unknown one and an expired one are not found", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		if err := s.BeginPasskeyCeremony(ctx, ceremony("login", quire.PasskeyLogin, "", "a", baseTime.Add(time.Minute)), baseTime, 10); err != nil {
			t.Fatal(err)
		}
		_, err := s.TakePasskeyCeremony(ctx, quire.PasskeyRegister, tokenHash("login"), baseTime)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = s.TakePasskeyCeremony(ctx, quire.PasskeyLogin, tokenHash("other"), baseTime)
		wantCode(t, err, quire.ENOTFOUND)
		_, err = s.TakePasskeyCeremony(ctx, quire.PasskeyLogin, tokenHash("login"), baseTime.Add(time.Minute))
		wantCode(t, err, quire.ENOTFOUND)
		// Taken when expired: it is gone.
		_, err = s.TakePasskeyCeremony(ctx, quire.PasskeyLogin, tokenHash("login"), baseTime)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("an address holds a bounded number of live ceremonies, its oldest dropped for a new one", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		for i := range 3 {
			c := ceremony(string(rune('a'+i)), quire.PasskeyLogin, "", "192.0.2.7", baseTime.Add(time.Duration(i+1)*time.Minute))
			if err := s.BeginPasskeyCeremony(ctx, c, baseTime, 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.BeginPasskeyCeremony(ctx, ceremony("x", quire.PasskeyLogin, "", "192.0.2.8", baseTime.Add(time.Minute)), baseTime, 3); err != nil {
			t.Fatal(err)
		}
		// A fourth begin of the address is not refused: the one closest to
		// expiry ("a") makes room; another address keeps its own.
		if err := s.BeginPasskeyCeremony(ctx, ceremony("d", quire.PasskeyLogin, "", "192.0.2.7", baseTime.Add(5*time.Minute)), baseTime, 3); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakePasskeyCeremony(ctx, quire.PasskeyLogin, tokenHash("a"), baseTime); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("the oldest ceremony of the address: %v, want it dropped", err)
		}
		for _, name := range []string{"b", "c", "d", "x"} {
			if _, err := s.TakePasskeyCeremony(ctx, quire.PasskeyLogin, tokenHash(name), baseTime); err != nil {
				t.Errorf("ceremony %s: %v, want it kept", name, err)
			}
		}
	})

	t.Run("of parallel takes of one ceremony one gets it", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		if err := s.BeginPasskeyCeremony(ctx, ceremony("race", quire.PasskeyLogin, "", "a", baseTime.Add(time.Minute)), baseTime, 10); err != nil {
			t.Fatal(err)
		}
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			got int
		)
		for range 8 {
			wg.Go(func() {
				_, err := s.TakePasskeyCeremony(ctx, quire.PasskeyLogin, tokenHash("race"), baseTime)
				if err == nil {
					mu.Lock()
					got++
					mu.Unlock()
				} else if quire.ErrorCode(err) != quire.ENOTFOUND {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got != 1 {
			t.Errorf("%d takes got the ceremony, want 1", got)
		}
	})
}
