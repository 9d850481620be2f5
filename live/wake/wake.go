// Package wake tells the nodes of a quire that a document has new live
// changes (product.md section 20), so that each node that holds the
// document reads them from the table (quire.LiveStore): a wake-up carries
// a document's id and its count, never a change.
//
// On SQLite there is one process: Local fans out inside it. On PostgreSQL
// New sends each wake-up with NOTIFY on the channel quire_live, as
// "<document id> <count>", and Run listens on a connection of its own in
// every process, reconnecting with backoff when it is lost. What was sent while a
// node did not listen is lost to it, so once it listens again every
// subscriber is told to catch up (Wake.CatchUp) and reads from the table.
//
// A subscriber's channel holds one signal and its Wake coalesces: a slow
// subscriber never blocks the sender or the others, never grows memory, and
// learns at its next Take "new changes up to S".
//
// The selections of the editors (cursors) go between nodes in the payload
// itself, "<document id> c <node> <JSON list>", at most MaxCursors bytes:
// they are not stored (one lost is replaced by the next), and a subscriber
// keeps only the last list of each node until TakeCursors.
package wake

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Channel is the PostgreSQL channel of the wake-ups.
const Channel = "quire_live"

// maxID bounds the document id (and the node name) of a wake-up: the
// payload stays small.
const maxID = 100

// MaxCursors bounds the JSON list of one node's selections on one
// document that SendCursors passes: with the document id and the node's
// name it stays below PostgreSQL's 8,000 bytes of a NOTIFY payload.
const MaxCursors = 7500

// Backoff of the reconnections of the listening connection: from minBackoff,
// doubled at each failure up to maxBackoff, with jitter; back to minBackoff
// once a connection has listened.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// Bus carries wake-ups between the nodes on one database; *postgres.DB is
// one.
type Bus interface {
	// Notify sends payload to every listener of channel, on every node.
	Notify(ctx context.Context, channel, payload string) error
	// Listen listens on channel until ctx is done or the connection fails,
	// and returns why. It calls listening once it listens, then got with
	// each payload, in order.
	Listen(ctx context.Context, channel string, listening func(), got func(payload string)) error
}

// Wake is what a subscriber learns at Take.
type Wake struct {
	// Seq is the highest count announced since the last Take (0: none).
	Seq int64
	// CatchUp says that wake-ups may have been missed (the node was not
	// listening for a while): read from the table, whatever Seq says.
	CatchUp bool
}

// Waker fans wake-ups out to the subscribers of each document: those of
// this process, and through its Bus those of every node.
type Waker struct {
	bus Bus
	log *slog.Logger

	mu   sync.Mutex
	docs map[string]*topic
	// listening says whether the Bus listens now (always with no Bus).
	listening bool
}

// topic holds the subscribers of one document while it has any, and the
// highest count delivered to them: an older or repeated wake-up (this
// node's own, echoed by the database) wakes nobody.
type topic struct {
	seq  int64
	subs map[*Subscription]struct{}
}

// Subscription is one subscriber's wake-ups of one document.
type Subscription struct {
	w   *Waker
	doc string
	c   chan struct{}
	// wake is what the next Take returns, and cursors what the next
	// TakeCursors returns (the last list of each node); guarded by w.mu.
	wake    Wake
	cursors map[string]string
}

// Local returns a Waker that fans out in this process only: quire on
// SQLite, one process.
func Local() *Waker {
	return &Waker{docs: map[string]*topic{}, listening: true}
}

// New returns a Waker whose wake-ups reach every node through bus. It
// hears the other nodes while Run runs.
func New(bus Bus, log *slog.Logger) *Waker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Waker{bus: bus, log: log, docs: map[string]*topic{}}
}

// Shared reports whether other nodes may share the database (a Waker of
// New): what a node knows of a document is then only part of it.
func (w *Waker) Shared() bool { return w.bus != nil }

// Listening reports whether wake-ups from other nodes arrive now.
func (w *Waker) Listening() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.listening
}

