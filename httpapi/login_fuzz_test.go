package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"quire/auth"
)

// FuzzLoginBody sends arbitrary bodies to the login endpoint. Whatever the
// body, the answer is one of the contract's, in the contract's error shape,
// never a 5xx.
//
//	go test -run='^$' -fuzz=FuzzLoginBody -fuzztime=1m ./httpapi/
func FuzzLoginBody(f *testing.F) {
	for _, seed := range []string{
		`{"email":"ada@example.com","password":"correct horse battery staple 42"}`,
		`{"email":"ada@example.com","password":"x","timezone":"Europe/Paris"}`,
		`{"email":"ada@example.com","password":"x","timezone":"../../../etc/passwd"}`,
		`{"email":null,"password":null}`,
		`{"email":["a"],"password":{"b":1}}`,
		`{"email":"\u0000","password":"\ud800"}`,
		`[]`, `null`, `"str"`, `{}`, ``, `{"a":` + strings.Repeat(`[`, 64),
		"{\"email\":\"\xff\"}",
		`{"email":"a@b.c","password":"x"}{"again":1}`,
		`{"email":1e999,"password":-0}`,
	} {
		f.Add(seed)
	}
	e := newEnv(f, withAuthConfig(func(c *auth.Config) { c.Limits.Limit = 1 << 30; c.Limits.LockThreshold = 1 << 30 }))
	e.user("ada@example.com", "editor", "")
	f.Fuzz(func(t *testing.T, body string) {
		r := e.withT(t).do("POST", "/api/auth/login", rawBody(body), header("Content-Type", "application/json"))
		switch r.Status {
		case 200, 400, 401:
		default:
			t.Fatalf("status %d for %q: %s", r.Status, body, r.Body)
		}
		var v map[string]any
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatalf("answer is not JSON: %s", r.Body)
		}
		if r.Status != 200 {
			if code, _ := v["code"].(string); code == "" {
				t.Fatalf("error without code: %s", r.Body)
			}
		}
	})
}
