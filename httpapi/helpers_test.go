package httpapi

import (
	"testing"
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
