package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire"
	"quire/internal/sqlitetest"
	"quire/sqlite"
	"quire/webhook"
)

const secret = "test-secret-0123456789"

func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), sqlitetest.Migrated(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// clock is a settable clock shared by the test and the worker.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// received is what a receiver was sent, checked as a receiver should.
type received struct {
	Action, Target, Delivery string
	Event                    string
}

// receiver is a real HTTP server that checks every request's signature
// with the documented algorithm (written here again, not taken from the
// package) and keeps what it was sent.
type receiver struct {
	t       *testing.T
	mu      sync.Mutex
	got     []received
	badSigs int
	status  atomic.Int32 // the answer; 0 is 204
	// failEvery > 0 answers 502 to every failEvery-th request.
	failEvery, calls atomic.Int32
	ln               net.Listener
	srv              *http.Server
	addr             string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.listen("127.0.0.1:0")
	return r
}

func (r *receiver) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.t.Fatal(err)
	}
	r.ln, r.addr = ln, ln.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go r.srv.Serve(ln)
	r.t.Cleanup(func() { r.srv.Close() })
}

func (r *receiver) URL() string { return "http://" + r.addr + "/hook" }

// down closes the receiver: connections are refused until up.
func (r *receiver) down() { r.srv.Close() }
func (r *receiver) up()   { r.listen(r.addr) }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if n := r.failEvery.Load(); n > 0 && r.calls.Add(1)%n == 0 {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	sig := req.Header.Get("Quire-Signature")
	ok := false
	if ts, v1, found := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1="); found {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + string(body)))
		want := hex.EncodeToString(mac.Sum(nil))
		ok = hmac.Equal([]byte(want), []byte(v1))
	}
	var p struct {
		DeliveryID string `json:"deliveryId"`
		Event      struct {
			ID     string `json:"id"`
			Action string `json:"action"`
			Target *struct {
				ID string `json:"id"`
			} `json:"target"`
		} `json:"event"`
	}
	err := json.Unmarshal(body, &p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok || err != nil || req.Header.Get("Quire-Delivery") != p.DeliveryID || req.Header.Get("Quire-Event") != p.Event.Action {
		r.badSigs++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	status := int(r.status.Load())
	if status == 0 {
		status = http.StatusNoContent
	}
	if status < 300 {
		target := ""
		if p.Event.Target != nil {
			target = p.Event.Target.ID
		}
		r.got = append(r.got, received{Action: p.Event.Action, Target: target, Delivery: p.DeliveryID, Event: p.Event.ID})
	}
	w.WriteHeader(status)
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startWorker(t *testing.T, w *webhook.Worker) {
	t.Helper()
	if w.Poll == 0 {
		w.Poll = 10 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("worker did not stop")
		}
	})
}

func addHook(t *testing.T, db *sqlite.DB, url string, events ...string) *quire.Webhook {
	t.Helper()
	h := &quire.Webhook{URL: url, Secret: secret, Events: events, Active: true}
	if err := db.CreateWebhook(t.Context(), h, time.Now()); err != nil {
		t.Fatal(err)
	}
	return h
}

// change records an event of action on the document target with a real
// change (a role written again), as every service records its events.
func change(t *testing.T, db *sqlite.DB, at time.Time, action, target string) {
	t.Helper()
	ev := quire.NewEvent(action, at, nil, quire.RequestInfo{}).On(quire.TargetDocument, target, target)
	if err := db.Recording(ev).PutRole(t.Context(), quire.Role{Key: "viewer", Label: "Viewer", Docs: quire.LevelView}); err != nil {
		t.Fatal(err)
	}
}

// inOrder fails unless, for each target, got holds its numbered actions
// ("document.updated" with details n) in increasing order without a gap.
func perTarget(got []received) map[string][]string {
	out := map[string][]string{}
	for _, r := range got {
		out[r.Target] = append(out[r.Target], r.Event)
	}
	return out
}

