package live

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"quire"
	"quire/documents"
)

// Close codes of the protocol.
const (
	statusGoingAway = websocket.StatusGoingAway       // 1001: the server shuts down
	statusProtocol  = websocket.StatusPolicyViolation // 1008: not the protocol, or too slow
	statusInternal  = websocket.StatusInternalError   // 1011: the node cannot go on; reconnect
	// StatusAccess closes the connection of a person who lost access
	// (signed out, disabled, role, visibility).
	StatusAccess = websocket.StatusCode(4403)
	// StatusTrashed closes the connections of a document that went to the
	// trash (or was purged).
	StatusTrashed = websocket.StatusCode(4404)
)

// Timeouts of a connection.
const (
	helloWait = 30 * time.Second // for the first message
	writeWait = 10 * time.Second // for one message to be written
	pingEvery = 30 * time.Second // keeps proxies from closing an idle connection
)

// Authorize returns the connection's person as they are now, checked as
// every page checks them (the session still valid, the user enabled):
// EUNAUTHORIZED once they are signed out. The web application gives one
// per connection, bound to its session cookie.
type Authorize func(ctx context.Context) (quire.Actor, error)

// conn is one client's WebSocket connection.
type conn struct {
	svc     *Service
	ws      *websocket.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	doc     string
	client  string
	session *session

	// Guarded by the session's mu once joined.
	actor    quire.Actor
	mayWrite bool
	editing  bool
	cursor   *cursor

	mu      sync.Mutex
	queue   [][]byte
	queued  int // bytes in queue
	largest int // the largest message in queue
	wake    chan struct{}
	closing bool
	// closed is closed once the close handshake that close began is over.
	closed chan struct{}
}

// Check refuses, before an upgrade, an actor who may not see the document
// id: ENOTFOUND (or FORBIDDEN for a role without view), as the document's
// page answers.
func (s *Service) Check(ctx context.Context, a quire.Actor, id string) error {
	_, err := s.docs.Get(ctx, a, id)
	return err
}

// Serve upgrades the request to the live connection of actor a on document
// id, which the caller has checked (Check, the sign-in and the Origin of
// the request), and serves it until it ends.
func (s *Service) Serve(w http.ResponseWriter, r *http.Request, a quire.Actor, id string, authorize Authorize) {
	if ok, perUser := s.admit(a.User.ID); !ok {
		w.Header().Set("Retry-After", "60")
		if perUser {
			http.Error(w, "Too many live connections.", http.StatusTooManyRequests)
		} else {
			http.Error(w, "Too many live connections on this server.", http.StatusServiceUnavailable)
		}
		return
	}
	defer s.leave(a.User.ID)
	// The Origin was checked by the caller, by the rule of the web forms.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered
	}
	ws.SetReadLimit(MaxMessage)
	// The request's context ends with the handler; the connection
	// outlives the request's deadlines.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	c := &conn{svc: s, ws: ws, ctx: ctx, cancel: cancel, doc: id, actor: a, wake: make(chan struct{}, 1),
		closed: make(chan struct{})}
	defer ws.CloseNow()
	s.serve(c, authorize)
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		<-c.closed // the client learns the close code
	}
}

func (s *Service) serve(c *conn, authorize Authorize) {
	hello, ok := c.readHello()
	if !ok {
		return
	}
	c.client = hello.Client
	// The rights checked at the upgrade may be helloWait old by now: they
	// are checked again before anything of the document is sent, and a
	// check the store cannot answer refuses the connection.
	now := c.recheck(authorize)
	switch now {
	case checkGone:
		return
	case checkUnknown:
		c.closeFor(quire.Errorf(quire.EUNAVAILABLE, "The rights could not be checked"))
		return
	}
	c.mayWrite = now == checkOK
	ss, err := s.acquire(c.ctx, c.doc)
	if err != nil {
		c.closeFor(err)
		return
	}
	defer s.release(ss)
	c.session = ss
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.cancel()
	wg.Go(c.write)
	if err := ss.join(c.ctx, c, hello.Version); err != nil {
		ss.leave(c)
		if errors.Is(err, errClientTaken) {
			c.close(statusProtocol, "client")
		} else {
			c.closeFor(err)
		}
		return
	}
	defer ss.leave(c)
	wg.Go(func() { c.watch(ss, authorize) })
	c.read(ss)
}

// readHello reads the first message, which must be a hello.
func (c *conn) readHello() (*incoming, bool) {
	ctx, cancel := context.WithTimeout(c.ctx, helloWait)
	defer cancel()
	typ, data, err := c.ws.Read(ctx)
	if err != nil {
		return nil, false
	}
	var m incoming
	if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil || m.Type != "hello" || !validClient(m.Client) {
		c.ws.Close(statusProtocol, "a hello first")
		return nil, false
	}
	return &m, true
}

// read serves the client's messages until the connection ends.
func (c *conn) read(ss *session) {
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			return // closed, or too large: closed with 1009 by the library
		}
		var m incoming
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
			c.close(statusProtocol, "protocol")
			return
		}
		switch m.Type {
		case "push":
			if m.Version == nil || len(m.Updates) > MaxUpdates || (m.Seq != nil && (*m.Seq < 1 || *m.Seq > maxSeq-MaxUpdates)) {
				ss.mu.Lock()
				if c.editing {
					c.send(refusedMessage("invalid", ss.auth.Count()))
					ss.sendState(c.ctx, c)
				} else {
					// As for any push of a reader's: no state, whose
					// size would be the text's for a message of a few
					// bytes.
					c.send(refusedMessage("readonly", ss.auth.Count()))
				}
				ss.mu.Unlock()
				continue
			}
			raws := make([]json.RawMessage, len(m.Updates))
			for i, u := range m.Updates {
				raws[i] = u.Changes
			}
			var seq int64
			if m.Seq != nil {
				seq = *m.Seq
			}
			if err := ss.push(c.ctx, c, *m.Version, seq, raws); err != nil {
				c.closeFor(err)
				return
			}
		case "cursor":
			if m.Version != nil && m.Anchor != nil && m.Head != nil {
				ss.cursor(c, cursor{Version: *m.Version, Anchor: *m.Anchor, Head: *m.Head})
			}
		default:
			c.close(statusProtocol, "protocol")
			return
		}
	}
}

