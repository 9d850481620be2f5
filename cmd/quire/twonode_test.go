package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"quire/mail/mailtest"
	"quire/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.RunMain(m)
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// twoNodePassword is the password of the users the two-node test adds.
const twoNodePassword = "correct horse battery staple 42"

// TestTwoNodes runs two real quire processes (the binary, built once) on one
// PostgreSQL database, as two nodes behind a load balancer, and shows that
// they act as one service: sessions, revocations, login limits, the
// conflict guard and the mail outbox live in the database, not in either
// process. Both nodes deliver mail to one SMTP server in this process.
// It skips loudly when there is no PostgreSQL (QUIRE_REQUIRE_POSTGRES=1
// makes that a failure).
func TestTwoNodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs two processes: not in -short")
	}
	dbURL := pgtest.Start(t)
	bin := buildQuire(t)
	smtp := mailtest.NewServer(t)
	const publicURL = "http://docs.example.test"

	a := startNode(t, "A", bin, dbURL, publicURL, smtp.URL)
	password := a.waitPassword(t)
	b := startNode(t, "B", bin, dbURL, publicURL, smtp.URL)
	if strings.Contains(b.stdout.String(), "password:") {
		t.Fatalf("node B created a second administrator on a database that had one:\n%s", b.stdout.String())
	}
	nodes := []*node{a, b}
	other := func(i int) *node { return nodes[i%2] }

	t.Run("a token from A works on B, and after logout on B it is refused on A", func(t *testing.T) {
		token := a.login(t, nil, "admin@localhost", password)
		r := b.call(t, nil, "GET", "/api/auth/me", token, nil)
		var me struct {
			User struct {
				Email string `json:"email"`
				Role  string `json:"role"`
			} `json:"user"`
		}
		r.want(t, http.StatusOK, &me)
		if me.User.Email != "admin@localhost" || me.User.Role != "admin" {
			t.Fatalf("me on B: %s", r.body)
		}
		b.call(t, nil, "POST", "/api/auth/logout", token, nil).want(t, http.StatusOK, nil)
		a.call(t, nil, "GET", "/api/auth/me", token, nil).wantError(t, http.StatusUnauthorized, "UNAUTHORIZED")
		b.call(t, nil, "GET", "/api/auth/me", token, nil).wantError(t, http.StatusUnauthorized, "UNAUTHORIZED")
	})

	t.Run("20 failed sign-ins split across A and B trip the limit on both", func(t *testing.T) {
		addUser(t, bin, dbURL, "limit@example.com")
		for i := range 20 {
			r := other(i).call(t, nil, "POST", "/api/auth/login", "",
				map[string]string{"email": "limit@example.com", "password": "wrong password number " + fmt.Sprint(i)})
			r.wantError(t, http.StatusUnauthorized, "INVALID_CREDENTIALS")
		}
		for _, n := range nodes {
			r := n.call(t, nil, "POST", "/api/auth/login", "",
				map[string]string{"email": "limit@example.com", "password": twoNodePassword})
			body := r.wantError(t, http.StatusTooManyRequests, "TOO_MANY_ATTEMPTS")
			if body["message"] != "Too many login attempts, please try again later." {
				t.Errorf("node %s: message %q", n.name, body["message"])
			}
			if r.header.Get("Retry-After") == "" {
				t.Errorf("node %s: no Retry-After", n.name)
			}
		}
	})

	t.Run("concurrent guarded updates split across A and B leave exactly one winner", func(t *testing.T) {
		token := a.login(t, nil, "admin@localhost", password)
		var created struct {
			Document struct {
				ID        string `json:"id"`
				UpdatedAt string `json:"updated_at"`
			} `json:"document"`
		}
		a.call(t, nil, "POST", "/api/documentation/documents", token,
			map[string]any{"title": "Runbook", "content": "first"}).want(t, http.StatusCreated, &created)
		path := "/api/documentation/documents/" + created.Document.ID

		const writers = 20
		results := make([]*answer, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				results[i] = other(i).try("PUT", path, token, map[string]any{
					"content": fmt.Sprintf("edit %d", i), "baseUpdatedAt": created.Document.UpdatedAt})
			})
		}
		close(start)
		wg.Wait()
		statuses := map[int]int{}
		winner := -1
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("writer %d: %v", i, r.err)
			}
			statuses[r.status]++
			switch r.status {
			case http.StatusOK:
				winner = i
			case http.StatusConflict:
				r.wantError(t, http.StatusConflict, "DOCUMENT_CONFLICT")
			}
		}
		if diff := cmp.Diff(map[int]int{http.StatusOK: 1, http.StatusConflict: writers - 1}, statuses); diff != "" {
			t.Fatalf("statuses (-want +got):\n%s", diff)
		}

		var doc struct {
			Document struct {
				Content string `json:"content"`
				Version int    `json:"version"`
			} `json:"document"`
		}
		b.call(t, nil, "GET", path, token, nil).want(t, http.StatusOK, &doc)
		if want := fmt.Sprintf("edit %d", winner); doc.Document.Content != want || doc.Document.Version != 2 {
			t.Errorf("document holds %q at version %d, want the winner's %q at version 2", doc.Document.Content, doc.Document.Version, want)
		}
		var versions struct {
			Versions []struct {
				VersionNumber int `json:"versionNumber"`
			} `json:"versions"`
		}
		a.call(t, nil, "GET", path+"/versions", token, nil).want(t, http.StatusOK, &versions)
		var numbers []int
		for _, v := range versions.Versions {
			numbers = append(numbers, v.VersionNumber)
		}
		if diff := cmp.Diff([]int{2, 1}, numbers); diff != "" {
			t.Errorf("versions (-want +got):\n%s", diff)
		}
	})

	t.Run("every reset request that creates a token is mailed exactly once though both nodes run workers", func(t *testing.T) {
		// Four users asked for four times each: the per-email cap keeps
		// three tokens (and mails) per user; two unknown emails get none.
		// Two client addresses, nine requests each, stay under the
		// per-address limit of ten an hour.
		users := []string{"reset1@example.com", "reset2@example.com", "reset3@example.com", "reset4@example.com"}
		for _, u := range users {
			addUser(t, bin, dbURL, u)
		}
		var requests []string
		for range 4 {
			requests = append(requests, users...)
		}
		requests = append(requests, "nobody1@example.com", "nobody2@example.com")
		const perUser = 3
		want := perUser * len(users)

		// A slow mail server keeps a worker busy with one mail long enough
		// for the other node's worker (polling every second) to claim
		// mails too, so that both deliver from the same outbox at once.
		smtp.OnData(func(int) { time.Sleep(250 * time.Millisecond) })
		defer smtp.OnData(nil)

		clients := []*http.Client{clientFrom("127.0.0.1"), clientFrom("127.0.0.2")}
		for i, email := range requests {
			r := other(i).call(t, clients[(i/2)%2], "POST", "/api/auth/forgot-password", "", map[string]string{"email": email})
			var body map[string]string
			r.want(t, http.StatusOK, &body)
		}

		smtp.Wait(t, want, 60*time.Second)
		// A mail claimed by both workers would be sent by both within a
		// poll interval (1s) and a send of each other: wait a few, then
		// count.
		time.Sleep(3 * time.Second)
		msgs := smtp.Messages()
		perRecipient := map[string]int{}
		links := map[string]bool{}
		for _, m := range msgs {
			perRecipient[strings.Join(m.To, ",")]++
			for _, l := range m.MustParse(t).Links() {
				if !strings.HasPrefix(l, publicURL+"/reset-password?token=") {
					t.Errorf("link %q is not built from the public URL", l)
				}
				links[l] = true
			}
		}
		wantPer := map[string]int{}
		for _, u := range users {
			wantPer[u] = perUser
		}
		if diff := cmp.Diff(wantPer, perRecipient); diff != "" {
			t.Errorf("mails per recipient (-want +got):\n%s", diff)
		}
		if len(msgs) != want || len(links) != want {
			t.Errorf("%d mails with %d distinct links, want %d of each", len(msgs), len(links), want)
		}

		// The nodes' logs say who sent what: no mail twice, and which
		// worker took how many.
		sentBy := map[string][]string{}
		for _, n := range nodes {
			for _, id := range n.sentMails(t) {
				sentBy[id] = append(sentBy[id], n.name)
			}
		}
		perNode := map[string]int{}
		for id, by := range sentBy {
			if len(by) != 1 {
				t.Errorf("mail %s sent by %v", id, by)
			}
			for _, n := range by {
				perNode[n]++
			}
		}
		if len(sentBy) != want {
			t.Errorf("the nodes logged %d mails sent, want %d", len(sentBy), want)
		}
		// Delivery takes at least 12 × 250ms, longer than a poll interval,
		// so each worker must have found mail to claim.
		if perNode["A"] == 0 || perNode["B"] == 0 {
			t.Errorf("mails sent per node %v: one worker sent none, so the outbox was not shared", perNode)
		}
		t.Logf("mails sent per node: %v", perNode)
	})

	t.Run("both nodes stop with status 0 on SIGTERM", func(t *testing.T) {
		for _, n := range nodes {
			if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatalf("node %s: %v", n.name, err)
			}
		}
		for _, n := range nodes {
			select {
			case <-n.exited:
				if n.waitErr != nil {
					t.Errorf("node %s exited with %v; log:\n%s", n.name, n.waitErr, tail(n.stderr.String(), 20))
				}
			case <-time.After(20 * time.Second):
				t.Errorf("node %s did not stop within 20s of SIGTERM", n.name)
			}
		}
	})
}