func TestDeliveriesAreSignedAndInOrderPerDocument(t *testing.T) {
	db := openDB(t)
	clk := newClock()
	rcv := newReceiver(t)
	h := addHook(t, db, rcv.URL(), "document.*")
	other := newReceiver(t)
	addHook(t, db, other.URL(), "folder.created") // matches none of the events below

	// Every third answer fails, so that retries interleave with the rest.
	rcv.failEvery.Store(3)

	want := map[string][]string{}
	for i := range 30 {
		target := "doc-" + strconv.Itoa(i%4)
		change(t, db, clk.Now(), quire.ActionDocumentUpdated, target)
		evs, err := db.AuditEvents(t.Context(), quire.AuditFilter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		want[target] = append(want[target], evs[0].ID)
	}
	startWorker(t, &webhook.Worker{Store: db, AllowPrivate: true, Now: clk.Now})
	// Retries wait 10 s of the worker's clock: move it on while waiting.
	waitFor(t, "every event delivered", func() bool {
		clk.Advance(11 * time.Second)
		return len(rcv.received()) >= 30
	})
	got := perTarget(rcv.received())
	for target, ids := range want {
		if strings.Join(got[target], ",") != strings.Join(ids, ",") {
			t.Errorf("%s received %v, want %v in this order", target, got[target], ids)
		}
	}
	if rcv.badSigs != 0 {
		t.Errorf("%d requests failed the signature check", rcv.badSigs)
	}
	if len(other.received()) != 0 {
		t.Errorf("a webhook for folder.created received %v", other.received())
	}
	var log []quire.WebhookDelivery
	waitFor(t, "every delivery recorded", func() bool {
		log, _ = db.Deliveries(t.Context(), h.ID, "", 100)
		for _, d := range log {
			if d.State != quire.DeliveryDelivered {
				return false
			}
		}
		return len(log) == 30
	})
	retried := 0
	for _, d := range log {
		if d.State != quire.DeliveryDelivered {
			t.Errorf("delivery %s is %s", d.ID, d.State)
		}
		if d.Attempts > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no delivery was retried: the failing answers did not happen")
	}
}

func TestReceiverDownForAMinuteGetsEverythingWhenBack(t *testing.T) {
	db := openDB(t)
	clk := newClock()
	rcv := newReceiver(t)
	addHook(t, db, rcv.URL(), "*")
	rcv.down()
	startWorker(t, &webhook.Worker{Store: db, AllowPrivate: true, Now: clk.Now})
	for i := range 10 {
		change(t, db, clk.Now(), quire.ActionDocumentUpdated, "doc-"+strconv.Itoa(i%3))
	}
	// A minute of the worker's clock with the receiver down: every first
	// attempt and the retries at 10 s and 40 s find nobody.
	for range 12 {
		time.Sleep(30 * time.Millisecond)
		clk.Advance(5 * time.Second)
	}
	if got := rcv.received(); len(got) != 0 {
		t.Fatalf("received %d while down", len(got))
	}
	rcv.up()
	waitFor(t, "the backlog delivered", func() bool {
		clk.Advance(10 * time.Second)
		return len(rcv.received()) >= 10
	})
	time.Sleep(50 * time.Millisecond)
	seen := map[string]int{}
	for _, r := range rcv.received() {
		seen[r.Event]++
	}
	if len(seen) != 10 {
		t.Errorf("received %d distinct events, want 10", len(seen))
	}
}

func TestSlowReceiverDelaysNoOtherReceiver(t *testing.T) {
	db := openDB(t)
	release := make(chan struct{})
	var slowCalls atomic.Int32
	slow := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowCalls.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go slow.Serve(ln)
	t.Cleanup(func() { close(release); slow.Close() })
	addHook(t, db, "http://"+ln.Addr().String()+"/", "*")
	fast := newReceiver(t)
	addHook(t, db, fast.URL(), "*")

	startWorker(t, &webhook.Worker{Store: db, AllowPrivate: true, Timeout: time.Hour})
	for i := range 20 {
		change(t, db, time.Now(), quire.ActionDocumentUpdated, "doc-"+strconv.Itoa(i))
	}
	waitFor(t, "the fast receiver served while the slow one hangs", func() bool { return len(fast.received()) == 20 })
	if slowCalls.Load() == 0 {
		t.Fatal("the slow receiver was never called")
	}
}

func TestPrivateAddressesRefusedAtDelivery(t *testing.T) {
	db := openDB(t)
	rcv := newReceiver(t)
	// Registered behind the service's back, as if DNS had changed since.
	h := addHook(t, db, rcv.URL(), "*")
	startWorker(t, &webhook.Worker{Store: db})
	change(t, db, time.Now(), quire.ActionDocumentUpdated, "doc")
	var log []quire.WebhookDelivery
	waitFor(t, "the attempt recorded", func() bool {
		log, _ = db.Deliveries(t.Context(), h.ID, "", 10)
		return len(log) == 1 && log[0].LastError != ""
	})
	if !strings.Contains(log[0].LastError, "private") || log[0].LastStatus != 0 {
		t.Errorf("delivery %+v: want a refusal naming private addresses", log[0])
	}
	if got := rcv.received(); len(got) != 0 {
		t.Errorf("the private receiver was called: %v", got)
	}
}

func TestRedirectsAreNotFollowedAndAnswersAreCapped(t *testing.T) {
	db := openDB(t)
	target := newReceiver(t)
	var written atomic.Int64
	hooks := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, target.URL(), http.StatusTemporaryRedirect)
			return
		}
		// A receiver that answers without end: the worker reads a bounded
		// part and hangs up.
		chunk := make([]byte, 64<<10)
		for range 1600 { // 100 MiB
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hooks.Serve(ln)
	t.Cleanup(func() { hooks.Close() })
	redirect := addHook(t, db, "http://"+ln.Addr().String()+"/redirect", "*")
	endless := addHook(t, db, "http://"+ln.Addr().String()+"/endless", "*")
	startWorker(t, &webhook.Worker{Store: db, AllowPrivate: true})
	change(t, db, time.Now(), quire.ActionDocumentUpdated, "doc")

	waitFor(t, "both attempts recorded", func() bool {
		a, _ := db.Deliveries(t.Context(), redirect.ID, "", 1)
		b, _ := db.Deliveries(t.Context(), endless.ID, "", 1)
		return len(a) == 1 && a[0].LastStatus != 0 && len(b) == 1 && b[0].State == quire.DeliveryDelivered
	})
	a, _ := db.Deliveries(t.Context(), redirect.ID, "", 1)
	if a[0].LastStatus != http.StatusTemporaryRedirect || a[0].State != quire.DeliveryPending || !strings.Contains(a[0].LastError, "redirect") {
		t.Errorf("redirected delivery %+v: want a failed attempt with 307", a[0])
	}
	if got := target.received(); len(got) != 0 {
		t.Errorf("the redirect was followed: %v", got)
	}
	if n := written.Load(); n >= 100<<20 {
		t.Errorf("the worker read the whole %d-byte answer", n)
	}
}

func TestSignatureIsTheDocumentedHMAC(t *testing.T) {
	at := time.Unix(1764150000, 0)
	body := []byte(`{"event":{}}`)
	mac := hmac.New(sha256.New, []byte("k"))
	mac.Write([]byte("1764150000." + string(body)))
	want := "t=1764150000,v1=" + hex.EncodeToString(mac.Sum(nil))
	if got := webhook.Signature("k", at, body); got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
}
