package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"quire"
)

const docsPath = "/api/documentation/documents"

// session is a signed-in client of the quire under test.
type session struct {
	base  string // http://127.0.0.1:port
	token string
	hdr   http.Header
}

func login(ctx context.Context, base, email string) (*session, error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": benchPassword})
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/auth/login", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct{ AccessToken string }
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, &out) != nil || out.AccessToken == "" {
		return nil, fmt.Errorf("login %s: %d %s", email, resp.StatusCode, firstLine(b))
	}
	s := &session{base: base, token: out.AccessToken}
	s.hdr = http.Header{"Authorization": {"Bearer " + s.token}}
	return s, nil
}

func jsonHeader(h http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	out.Set("Content-Type", "application/json")
	return out
}

// scenarioNames lists the scenarios in the order they run.
var scenarioNames = []string{"me", "get", "get-token", "list", "list-filter", "search", "search-common", "search-status", "update", "update-keyed",
	"create", "create-keyed", "login", "flood"}

// env is what the scenarios of one run share.
type env struct {
	base   string
	editor *session
	seed   *seedInfo
	conc   int
}

func (e *env) static(method, path string, hdr http.Header) func() vegeta.Targeter {
	return func() vegeta.Targeter {
		return vegeta.NewStaticTargeter(vegeta.Target{Method: method, URL: e.base + path, Header: hdr})
	}
}

// rotating builds a targeter that hands out the targets in turn.
func rotating(ts []vegeta.Target) func() vegeta.Targeter {
	return func() vegeta.Targeter {
		rr := &roundRobin[vegeta.Target]{items: ts}
		return func(t *vegeta.Target) error { *t = rr.next(); return nil }
	}
}

func (e *env) gets() func() vegeta.Targeter { return e.getsWith(e.editor.hdr) }

// getsWith is gets authenticated by hdr (a session's or an API token's).
func (e *env) getsWith(hdr http.Header) func() vegeta.Targeter {
	var ts []vegeta.Target
	for _, id := range e.seed.Visible {
		ts = append(ts, vegeta.Target{Method: "GET", URL: e.base + docsPath + "/" + id, Header: hdr})
	}
	return rotating(ts)
}

// apiToken creates a read API token of the session's user and returns the
// header that sends it.
func (s *session) apiToken(ctx context.Context) (http.Header, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", s.base+"/api/auth/tokens",
		strings.NewReader(`{"name":"bench","scope":"read"}`))
	req.Header = jsonHeader(s.hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct{ Secret string }
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &out) != nil || out.Secret == "" {
		return nil, fmt.Errorf("create api token: %d %s", resp.StatusCode, firstLine(b))
	}
	return http.Header{"Authorization": {"Bearer " + out.Secret}}, nil
}

// lists: the first five pages of 20, newest first, with the total; the
// editor sees public documents, its own, its department's and its projects'.
func (e *env) lists() func() vegeta.Targeter {
	var ts []vegeta.Target
	for p := 1; p <= 5; p++ {
		ts = append(ts, vegeta.Target{Method: "GET", Header: e.editor.hdr,
			URL: fmt.Sprintf("%s%s?limit=20&page=%d&sortBy=updated_at&sortOrder=desc", e.base, docsPath, p)})
	}
	return rotating(ts)
}

func (e *env) filtered() func() vegeta.Targeter {
	var ts []vegeta.Target
	statuses := []string{"published", "draft", "review"}
	for i := 0; i < 30; i++ {
		q := url.Values{"limit": {"20"}, "status": {statuses[i%3]}, "tags": {tagPool[i%10]}}
		if i%5 == 4 {
			q.Set("tags", tagPool[i%10]+","+tagPool[(i+3)%10])
		}
		ts = append(ts, vegeta.Target{Method: "GET", Header: e.editor.hdr, URL: e.base + docsPath + "?" + q.Encode()})
	}
	return rotating(ts)
}

// searches: someone looks for a document they may read by two of its
// rarer words (recorded while seeding), ranked by relevance. Each search
// finds that document, and the others holding both words.
func (e *env) searches() func() vegeta.Targeter {
	all := e.seed.Searches
	n := min(200, len(all))
	var ts []vegeta.Target
	for i := range n {
		// Evenly over the recorded searches, which run from the oldest
		// documents to the newest.
		ts = append(ts, e.search(all[i*len(all)/n]))
	}
	return rotating(ts)
}

// commonSearches: two words each from ranks 40-200 of the vocabulary, words
// in an eighth to a half of all documents, so each search matches a few
// percent of the corpus (thousands at 100,000) and must rank and count them
// all: the harsh case.
func (e *env) commonSearches() func() vegeta.Targeter {
	r := rand.New(rand.NewPCG(7, 7))
	var ts []vegeta.Target
	for i := 0; i < 200; i++ {
		ts = append(ts, e.search(vocabulary[40+r.IntN(160)]+" "+vocabulary[40+r.IntN(160)]))
	}
	return rotating(ts)
}

// searchStatus is the status search-status filters on: the case
// (status=published&search=alpha), and the commonest status (45 % of
// documents), so the most matches to rank and count.
const searchStatus = "published"

// statusSearchWords are the words of search-status and of its like-scan
// ceiling: 50 different words of ranks 40-200, each in an eighth to a half
// of all documents, the same on every run.
func statusSearchWords() []string {
	r := rand.New(rand.NewPCG(18, 18))
	var ws []string
	for _, i := range r.Perm(160)[:50] {
		ws = append(ws, vocabulary[40+i])
	}
	return ws
}

