package passkey_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"quire"
	"quire/auth"
	"quire/passkey"
	"quire/sqlite"
)

// TestAvailable: the public URL decides whether passkeys can work at all,
// and a refusal says what to change.
func TestAvailable(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "quire.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, c := range []struct {
		url  string
		want string // "" for available, else a word of the reason
	}{
		{"https://docs.example.com", ""},
		{"https://docs.example.com:8443", ""},
		{"http://localhost:8080", ""},
		{"http://quire.localhost:8080", ""},
		{"http://127.0.0.1:8080", "host name"},
		{"https://[::1]:8443", "host name"},
		{"http://docs.example.com", "HTTPS"},
		{"ftp://docs.example.com", "http"},
	} {
		cfg := auth.DefaultConfig()
		cfg.PublicURL = c.url
		a, err := auth.New(db, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = passkey.New(db, a, nil).Available()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want available", c.url, err)
		case c.want != "" && (quire.ErrorCode(err) != quire.ENOTFOUND || !strings.Contains(quire.ErrorMessage(err), c.want)):
			t.Errorf("%s: %v, want NOT_FOUND saying %q", c.url, err, c.want)
		}
	}
}
