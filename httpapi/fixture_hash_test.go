package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestFixtureUsersHaveTheTestHash holds the harness to what the README says
// of it: the users env.user makes carry the test's cheap hash (env.users),
// and a password set through the API is hashed at the service's own cost
// (argon2id, 19 MiB, two passes), not at the fixtures'.
func TestFixtureUsersHaveTheTestHash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.user("ada@example.com", "editor", "")
	u, err := e.store.UserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if u.PasswordHash != cheapHash() {
		t.Errorf("env.user stored %q, want the test hash %q", u.PasswordHash, cheapHash())
	}

	tok := e.login("ada@example.com")
	r := e.do("POST", "/api/auth/change-password", bearer(tok),
		jsonBody(map[string]string{"currentPassword": testPassword, "newPassword": "a brand new passphrase for quire"}))
	if r.Status != http.StatusOK {
		t.Fatalf("change password: %d %s", r.Status, r.Body)
	}
	u, err = e.store.UserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if want := "$argon2id$v=19$m=19456,t=2,p=1$"; !strings.HasPrefix(u.PasswordHash, want) {
		t.Errorf("a password changed through the API is stored as %q, want a hash at the service's cost (%s...)", u.PasswordHash, want)
	}
}
