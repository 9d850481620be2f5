// Package live is the live editing server (product.md section 20): the
// central authority of @codemirror/collab for each document being edited
// on this node, its WebSocket connections, the versions made from the live
// text, and presence.
//
// A document being edited on a node is a session: its text and count in a
// changeset.Authority under the session's lock, rebuilt from the store
// (quire.LiveStore) when its first connection arrives and dropped when its
// last one leaves. A push is checked (Prepare), stored (AppendLive, which
// only stores on top of the count: the database decides between nodes),
// then accepted (Commit) and passed to every connection of the document on
// this node; other nodes learn of it through live/wake and read the rows.
// The server never trusts a client's count or positions.
//
// Rights are checked where they are used: every connection is checked
// again every second (its session, its user, role and the document's
// visibility and trash) through the same services the pages use.
//
// The protocol is README's "Live editing" section.
package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"quire"
	"quire/documents"
	"quire/live/changeset"
	"quire/live/wake"
)

// Limits of section 20.
const (
	// MaxEditors is how many connections of one document edit at once on a
	// node; the next ones follow it read-only.
	MaxEditors = 50
	// MaxMessage bounds a message a client sends, in bytes: a larger one
	// closes its connection with 1009.
	MaxMessage = 64 << 10
	// MaxUpdates is how many changes one push holds at most.
	MaxUpdates = quire.MaxLiveBatch
	// MaxClientID bounds the client id of a hello, in bytes.
	MaxClientID = quire.MaxLiveClientID
)

// Bounds of memory.
const (
	// keep and keepBytes bound the updates a session keeps in memory for
	// clients that reconnect (changeset.Limits); older ones are read from
	// the store.
	keep      = 1000
	keepBytes = 1 << 20
	// queueLen bounds the messages waiting to be sent on one connection
	// (and Config.QueueBytes their bytes): a connection that cannot keep
	// up is closed (1008, "slow"), never buffered without end. The client
	// reconnects with its version.
	queueLen = 256
	// trimStep is how many stored changes one TrimLive deletes.
	trimStep = 500
	// presenceBeat is how often a node writes who it has on a document
	// while that does not change, and presenceTTL how long the others
	// believe it (wall-clock time): a node that dies drops out of presence
	// once its rows are older.
	presenceBeat = 5 * time.Second
	presenceTTL  = 15 * time.Second
)

// Store is what the live server needs from persistence; quire.Store
// satisfies it.
type Store interface {
	quire.LiveStore
	// Recording returns the store whose SaveLive records evs with the
	// save (quire.AuditLog): the document.updated event of a version from
	// the live text, which queues its notifications.
	Recording(evs ...*quire.Event) quire.Store
	// Document reads a document (its title, for the event of a save).
	Document(ctx context.Context, vis quire.Visibility, id string) (*quire.Document, error)
}

// Config configures a Service. Zero values take the defaults of section
// 20.
type Config struct {
	// Now is the clock of the versions (time.Now when nil): a save comes
	// Pause after the last change, or MaxUnsaved after the first change
	// not yet in a version. Tests set it so that they need not wait.
	Now func() time.Time
	// Pause is how long editing pauses before the live text becomes a
	// version (30 s).
	Pause time.Duration
	// MaxUnsaved is how long changes stay out of a version at most while
	// editing goes on (10 min).
	MaxUnsaved time.Duration
	// Tick is how often (real time) a session looks at Now to save (1 s).
	Tick time.Duration
	// Recheck is how often (real time) a connection's rights are checked
	// again (1 s: a change of rights ends a connection within 2 s).
	Recheck time.Duration
	// CursorEvery throttles the cursors sent to a document's connections
	// (100 ms).
	CursorEvery time.Duration
	// QueueBytes bounds the bytes waiting to be sent on one connection (8
	// MiB): a connection that does not read them is closed.
	QueueBytes int
	// MaxText is the size limit of a document's text in bytes (2 MiB, the
	// API's body limit).
	MaxText int
	// MaxPerPerson bounds the live connections of one person on a node
	// (20), and MaxConnections those of the node (5,000): each costs a
	// check of its rights every second. Beyond, the upgrade is answered
	// 429 or 503 with Retry-After.
	MaxPerPerson   int
	MaxConnections int
	// Waker wakes the nodes of the database when a document has new
	// changes (wake.New on PostgreSQL); wake.Local() when nil.
	Waker *wake.Waker
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Pause, 30*time.Second)
	def(&c.MaxUnsaved, 10*time.Minute)
	def(&c.Tick, time.Second)
	def(&c.Recheck, time.Second)
	def(&c.CursorEvery, 100*time.Millisecond)
	if c.MaxPerPerson <= 0 {
		c.MaxPerPerson = 20
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = 5000
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = 8 << 20
	}
	if c.MaxText <= 0 {
		c.MaxText = 2 << 20
	}
	if c.Waker == nil {
		c.Waker = wake.Local()
	}
	return c
}