// closeFor closes the connection after an error of the session: the
// document is gone (4404), the server shuts down (1001), or something
// failed (1011, logged).
func (c *conn) closeFor(err error) {
	switch {
	case quire.ErrorCode(err) == quire.ENOTFOUND:
		c.close(StatusTrashed, "trash")
	case errors.Is(err, errShutdown):
		c.close(statusGoingAway, "shutdown")
	case c.ctx.Err() != nil:
	default:
		c.svc.log.Error("live: connection ended", "document", c.doc, "err", err)
		c.close(statusInternal, "error")
	}
}

// send queues msg for the client. A client that does not keep up (its
// queue is full) is closed: it reconnects with its version. The largest
// message waiting is not counted against Config.QueueBytes, whatever its
// size: the server's messages are bounded by the text's size limit (a
// state, or a write through the API as one change) but may pass
// QueueBytes once encoded (a control character takes six bytes), and
// refusing one would close every connection of the document, again at
// each reconnect. So a connection holds at most QueueBytes and one
// message.
func (c *conn) send(msg []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	largest := max(c.largest, len(msg))
	if len(c.queue) >= queueLen || c.queued+len(msg)-largest > c.svc.cfg.QueueBytes {
		c.closeLocked(statusProtocol, "slow")
		return
	}
	c.queue = append(c.queue, msg)
	c.queued += len(msg)
	c.largest = largest
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// write sends the queued messages, in order, until the connection ends.
func (c *conn) write() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.wake:
		}
		c.mu.Lock()
		msgs := c.queue
		c.queue, c.queued, c.largest = nil, 0, 0
		c.mu.Unlock()
		for _, msg := range msgs {
			ctx, cancel := context.WithTimeout(c.ctx, writeWait)
			err := c.ws.Write(ctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				c.cancel()
				return
			}
		}
	}
}

// close closes the connection with code and reason, once.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(code, reason)
}

func (c *conn) closeLocked(code websocket.StatusCode, reason string) {
	if c.closing {
		return
	}
	c.closing = true
	c.queue, c.queued, c.largest = nil, 0, 0
	go func() {
		// Close waits for the client's answer (at most 5 s); the
		// connection's context ends it at once after that.
		c.ws.Close(code, reason)
		c.cancel()
		close(c.closed)
	}()
}

// watch checks the connection's rights again every Config.Recheck, as the
// pages would at that moment, and pings the client now and then. A person
// who lost access is closed with 4403; a document in the trash with 4404;
// one who may no longer write follows read-only.
func (c *conn) watch(ss *session, authorize Authorize) {
	t := time.NewTicker(c.svc.cfg.Recheck)
	defer t.Stop()
	lastPing := time.Now()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		switch c.recheck(authorize) {
		case checkGone:
			return
		case checkReadOnly:
			if c.mayWrite {
				ss.readOnly(c)
			}
		}
		if time.Since(lastPing) >= pingEvery {
			lastPing = time.Now()
			go func() {
				ctx, cancel := context.WithTimeout(c.ctx, pingEvery)
				defer cancel()
				if c.ws.Ping(ctx) != nil {
					c.cancel()
				}
			}()
		}
	}
}

type checkResult int

const (
	checkOK checkResult = iota // it may read and write
	checkReadOnly
	checkGone    // closed
	checkUnknown // the store could not tell
)

// recheck decides what the connection may do now. An error of the store
// (unavailable) is checkUnknown, which changes nothing for a connection
// already joined: the next check decides.
func (c *conn) recheck(authorize Authorize) checkResult {
	ctx, cancel := context.WithTimeout(c.ctx, c.svc.cfg.Recheck)
	defer cancel()
	a, err := authorize(ctx)
	switch code := quire.ErrorCode(err); {
	case err == nil && a.User.ID != c.actor.User.ID, code == quire.EUNAUTHORIZED, code == quire.EFORBIDDEN:
		c.close(StatusAccess, "access")
		return checkGone
	case err != nil:
		return checkUnknown
	}
	if documents.Require(a, quire.LevelView) != nil {
		c.close(StatusAccess, "access")
		return checkGone
	}
	// The documents service's visibility, in a query that reads no
	// content (a read of none of the changes): the check costs the same
	// for a large document.
	_, err = c.svc.store.LiveChangesSince(ctx, documents.VisibilityOf(a), c.doc, 0, 0)
	switch code := quire.ErrorCode(err); {
	case code == quire.ENOTFOUND:
		if _, terr := c.svc.docs.Trashed(ctx, a, c.doc); terr == nil {
			c.close(StatusTrashed, "trash")
		} else if quire.ErrorCode(terr) == quire.ENOTFOUND {
			c.close(StatusAccess, "access")
		} else {
			return checkUnknown
		}
		return checkGone
	case code == quire.EFORBIDDEN:
		c.close(StatusAccess, "access")
		return checkGone
	case err != nil:
		return checkUnknown
	}
	if documents.Require(a, quire.LevelWrite) != nil {
		return checkReadOnly
	}
	return checkOK
}
