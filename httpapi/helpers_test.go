package httpapi

import (
	"encoding/json"
	"testing"

	"quire"
)

// newEnvWithAda is newEnv with the user most tests start from:
// ada@example.com, an active editor of no department (password
// testPassword), not signed in.
func newEnvWithAda(t testing.TB, opts ...envOption) *env {
	t.Helper()
	e := newEnv(t, opts...)
	e.user("ada@example.com", "editor", "")
	return e
}

// newDocsFixtureWithAda is newDocsFixture with the person most document
// tests start from: ada@example.com, an editor of Engineering who is not a
// member of project Apollo, signed in. It returns her token.
func newDocsFixtureWithAda(t *testing.T, opts ...envOption) (*docsFixture, string) {
	t.Helper()
	fx := newDocsFixture(t, opts...)
	return fx, fx.person("ada@example.com", "editor", "Engineering", false)
}

// wantMember fails the test unless r has status want and its body is a
// JSON object whose one member is key; it returns that member, decoded
// strictly (a field T does not have fails the test too).
func wantMember[T any](t testing.TB, r *resp, want int, key string) T {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: status %d, want %d; body %s", key, r.Status, want, excerpt(r.Body))
	}
	var members map[string]json.RawMessage
	strictDecode(t, r.Body, &members)
	raw, ok := members[key]
	if !ok || len(members) != 1 {
		t.Fatalf("body %s, want an object with the one member %q", excerpt(r.Body), key)
	}
	var v T
	strictDecode(t, raw, &v)
	return v
}

// wantBody fails the test unless r has status want, and returns its body
// decoded strictly into a T.
func wantBody[T any](t testing.TB, r *resp, want int) T {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body %s", r.Status, want, excerpt(r.Body))
	}
	var v T
	strictDecode(t, r.Body, &v)
	return v
}

// wantErrorMessage is wantError that also fails the test, going on, unless
// the error's message is message.
func (e *env) wantErrorMessage(r *resp, status int, code, message string) {
	e.t.Helper()
	if body := e.wantError(r, status, code); body["message"] != message {
		e.t.Errorf("message %q, want %q", body["message"], message)
	}
}

// newEnvWithRoot is newEnv with an administrator, root@example.com, signed
// in: it returns the user and its token.
func newEnvWithRoot(t testing.TB, opts ...envOption) (*env, quire.User, string) {
	t.Helper()
	e := newEnv(t, opts...)
	root := e.user("root@example.com", "admin", "")
	return e, root, e.login(root.Email)
}

// onlyOn skips the test, saying why, unless this run of the package is on
// the backend named backend.
func onlyOn(t *testing.T, backend, why string) {
	t.Helper()
	if current.name != backend {
		t.Skip(why)
	}
}