// Subscribe returns a subscription to the wake-ups of document doc; close
// it when done.
func (w *Waker) Subscribe(doc string) *Subscription {
	s := &Subscription{w: w, doc: doc, c: make(chan struct{}, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.docs[doc]
	if t == nil {
		t = &topic{subs: map[*Subscription]struct{}{}}
		w.docs[doc] = t
	}
	t.subs[s] = struct{}{}
	return s
}

// C receives a signal when there is something to Take. It holds one
// signal: several wake-ups before a Take are one.
func (s *Subscription) C() <-chan struct{} { return s.c }

// Take returns what the subscriber learnt since the last Take, and clears
// it.
func (s *Subscription) Take() Wake {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	wake := s.wake
	s.wake = Wake{}
	return wake
}

// TakeCursors returns the last list of selections each other node sent
// for the subscription's document since the last TakeCursors (by node
// name; nil when none came), and clears them.
func (s *Subscription) TakeCursors() map[string]string {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	c := s.cursors
	s.cursors = nil
	return c
}

// Close ends the subscription; a document without subscribers leaves
// memory.
func (s *Subscription) Close() {
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := w.docs[s.doc]; t != nil {
		delete(t.subs, s)
		if len(t.subs) == 0 {
			delete(w.docs, s.doc)
		}
	}
}

// signal records wake in s and signals its channel without waiting;
// w.mu is held.
func (s *Subscription) signal(seq int64, catchUp bool) {
	s.wake.Seq = max(s.wake.Seq, seq)
	s.wake.CatchUp = s.wake.CatchUp || catchUp
	select {
	case s.c <- struct{}{}:
	default: // a signal is already waiting
	}
}

// Notify tells every subscriber of document doc, on every node, that its
// live changes are stored up to seq: call it once the append that stored
// them has committed. The subscribers of this process are woken at once;
// the error is the Bus's, when it could not send to the others (who catch
// up at their next wake-up of the document).
func (w *Waker) Notify(ctx context.Context, doc string, seq int64) error {
	if seq < 0 {
		return fmt.Errorf("live wake-up of %q: negative count %d", doc, seq)
	}
	return w.send(ctx, doc, seq)
}

// CatchUp tells every subscriber of document doc, on every node, to read
// it from the table again (Wake.CatchUp): call it once a write of its
// content that did not come from the live text (quire.LiveStore's
// supersession) has committed, which leaves the count as it was.
func (w *Waker) CatchUp(ctx context.Context, doc string) error { return w.send(ctx, doc, catchUpSeq) }

// catchUpSeq is the count of a CatchUp's wake-up: "<document id> -1".
const catchUpSeq = -1

// send delivers seq to the subscribers of doc of this process, then to
// every node's.
func (w *Waker) send(ctx context.Context, doc string, seq int64) error {
	if !validName(doc) {
		return fmt.Errorf("live wake-up: malformed document id %q", doc)
	}
	w.deliver(doc, seq)
	if w.bus == nil {
		return nil
	}
	if err := w.bus.Notify(ctx, Channel, doc+" "+strconv.FormatInt(seq, 10)); err != nil {
		return fmt.Errorf("live wake-up of %s: %w", doc, err)
	}
	return nil
}

// deliver wakes the subscribers of doc with seq, unless they were woken
// with seq or more already; catchUpSeq tells them all to catch up.
func (w *Waker) deliver(doc string, seq int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.docs[doc]
	if t == nil || (seq <= t.seq && seq != catchUpSeq) {
		return
	}
	catchUp := seq == catchUpSeq
	t.seq = max(t.seq, seq)
	for s := range t.subs {
		s.signal(max(seq, 0), catchUp)
	}
}

// SendCursors passes list, the selections of node's connections on
// document doc as JSON (at most MaxCursors bytes), to the subscribers of
// the other nodes (TakeCursors); this process's own are not woken: they
// hold them. A Local Waker has no other node and sends nothing.
func (w *Waker) SendCursors(ctx context.Context, doc, node string, list []byte) error {
	if w.bus == nil {
		return nil
	}
	if !validName(doc) || !validName(node) || len(list) > MaxCursors {
		return fmt.Errorf("live cursors: malformed document %q, node %q or list of %d bytes", doc, node, len(list))
	}
	if err := w.bus.Notify(ctx, Channel, doc+" c "+node+" "+string(list)); err != nil {
		return fmt.Errorf("live cursors of %s: %w", doc, err)
	}
	return nil
}

// validName reports whether s may stand as a word of a payload.
func validName(s string) bool {
	return s != "" && len(s) <= maxID && !strings.ContainsAny(s, " \x00")
}

// deliverCursors keeps list as node's last selections on doc in every
// subscriber of doc, and wakes them.
func (w *Waker) deliverCursors(doc, node, list string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.docs[doc]
	if t == nil {
		return
	}
	for s := range t.subs {
		if s.cursors == nil {
			s.cursors = map[string]string{}
		}
		s.cursors[node] = list
		s.signal(0, false)
	}
}

// got delivers a payload of the Bus; one it cannot read (another
// program's on the channel) is dropped.
func (w *Waker) got(payload string) {
	if doc, rest, ok := strings.Cut(payload, " "); ok {
		if after, ok := strings.CutPrefix(rest, "c "); ok {
			node, list, ok := strings.Cut(after, " ")
			if ok && validName(doc) && validName(node) && len(list) <= MaxCursors {
				w.deliverCursors(doc, node, list)
			}
			return
		}
	}
	doc, n, ok := strings.Cut(payload, " ")
	seq, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || doc == "" || seq < catchUpSeq {
		w.log.Debug("live wake-up: payload dropped", "payload_bytes", len(payload))
		return
	}
	w.deliver(doc, seq)
}

// setListening records whether the Bus listens; once it listens again
// every subscriber is told to catch up.
func (w *Waker) setListening(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.listening = on
	if !on {
		return
	}
	for _, t := range w.docs {
		for s := range t.subs {
			s.signal(0, true)
		}
	}
}

// Run keeps a connection listening on the Bus until ctx is done,
// reconnecting with backoff, and returns when its connection is closed. A
// Local Waker has nothing to run and returns at once. Subscribers of this
// process that subscribed before the connection listens (all of them, at
// first) are told to catch up once it does.
func (w *Waker) Run(ctx context.Context) {
	if w.bus == nil {
		return
	}
	backoff := minBackoff
	for {
		held := false
		err := w.bus.Listen(ctx, Channel, func() {
			held = true
			w.setListening(true)
		}, w.got)
		w.setListening(false)
		if ctx.Err() != nil {
			return
		}
		if held {
			backoff = minBackoff
		}
		// Jitter (half the backoff): the nodes that lost the database
		// together do not come back in step.
		wait := backoff/2 + rand.N(backoff/2+1)
		w.log.Warn("live wake-ups: not listening; reconnecting", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}