// buildQuire builds this command once per test process, into a temporary
// directory that TestMain removes, and returns the binary's path. The
// tests that run the binary share it.
func buildQuire(t testing.TB) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// builtDir holds the binary of buildOnce; "" until it is made.
var builtDir string

var buildOnce = sync.OnceValues(func() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is needed to build quire: %w", err)
	}
	dir, err := os.MkdirTemp("", "quire-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "quire")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
})

// nodeEnv is the test process's environment without QUIRE_ variables, so
// that a developer's settings (QUIRE_LOGIN_LIMIT...) cannot change what the
// nodes do.
func nodeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUIRE_") {
			env = append(env, kv)
		}
	}
	return env
}

// addUser adds an active editor with twoNodePassword through the CLI.
func addUser(t *testing.T, bin, dbURL, email string) {
	t.Helper()
	cmd := exec.Command(bin, "user", "add", "--db", dbURL, "--email", email, "--name", email,
		"--role", "editor", "--password", twoNodePassword, "--json")
	cmd.Env = nodeEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("quire user add %s: %v\n%s", email, err, out)
	}
}

// node is one running `quire serve` process.
type node struct {
	name           string
	base           string // http://127.0.0.1:PORT
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	exited         chan struct{} // closed when the process has exited
	waitErr        error         // set before exited is closed
}

