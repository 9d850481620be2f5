package httpapi

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"

	"golang.org/x/crypto/argon2"

	"quire"
	"quire/auth"
)

// Passwords in two Unicode forms: composed "é" (NFC, U+00E9) and "e"
// followed by the combining acute accent (NFD), as some systems send it.
const (
	passwordNFC = "un mot de passe bien composé"
	passwordNFD = "un mot de passe bien compose\u0301"
)

// unnormalisedHash is the argon2id hash of password exactly as typed, as
// quire made them before it normalised passwords.
func unnormalisedHash(password string) string {
	salt := []byte("quire-test-salt!")
	key := argon2.IDKey([]byte(password), salt, 2, 19*1024, 1, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, 19*1024, 2, 1, b64.EncodeToString(salt), b64.EncodeToString(key))
}

func TestPasswordNormalisation(t *testing.T) {
	t.Parallel()
	t.Run("a password changed in NFC signs in typed in NFD, and the reverse", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		r := e.do("POST", "/api/auth/change-password", bearer(e.login("ada@example.com")),
			jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": passwordNFC}))
		if got := message(t, r); got != "Password changed" {
			t.Fatalf("message %q", got)
		}
		wantSignsIn(e, "ada@example.com", passwordNFD, passwordNFC)
	})

	t.Run("a password set up in NFD signs in typed in NFC", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, tok := invite(t, e, "ivy@example.com")
		r := e.do("POST", "/api/auth/setup-password", jsonBody(map[string]string{"token": tok, "password": passwordNFD}))
		if got := message(t, r); got != "Password set" {
			t.Fatalf("message %q", got)
		}
		if r := e.do("POST", "/api/auth/login", creds("ivy@example.com", passwordNFC)); r.Status != http.StatusOK {
			t.Errorf("sign-in: %d %s", r.Status, r.Body)
		}
	})

	t.Run("a password given when the user is created (quire user add) is normalised too", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		_, _, err := e.auth.CreateUser(context.Background(), auth.NewUser{Email: "cli@example.com", Name: "Cli",
			Role: "editor", Password: passwordNFD})
		if err != nil {
			t.Fatal(err)
		}
		if r := e.do("POST", "/api/auth/login", creds("cli@example.com", passwordNFC)); r.Status != http.StatusOK {
			t.Errorf("sign-in: %d %s", r.Status, r.Body)
		}
	})

	t.Run("compatibility forms are one password: a ligature and full-width letters", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		r := e.do("POST", "/api/auth/change-password", bearer(e.login("ada@example.com")),
			jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": "a ﬁne ｐａｓｓｐｈｒａｓｅ for quire"}))
		if got := message(t, r); got != "Password changed" {
			t.Fatalf("message %q", got)
		}
		if r := e.do("POST", "/api/auth/login", creds("ada@example.com", "a fine passphrase for quire")); r.Status != http.StatusOK {
			t.Errorf("sign-in: %d %s", r.Status, r.Body)
		}
	})

	t.Run("the change-password check of the current password is normalised too", func(t *testing.T) {
		t.Parallel()
		e, tok := newSignedIn(t, "editor", "ada@example.com")
		change := func(current, next string) *resp {
			return e.do("POST", "/api/auth/change-password", bearer(tok),
				jsonBody(map[string]string{"currentPassword": current, "newPassword": next}))
		}
		message(t, change(testPassword, passwordNFC))
		if got := message(t, change(passwordNFD, newPassword)); got != "Password changed" {
			t.Errorf("message %q", got)
		}
	})

	t.Run("the policy judges the normalised form", func(t *testing.T) {
		t.Parallel()
		e := newEnvWithAda(t)
		// 15 code points typed, 14 once "e" and its accent are composed.
		short := "abcdefghijklm" + "e\u0301"
		r := e.do("POST", "/api/auth/change-password", bearer(e.login("ada@example.com")),
			jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": short}))
		e.wantErrorMessage(r, http.StatusBadRequest, quire.EWEAKPASSWORD, "Password must be at least 15 characters long")
	})

	t.Run("a hash made from the typed form signs in once more, and is made again from NFKC", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		ctx := context.Background()
		old := unnormalisedHash(passwordNFD)
		u := &quire.User{Email: "old@example.com", Name: "Old", Role: quire.Role{Key: "editor"},
			Status: quire.UserActive, PasswordHash: old}
		if err := e.store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		// Before: only the exact bytes that were hashed match.
		e.wantError(e.do("POST", "/api/auth/login", creds("old@example.com", passwordNFC)), 401, quire.EINVALIDCREDENTIALS)

		if r := e.do("POST", "/api/auth/login", creds("old@example.com", passwordNFD)); r.Status != http.StatusOK {
			t.Fatalf("sign-in with the form the hash was made from: %d %s", r.Status, r.Body)
		}
		got, err := e.store.UserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.PasswordHash == old {
			t.Fatal("the hash was not made again")
		}
		if ok, err := auth.VerifyPassword(got.PasswordHash, passwordNFC); !ok || err != nil {
			t.Errorf("the new hash is not of the NFKC form: %v %v", ok, err)
		}
		wantSignsIn(e, "old@example.com", passwordNFC, passwordNFD)
	})

	t.Run("a hash made from the typed form still refuses a wrong password", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		old := unnormalisedHash(passwordNFD)
		u := &quire.User{Email: "old@example.com", Name: "Old", Role: quire.Role{Key: "editor"},
			Status: quire.UserActive, PasswordHash: old}
		if err := e.store.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		e.wantError(e.do("POST", "/api/auth/login", creds("old@example.com", "un mot de passe bien composa\u0301")), 401, quire.EINVALIDCREDENTIALS)
		got, err := e.store.UserByID(context.Background(), u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.PasswordHash != old {
			t.Error("a failed sign-in changed the hash")
		}
	})
}

// wantSignsIn fails the test, going on, unless email signs in with each of
// passwords.
func wantSignsIn(e *env, email string, passwords ...string) {
	e.t.Helper()
	for _, pw := range passwords {
		if r := e.do("POST", "/api/auth/login", creds(email, pw)); r.Status != http.StatusOK {
			e.t.Errorf("sign-in of %s with %+q: %d %s", email, pw, r.Status, r.Body)
		}
	}
}
