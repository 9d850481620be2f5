package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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
	e := newEnvWithAda(b, withAuthConfig(func(c *auth.Config) { c.Limits.Limit = 1 << 30 }))
	body := []byte(`{"email":"ada@example.com","password":"` + testPassword + `"}`)
	client := e.client("")
	for b.Loop() {
		req, _ := http.NewRequest("POST", e.server.URL+"/api/auth/login", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		wantOK(b, client, req)
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
		wantOK(b, client, req)
	}
}

// wantOK sends req with client and reads the answer to its end, failing b
// unless it is 200.
func wantOK(b *testing.B, client *http.Client, req *http.Request) {
	b.Helper()
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

// BenchmarkSave pairs each save with its keyed twin (an Idempotency-Key of
// its own on every request), so that the cost of keeping the answer shows
// as a ratio within one run; with -count the pairs interleave, which keeps
// a busy machine's drift out of the ratio:
//
//	go test -run='^$' -bench=Save -count=6 ./httpapi/
//
// Sixteen clients save at once, as in the bench harness. cpu-ns/op is the
// process's CPU time (server and client) per save, which a shared
// machine's load disturbs less than the wall time.
func BenchmarkSave(b *testing.B) {
	e := newEnv(b)
	e.user("ada@example.com", "editor", "Engineering")
	token := e.login("ada@example.com")
	client := e.client("")
	send := func(method, url, key string, body []byte) []byte {
		req, _ := http.NewRequest(method, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 && res.StatusCode != 201 {
			b.Fatalf("%s: %d %s", method, res.StatusCode, out)
		}
		return out
	}
	content := strings.Repeat("A paragraph of the runbook, as long as a real one. ", 30)
	var keys atomic.Int64
	run := func(b *testing.B, keyed bool, save func(key string, i int64)) {
		b.SetParallelism(16 / max(1, runtime.GOMAXPROCS(0)))
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n := keys.Add(1)
				key := ""
				if keyed {
					key = "bench-" + strconv.FormatInt(n, 10)
				}
				save(key, n)
			}
		})
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	create := func(key string, n int64) {
		body, _ := json.Marshal(map[string]any{"title": "Runbook " + strconv.FormatInt(n, 10), "content": content,
			"tags": []string{"ops", "bench"}, "visibility": "public"})
		send("POST", e.server.URL+docsPath, key, body)
	}
	// Each in-flight update has a document of its own: 64 documents, each
	// saved on top of the updated_at of its last answer.
	type doc struct{ id, base string }
	pool := make(chan doc, 64)
	for range 64 {
		var out struct {
			Document struct {
				ID        string `json:"id"`
				UpdatedAt string `json:"updated_at"`
			} `json:"document"`
		}
		body, _ := json.Marshal(map[string]any{"title": "Pooled", "content": content})
		json.Unmarshal(send("POST", e.server.URL+docsPath, "", body), &out)
		pool <- doc{out.Document.ID, out.Document.UpdatedAt}
	}
	update := func(key string, n int64) {
		d := <-pool
		body, _ := json.Marshal(map[string]any{"summary": "Revision " + strconv.FormatInt(n, 10), "baseUpdatedAt": d.base})
		var out struct {
			Document struct {
				UpdatedAt string `json:"updated_at"`
			} `json:"document"`
		}
		json.Unmarshal(send("PUT", e.server.URL+docsPath+"/"+d.id, key, body), &out)
		pool <- doc{d.id, out.Document.UpdatedAt}
	}
	b.Run("create", func(b *testing.B) { run(b, false, create) })
	b.Run("create-keyed", func(b *testing.B) { run(b, true, create) })
	b.Run("update", func(b *testing.B) { run(b, false, update) })
	b.Run("update-keyed", func(b *testing.B) { run(b, true, update) })
}

// cpuTime is the CPU time this process has used, user and system, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkGet reads one document with a session and with a personal API
// token, in pairs, so that the cost of a token check shows as a ratio
// within one run (cpu-ns/op, as in BenchmarkSave):
//
//	go test -run='^$' -bench=Get -count=6 ./httpapi/ -args -stores=sqlite
func BenchmarkGet(b *testing.B) {
	e := newEnv(b)
	e.user("ada@example.com", "editor", "Engineering")
	session := e.login("ada@example.com")
	var created struct {
		Document struct {
			ID string `json:"id"`
		} `json:"document"`
	}
	e.do("POST", docsPath, bearer(session), jsonBody(map[string]any{"title": "Runbook",
		"content": strings.Repeat("A paragraph of the runbook, as long as a real one. ", 30)})).decode(b, &created)
	var tok struct {
		Secret string `json:"secret"`
	}
	e.do("POST", "/api/auth/tokens", bearer(session), jsonBody(map[string]any{"name": "bench", "scope": "read"})).decode(b, &tok)
	if created.Document.ID == "" || tok.Secret == "" {
		b.Fatal("no document or no token to read with")
	}
	url := e.server.URL + docsPath + "/" + created.Document.ID
	client := e.client("")
	run := func(b *testing.B, token string) {
		b.SetParallelism(16 / max(1, runtime.GOMAXPROCS(0)))
		cpu0 := cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			for pb.Next() {
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Errorf("status %d", res.StatusCode)
					return
				}
			}
		})
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	}
	b.Run("session", func(b *testing.B) { run(b, session) })
	b.Run("token", func(b *testing.B) { run(b, tok.Secret) })
}