var listeningRE = regexp.MustCompile(`quire listening on (http://\S+)`)

// startNode starts `quire serve` on a free port, with the extra flags, and
// waits until its /healthz answers. The process is killed when the test
// ends, if it still runs; should the test process die first, the node dies
// at its next log line, written to a pipe that no longer has a reader
// (SIGPIPE).
func startNode(t *testing.T, name, bin, dbURL, publicURL, smtpURL string, extra ...string) *node {
	t.Helper()
	n := &node{name: name, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", dbURL, "--public-url", publicURL,
		"--smtp-url", smtpURL, "--mail-from", "quire <quire@example.test>"}, extra...)...)
	n.cmd.Env = nodeEnv()
	n.cmd.Dir = t.TempDir()
	n.cmd.Stderr = n.stderr
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("start node %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			n.stdout.Write([]byte(line + "\n"))
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				listening <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
		n.waitErr = n.cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-n.exited:
			return
		default:
		}
		n.cmd.Process.Kill()
		<-n.exited
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node %s stdout:\n%s\nnode %s log (last lines):\n%s", name, n.stdout.String(), name, tail(n.stderr.String(), 30))
		}
	})

	select {
	case n.base = <-listening:
	case <-n.exited:
		t.Fatalf("node %s exited (%v) before listening; stdout %q; log:\n%s", name, n.waitErr, n.stdout.String(), tail(n.stderr.String(), 20))
	case <-time.After(60 * time.Second):
		t.Fatalf("node %s printed no listening line in 60s; stdout %q", name, n.stdout.String())
	}
	if err := awaitHealthz(n.base, 30*time.Second, n.exited); err != nil {
		t.Fatalf("node %s: %v", name, err)
	}
	return n
}