// statusSearches: one common word with a status filter, relevance order
// (the default with a search), page of 20 with the total.
func (e *env) statusSearches() func() vegeta.Targeter {
	var ts []vegeta.Target
	for _, w := range statusSearchWords() {
		q := url.Values{"limit": {"20"}, "search": {w}, "status": {searchStatus}}
		ts = append(ts, vegeta.Target{Method: "GET", Header: e.editor.hdr, URL: e.base + docsPath + "?" + q.Encode()})
	}
	return rotating(ts)
}

func (e *env) search(words string) vegeta.Target {
	q := url.Values{"limit": {"20"}, "search": {words}}
	return vegeta.Target{Method: "GET", Header: e.editor.hdr, URL: e.base + docsPath + "?" + q.Encode()}
}

// keyed wraps targets so that every request carries an Idempotency-Key of
// its own, as a client that retries safely sends: the cost of keeping
// every answer, against the same load without keys.
func keyed(targets func() vegeta.Targeter) func() vegeta.Targeter {
	var n atomic.Int64
	prefix := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), keyedRuns.Add(1))
	return func() vegeta.Targeter {
		next := targets()
		return func(t *vegeta.Target) error {
			if err := next(t); err != nil {
				return err
			}
			t.Header = t.Header.Clone()
			t.Header.Set("Idempotency-Key", prefix+"-"+strconv.FormatInt(n.Add(1), 10))
			return nil
		}
	}
}

// keyedRuns tells the keys of one keyed load from those of any other load
// of the process: the editor's keys are one namespace.
var keyedRuns atomic.Int64

func (e *env) creates() func() vegeta.Targeter {
	r := rand.New(rand.NewPCG(11, 11))
	var ts []vegeta.Target
	for i := 0; i < 500; i++ {
		d := genDocument(r, quire.User{}, nil, []string{""})
		vis := d.Visibility
		if vis == "project" || vis == "department" {
			vis = "public"
		}
		body, _ := json.Marshal(map[string]any{"title": d.Title, "content": d.Content, "summary": d.Summary,
			"status": d.Status, "visibility": vis, "tags": d.Tags, "content_type": d.ContentType})
		ts = append(ts, vegeta.Target{Method: "POST", URL: e.base + docsPath, Body: body, Header: jsonHeader(e.editor.hdr)})
	}
	return rotating(ts)
}

func (e *env) logins() func() vegeta.Targeter {
	var ts []vegeta.Target
	for _, u := range e.seed.Users {
		if u.Role == "guest" {
			continue
		}
		body, _ := json.Marshal(map[string]string{"email": u.Email, "password": benchPassword})
		ts = append(ts, vegeta.Target{Method: "POST", URL: e.base + "/api/auth/login", Body: body,
			Header: http.Header{"Content-Type": {"application/json"}}})
	}
	return rotating(ts)
}

// updatePool hands each in-flight update a document no other request is
// updating, with the updated_at of its last answer as baseUpdatedAt: the
// fresh read of a client that saves what it has just seen. Bases are
// first read with a GET; afterwards every answer (200, or 409 with the
// current updated_at) carries the next one.
type updatePool struct {
	mu    sync.Mutex
	base  map[string]string
	free  chan string
	count int
}

func newUpdatePool(ctx context.Context, s *session, ids []string, size int) (*updatePool, error) {
	if len(ids) < size {
		size = len(ids)
	}
	p := &updatePool{base: map[string]string{}, free: make(chan string, size)}
	for _, id := range ids[:size] {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.base+docsPath+"/"+id, nil)
		req.Header = s.hdr.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		var out struct {
			Document struct {
				UpdatedAt string `json:"updated_at"`
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return nil, fmt.Errorf("read %s: %d %v", id, resp.StatusCode, err)
		}
		p.base[id] = out.Document.UpdatedAt
		p.free <- id
	}
	return p, nil
}

func (p *updatePool) targets(e *env) func() vegeta.Targeter {
	return func() vegeta.Targeter {
		hdr := jsonHeader(e.editor.hdr)
		return func(t *vegeta.Target) error {
			id := <-p.free
			p.mu.Lock()
			p.count++
			n, base := p.count, p.base[id]
			p.mu.Unlock()
			body, _ := json.Marshal(map[string]any{"summary": fmt.Sprintf("Revision %d of the summary.", n), "baseUpdatedAt": base})
			*t = vegeta.Target{Method: "PUT", URL: e.base + docsPath + "/" + id, Body: body, Header: hdr}
			return nil
		}
	}
}

// tap learns the next base of a document from the answer to its update and
// gives the document back to the pool.
func (p *updatePool) tap(next http.RoundTripper) http.RoundTripper {
	return responseTap{next: next, fn: func(req *http.Request, status int, body []byte) {
		id := req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:]
		var out struct {
			UpdatedAt string `json:"updated_at"` // on 409
			Document  struct {
				UpdatedAt string `json:"updated_at"`
			}
		}
		if json.Unmarshal(body, &out) == nil {
			p.mu.Lock()
			if status == 200 && out.Document.UpdatedAt != "" {
				p.base[id] = out.Document.UpdatedAt
			} else if out.UpdatedAt != "" {
				p.base[id] = out.UpdatedAt
			}
			p.mu.Unlock()
		}
		p.free <- id
	}}
}
