package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"quire"
	"quire/sqlite"
)

// post sends a JSON body to the server and decodes the answer into out.
func post(t *testing.T, method, url, token string, body any, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	res := send(t, method, url, token, "application/json", bytes.NewReader(b))
	defer res.Body.Close()
	if out != nil {
		json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

// TestServeKeepsTheSecretKey: without --secret-key the first start
// generates the key that seals the TOTP secrets and keeps it in the
// database, so that a second factor set up before a restart still works
// after it; with another --secret-key the sealed secrets no longer open.
func TestServeKeepsTheSecretKey(t *testing.T) {
	t.Parallel()
	db := migratedDB(t) // serve's first start makes the key, not migrate
	getenv := env(map[string]string{"QUIRE_DB": db})
	first := startServe(t, getenv)
	m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(first.stdout.String())
	if m == nil {
		t.Fatalf("no administrator password printed: %q", first.stdout.String())
	}
	creds := map[string]string{"email": "admin@localhost", "password": m[1]}
	var login struct{ AccessToken, MFAToken string }
	if st := post(t, "POST", first.base+"/api/auth/login", "", creds, &login); st != http.StatusOK {
		t.Fatalf("login: %d", st)
	}
	var setup struct{ Secret string }
	post(t, "POST", first.base+"/api/auth/mfa/totp", login.AccessToken, map[string]string{}, &setup)
	code, _ := totp.GenerateCode(setup.Secret, time.Now())
	if st := post(t, "POST", first.base+"/api/auth/mfa/totp/confirm", login.AccessToken, map[string]string{"code": code}, nil); st != http.StatusOK {
		t.Fatalf("confirm: %d", st)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	// Log lines are flushed at the latest when the server stops.
	if !strings.Contains(first.stderr.String(), "generated a secret key") {
		t.Error("the first start did not say it generated the secret key")
	}
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	key, err := store.Setting(context.Background(), quire.SettingSecretKey)
	store.Close()
	if err != nil || len(key) < 43 {
		t.Fatalf("stored secret key %d characters, %v", len(key), err)
	}
	if strings.Contains(first.stderr.String(), key) || strings.Contains(first.stdout.String(), key) {
		t.Fatal("the secret key was printed or logged")
	}

	secondStep := func(base string) int {
		t.Helper()
		var l struct{ MFAToken string }
		if st := post(t, "POST", base+"/api/auth/login", "", creds, &l); st != http.StatusOK || l.MFAToken == "" {
			t.Fatalf("password step: %d", st)
		}
		// The next step's code: the confirming one is spent.
		code, _ := totp.GenerateCode(setup.Secret, time.Now().Add(30*time.Second))
		return post(t, "POST", base+"/api/auth/login/mfa", "", map[string]string{"mfaToken": l.MFAToken, "code": code}, nil)
	}
	second := startServe(t, getenv)
	if st := secondStep(second.base); st != http.StatusOK {
		t.Fatalf("second step after a restart: %d", st)
	}
	second.stop()
	if strings.Contains(second.stderr.String(), "generated a secret key") {
		t.Error("the second start generated another key")
	}

	third := startServe(t, env(map[string]string{"QUIRE_DB": db, "QUIRE_SECRET_KEY": "another key altogether, given outside"}))
	if st := secondStep(third.base); st != http.StatusInternalServerError {
		t.Errorf("second step under another key: %d, want 500", st)
	}
	third.stop()
	if !strings.Contains(third.stderr.String(), "was the secret key changed?") {
		t.Error("the failure under another key does not say why")
	}

	// The way back in: reset from the command line, then the password alone.
	if out := mustCLI(t, getenv, "user", "reset-mfa", "admin@localhost"); !strings.Contains(out, "second factor reset") {
		t.Errorf("user reset-mfa printed %q", out)
	}
	fourth := startServe(t, getenv)
	var l struct{ AccessToken string }
	if st := post(t, "POST", fourth.base+"/api/auth/login", "", creds, &l); st != http.StatusOK || l.AccessToken == "" {
		t.Errorf("login after user reset-mfa: %d, token %v", st, l.AccessToken != "")
	}
	if _, _, err := cli(t, getenv, "user", "reset-mfa", "nobody@example.com"); err == nil {
		t.Error("user reset-mfa of an unknown email succeeded")
	}
}