// awaitHealthz polls base's /healthz until it answers 200; it gives up
// with an error when exited is closed or within has passed.
func awaitHealthz(base string, within time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(within)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("/healthz did not answer 200 within %v (%v)", within, err)
		}
		select {
		case <-exited:
			return errors.New("exited before /healthz answered 200")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var passwordRE = regexp.MustCompile(`password: (\S+)`)

// waitPassword returns the first administrator's password, printed by the
// node that found the database empty (before its listening line).
func (n *node) waitPassword(t *testing.T) string {
	t.Helper()
	m := passwordRE.FindStringSubmatch(n.stdout.String())
	if m == nil {
		t.Fatalf("node %s printed no administrator password: %q", n.name, n.stdout.String())
	}
	return m[1]
}

// sentMails returns the ids of the mails that this node's worker logged
// as sent.
func (n *node) sentMails(t *testing.T) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(n.stderr.String(), "\n") {
		if line == "" {
			continue
		}
		var rec struct {
			Msg  string `json:"msg"`
			Mail string `json:"mail"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("node %s logged a line that is not JSON: %q", n.name, line)
		}
		if rec.Msg == "mail sent" {
			ids = append(ids, rec.Mail)
		}
	}
	sort.Strings(ids)
	return ids
}

// clientFrom returns a client whose connections come from the loopback
// address ip, so that the nodes see another client address.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 30 * time.Second}
}

var defaultClient = clientFrom("127.0.0.1")

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// try sends a request with body encoded as JSON (when not nil) and the
// token as a bearer (when not empty), from 127.0.0.1.
func (n *node) try(method, path, token string, body any) *answer {
	return n.send(defaultClient, method, path, token, body)
}

func (n *node) send(c *http.Client, method, path, token string, body any) *answer {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return &answer{err: err}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, n.base+path, rd)
	if err != nil {
		return &answer{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return &answer{err: fmt.Errorf("node %s: %s %s: %w", n.name, method, path, err)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return &answer{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// call is try from the given client (nil: 127.0.0.1), failing t on a
// transport error.
func (n *node) call(t *testing.T, c *http.Client, method, path, token string, body any) *answer {
	t.Helper()
	if c == nil {
		c = defaultClient
	}
	r := n.send(c, method, path, token, body)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r
}

// login signs in and returns the access token.
func (n *node) login(t *testing.T, c *http.Client, email, password string) string {
	t.Helper()
	var out struct {
		AccessToken string `json:"accessToken"`
	}
	n.call(t, c, "POST", "/api/auth/login", "", map[string]string{"email": email, "password": password}).
		want(t, http.StatusOK, &out)
	if out.AccessToken == "" {
		t.Fatalf("node %s: login gave no token", n.name)
	}
	return out.AccessToken
}

// want checks the status and decodes the body into v (when not nil).
func (r *answer) want(t *testing.T, status int, v any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decode %s: %v", r.body, err)
		}
	}
}

// wantError checks an error answer of the contract's shape and returns it.
func (r *answer) wantError(t *testing.T, status int, code string) map[string]any {
	t.Helper()
	var body map[string]any
	r.want(t, status, &body)
	if body["code"] != code {
		t.Fatalf("code %v, want %s: %s", body["code"], code, r.body)
	}
	if m, _ := body["message"].(string); m == "" {
		t.Fatalf("error without a message: %s", r.body)
	}
	return body
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
