package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"quire/auth"
)

// The benchmarks below come in pairs, so that the cost quire adds shows as a
// ratio to a baseline measured in the same run:
//
//	go test -run='^$' -bench='Login|PasswordHash|Me|BareHandler' -count=5 ./httpapi/
//
// BenchmarkLogin / BenchmarkPasswordHash is the overhead of the sign-in path
// around its argon2id verification; BenchmarkMe / BenchmarkBareHandler is the
// cost of an authenticated request over a bare net/http handler on loopback.

func BenchmarkPasswordHash(b *testing.B) {
	encoded, err := auth.HashPassword(testPassword)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := auth.VerifyPassword(encoded, testPassword); !ok || err != nil {
			b.Fatal("verify failed")
		}
	}
}

func BenchmarkLogin(b *testing.B) {
	e := newEnv(b, withAuthConfig(func(c *auth.Config) { c.Limits.Limit = 1 << 30 }))
	e.user("ada@example.com", "editor", "")
	body := []byte(`{"email":"ada@example.com","password":"` + testPassword + `"}`)
	client := e.client("")
	for b.Loop() {
		req, _ := http.NewRequest("POST", e.server.URL+"/api/auth/login", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}

func BenchmarkBareHandler(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	}))
	defer srv.Close()
	getLoop(b, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}, srv.URL+"/", "")
}

func BenchmarkMe(b *testing.B) {
	e := newEnv(b)
	e.user("ada@example.com", "editor", "Engineering")
	token := e.login("ada@example.com")
	getLoop(b, e.client(""), e.server.URL+"/api/auth/me", token)
}

func getLoop(b *testing.B, client *http.Client, url, token string) {
	b.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for b.Loop() {
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}