// Service holds the sessions of the documents edited live on this node.
type Service struct {
	store Store
	docs  *documents.Service
	cfg   Config
	log   *slog.Logger
	// node names this process in the presence it shares with the others.
	node string

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	// conns counts the open connections, and perUser those of each person.
	conns   int
	perUser map[string]int
	wg      sync.WaitGroup // the sessions' loops
}

// New returns the live server over store, with docs deciding who may see
// and write a document.
func New(store Store, docs *documents.Service, cfg Config, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	node := make([]byte, 12)
	rand.Read(node)
	return &Service{store: store, docs: docs, cfg: cfg.withDefaults(), log: log, node: hex.EncodeToString(node),
		sessions: map[string]*session{}, perUser: map[string]int{}}
}

// Person is someone on a document, as presence names them.
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Presence is who has a document open live on this node (Viewing:
// everyone, editors included) and who of them edits it (Editing: those
// holding one of its MaxEditors seats), each once, in the order they came.
type Presence struct {
	Viewing []Person `json:"viewing"`
	Editing []Person `json:"editing"`
}

// Presence returns who is on the document id, for an actor who may see it
// (ENOTFOUND otherwise, as every document route): the people on this
// node, and when the database is shared (PostgreSQL), those the other
// nodes listed in the last presenceTTL (each node writes its own every
// presenceBeat, and when it changes, within a second).
func (s *Service) Presence(ctx context.Context, a quire.Actor, id string) (*Presence, error) {
	if _, err := s.docs.Get(ctx, a, id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		p := Presence{Viewing: []Person{}, Editing: []Person{}}
		if s.cfg.Waker.Shared() {
			others, err := s.store.LivePresence(ctx, id, s.node, time.Now().Add(-presenceTTL))
			if err != nil {
				return nil, err
			}
			p.add(others)
		}
		return &p, nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	p := ss.presence()
	return &p, nil
}

// Sessions returns how many documents this node holds in memory.
func (s *Service) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Shutdown closes every connection with 1001 (going away) and saves the
// live text of every document not yet in a version, then returns; new
// connections are refused from then on.
func (s *Service) Shutdown(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.mu.Lock()
		for c := range ss.conns {
			c.close(statusGoingAway, "shutdown")
		}
		ss.mu.Unlock()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

var errShutdown = errors.New("live: the server is shutting down")

// acquire returns the session of document id, loading it when this node
// holds none, with one more connection counted on it.
func (s *Service) acquire(ctx context.Context, id string) (*session, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errShutdown
	}
	ss := s.sessions[id]
	if ss == nil {
		ss = newSession(s, id)
		s.sessions[id] = ss
	}
	ss.refs++
	s.mu.Unlock()
	if err := ss.ready(ctx); err != nil {
		s.release(ss)
		return nil, err
	}
	return ss, nil
}

// release counts one connection less on ss; the last one out ends the
// session: its loop saves the text and it leaves memory.
func (s *Service) release(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.refs--
	if ss.refs == 0 {
		if s.sessions[ss.id] == ss {
			delete(s.sessions, ss.id)
		}
		close(ss.done)
	}
}

// admit counts a connection of user, or reports which bound refuses it.
func (s *Service) admit(user string) (ok, perUser bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.perUser[user] >= s.cfg.MaxPerPerson:
		return false, true
	case s.conns >= s.cfg.MaxConnections:
		return false, false
	}
	s.conns++
	s.perUser[user]++
	return true, false
}

// leave counts a connection of user less.
func (s *Service) leave(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns--
	if s.perUser[user]--; s.perUser[user] <= 0 {
		delete(s.perUser, user)
	}
}

// authority limits of a session.
func (s *Service) limits(text string) changeset.Limits {
	return changeset.Limits{MaxText: max(s.cfg.MaxText, len(text)), Keep: keep, KeepBytes: keepBytes}
}
