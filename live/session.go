package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"quire"
	"quire/live/changeset"
	"quire/live/wake"
)

// all is the visibility of the session's own reads and writes: who may see
// and write the document is checked per connection, by the documents
// service, before and while it is open.
var all = quire.Visibility{All: true}

// session is one document edited live on this node. Its fields below mu
// are guarded by mu: a push holds it from Prepare to the fan-out, so that
// every connection receives the changes in the order of the count.
type session struct {
	svc  *Service
	id   string
	refs int // connections counted by Service.acquire; Service.mu guards it
	done chan struct{}

	loadOnce sync.Once
	loadErr  error

	mu   sync.Mutex
	auth *changeset.Authority
	// length is the text's, in UTF-16 units.
	length int
	// tolerant skips the stored changes that do not apply (while the
	// session loads).
	tolerant bool
	// base is the count the stored content includes; saved the stored
	// content, updatedAt its updated_at (the guard of the next save).
	base      int64
	saved     string
	updatedAt time.Time
	// lastChange is when the last change was accepted (any node's), and
	// firstUnsaved when the first change after base was (Config.Now).
	lastChange, firstUnsaved time.Time
	// lastAuthor is who made the last change this node accepted, the
	// author of the version's event.
	lastAuthor *quire.Actor
	conns      map[*conn]struct{}
	joined     []*conn // in the order they came, for presence and seats
	editors    int
	sentPres   []byte // the last presence sent
	cursorsDue bool   // a cursors message is scheduled
	sub        *wake.Subscription
	// others are the people the other nodes have on the document, and
	// wrote what this node last wrote of its own, at wroteAt (presence
	// across nodes, when the database is shared).
	others  []quire.LivePresent
	wrote   []quire.LivePresent
	wroteAt time.Time
	// remote are the selections of the other nodes' connections, by
	// node; shared is the list of this node's own it last sent them, at
	// sharedAt (selections across nodes, when the database is shared).
	remote   map[string]remoteCursors
	shared   []byte
	sharedAt time.Time
}

// remoteCursors are the last selections a node sent, and when they came.
type remoteCursors struct {
	list []cursorOut
	at   time.Time
}

func newSession(s *Service, id string) *session {
	return &session{svc: s, id: id, done: make(chan struct{}), conns: map[*conn]struct{}{}}
}

// ready loads the session once, and starts its loop.
func (ss *session) ready(ctx context.Context) error {
	ss.loadOnce.Do(func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		// Subscribed before reading: a change stored meanwhile wakes it.
		ss.sub = ss.svc.cfg.Waker.Subscribe(ss.id)
		if ss.loadErr = ss.load(ctx); ss.loadErr != nil {
			ss.sub.Close()
			return
		}
		ss.svc.wg.Add(1)
		go ss.loop()
	})
	return ss.loadErr
}

// load rebuilds the text and count from the store: the content, then the
// stored changes after its base, page by page.
func (ss *session) load(ctx context.Context) error {
	st, err := ss.svc.store.LiveState(ctx, all, ss.id, quire.MaxLivePage)
	if err != nil {
		return err
	}
	if st.Base == 0 && st.Seq == 0 {
		// A save of the text as stored marks the document live (it writes
		// nothing else): from then on, every node's writes of its content
		// are applied to the live text as changes (README, "Live editing").
		_, err := ss.svc.store.SaveLive(ctx, all, ss.id, st.UpdatedAt, "", 0, st.Content, ss.svc.cfg.Now())
		if quire.ErrorCode(err) == quire.EDOCUMENTCONFLICT {
			st, err = ss.svc.store.LiveState(ctx, all, ss.id, quire.MaxLivePage)
		}
		if err != nil {
			return err
		}
	}
	a, err := changeset.NewAuthority(st.Content, int(st.Base), ss.svc.limits(st.Content))
	if err != nil {
		return fmt.Errorf("live: document %s: %w", ss.id, err)
	}
	ss.auth, ss.length, ss.base, ss.saved, ss.updatedAt = a, utf16Len(st.Content), st.Base, st.Content, st.UpdatedAt
	ss.firstUnsaved = time.Time{}
	ss.tolerant = true
	defer func() { ss.tolerant = false }()
	if _, err := ss.apply(st.Changes); err != nil {
		return err
	}
	_, err = ss.readMore(ctx)
	return err
}

// apply accepts stored changes (the next numbers of the count) into the
// authority and returns them as updates.
func (ss *session) apply(changes []quire.LiveChange) ([]update, error) {
	out := make([]update, 0, len(changes))
	for _, c := range changes {
		if c.Seq != int64(ss.auth.Count())+1 {
			return nil, fmt.Errorf("live: document %s: stored change %d follows count %d", ss.id, c.Seq, ss.auth.Count())
		}
		cs, err := changeset.Parse(c.Change)
		if err == nil {
			_, err = ss.auth.Receive(ss.auth.Count(), c.ClientID, []changeset.ChangeSet{cs})
		}
		if err != nil && ss.tolerant {
			// A change stored on top of a write of the content that
			// superseded the stored changes (livesql.ContentWritten, when
			// the live text could not be rebuilt), made on the text before
			// it: the write wins, and the change counts as none.
			ss.svc.log.Error("live: a stored change does not apply to the content; skipped", "document", ss.id,
				"seq", c.Seq, "err", err)
			cs = changeset.Identity(ss.length)
			c.Change, err = cs.MarshalJSON()
			if err == nil {
				_, err = ss.auth.Receive(ss.auth.Count(), c.ClientID, []changeset.ChangeSet{cs})
			}
		}
		if err != nil {
			return nil, fmt.Errorf("live: document %s: stored change %d: %w", ss.id, c.Seq, err)
		}
		ss.length = cs.NewLen()
		out = append(out, update{Client: c.ClientID, User: c.UserID, Changes: c.Change})
	}
	if len(changes) > 0 {
		ss.changed()
	}
	return out, nil
}

// readMore reads and applies the stored changes after the count, page by
// page, and returns them. ErrLiveTrimmed when they are superseded.
func (ss *session) readMore(ctx context.Context) ([]update, error) {
	var out []update
	for {
		changes, err := ss.svc.store.LiveChangesSince(ctx, all, ss.id, int64(ss.auth.Count()), quire.MaxLivePage)
		if err != nil || len(changes) == 0 {
			return out, err
		}
		ups, err := ss.apply(changes)
		if err != nil {
			return out, err
		}
		out = append(out, ups...)
	}
}

// changed records that a change was accepted now.
func (ss *session) changed() {
	now := ss.svc.cfg.Now()
	ss.lastChange = now
	if ss.firstUnsaved.IsZero() {
		ss.firstUnsaved = now
	}
}

// catchUp reads the changes other nodes stored after the count and passes
// them to every connection; when they were superseded by a write of the
// content (or cannot be read as changes), the session starts again from
// the store and every connection gets the state. ss.mu is held.
func (ss *session) catchUp(ctx context.Context) error {
	from := ss.auth.Count()
	ups, err := ss.readMore(ctx)
	if len(ups) > 0 {
		ss.broadcast(updatesMessage(from, ups))
	}
	if err == nil {
		return nil
	}
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return err
	}
	ss.svc.log.Info("live: document starts again from the store", "document", ss.id, "err", err)
	return ss.resync(ctx)
}

// resync rebuilds the session from the store and sends the state to every
// connection. ss.mu is held.
func (ss *session) resync(ctx context.Context) error {
	if err := ss.load(ctx); err != nil {
		return err
	}
	for c := range ss.conns {
		ss.sendState(ctx, c)
	}
	return nil
}

// errClientTaken refuses a hello whose client id another person's
// connection of the document has.
var errClientTaken = errors.New("live: the client id is another person's")

// join adds c to the session, answering its hello: the state for a fresh
// client or one whose version is too old, else the updates after its
// version (none, when it has them all), or errClientTaken.
func (ss *session) join(ctx context.Context, c *conn, version *int64) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if version != nil && *version > int64(ss.auth.Count()) {
		// Another node may have stored what the client saw there.
		if err := ss.catchUp(ctx); err != nil {
			return err
		}
	}
	// A client id is the client's to choose, and everyone here sees the
	// others': one taken by another person's connection is refused, or
	// that person's changes would arrive as this client's own, which its
	// editor takes as confirmations of the changes it has not yet had
	// accepted, and drops.
	for o := range ss.conns {
		if o.client == c.client && o.actor.User.ID != c.actor.User.ID {
			return errClientTaken
		}
	}
	if c.mayWrite && ss.editors < MaxEditors {
		c.editing = true
		ss.editors++
	}
	ss.conns[c] = struct{}{}
	ss.joined = append(ss.joined, c)
	if msg := ss.since(ctx, version); msg != nil {
		c.send(msg)
	} else {
		ss.sendState(ctx, c)
	}
	ss.presenceChanged()
	return nil
}

// since returns the updates message after version, or nil when the
// client needs the state. ss.mu is held.
func (ss *session) since(ctx context.Context, version *int64) []byte {
	count := int64(ss.auth.Count())
	if version == nil || *version < 0 || *version > count || count-*version > quire.MaxLivePage {
		return nil
	}
	from := int(*version)
	if mem, err := ss.auth.Since(from); err == nil {
		ups := make([]update, len(mem))
		for i, u := range mem {
			raw, err := u.Changes.MarshalJSON()
			if err != nil {
				return nil
			}
			ups[i] = update{Client: u.Client, Changes: raw}
		}
		// The ring keeps no user: read them from the store when
		// there are any.
		if len(ups) > 0 {
			stored, err := ss.svc.store.LiveChangesSince(ctx, all, ss.id, int64(from), quire.MaxLivePage)
			if err == nil && len(stored) == len(ups) {
				for i := range ups {
					ups[i].User = stored[i].UserID
				}
			}
		}
		return updatesMessage(from, ups)
	}
	stored, err := ss.svc.store.LiveChangesSince(ctx, all, ss.id, int64(from), quire.MaxLivePage)
	if err != nil || int64(len(stored)) != count-int64(from) {
		return nil
	}
	ups := make([]update, len(stored))
	for i, c := range stored {
		ups[i] = update{Client: c.ClientID, User: c.UserID, Changes: c.Change}
	}
	return updatesMessage(from, ups)
}

// leave removes c from the session.
func (ss *session) leave(c *conn) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.conns[c]; !ok {
		return
	}
	delete(ss.conns, c)
	for i, o := range ss.joined {
		if o == c {
			ss.joined = append(ss.joined[:i], ss.joined[i+1:]...)
			break
		}
	}
	if c.editing && c.cursor != nil {
		ss.cursorsLater() // its selection leaves the others' editors, here and on the other nodes
	}
	if c.editing {
		c.editing = false
		ss.editors--
		if ss.editors == 0 {
			// The last editor left: the text becomes a version (the
			// loop saves it too when the session ends).
			ss.saveLocked(context.WithoutCancel(c.ctx))
		}
	}
	ss.presenceChanged()
}

// readOnly takes c's seat: it lost the right to write; it follows
// read-only from the state it is sent.
func (ss *session) readOnly(c *conn) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	c.mayWrite = false
	if !c.editing {
		return
	}
	c.editing = false
	ss.editors--
	ss.sendState(c.ctx, c)
	ss.presenceChanged()
	if c.cursor != nil {
		// Its selection leaves the others' editors.
		c.cursor = nil
		ss.cursorsLater()
	}
}

// refusal answers a push that was not accepted.
type refusal struct {
	reason string
	resync bool // a state follows
}

// sendState sends c the whole text, with the number of c's last change
// that the text holds (quire.LiveClient): the client drops its changes up
// to it and rebases only the rest, so that a change whose confirmation it
// never got is not applied twice. When another node stored that change
// after this session's count, the session catches up first (catchUp), so
// that the number matches the text. When the number cannot be read,
// the connection is closed (1011): the client reconnects and asks again,
// rather than rebase a change that may be in the text. ss.mu is held.
func (ss *session) sendState(ctx context.Context, c *conn) {
	// Not bound to the connection whose message led here: a state for
	// every connection (resync) must not fail because that one went.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeWait)
	defer cancel()
	cl, err := ss.svc.store.LiveClient(ctx, ss.id, c.actor.User.ID, c.client)
	if err == nil && cl.At > int64(ss.auth.Count()) {
		// A wake-up not heard yet (or lost): catch up, which passes the
		// changes to everyone, or the state after a reload from the store
		// (the changes trimmed), c included.
		err = ss.catchUp(ctx)
		if err == nil && cl.At > int64(ss.auth.Count()) {
			err = fmt.Errorf("live: document %s: client %q's change %d is beyond the stored count %d", ss.id, c.client, cl.At, ss.auth.Count())
		}
	}
	if err != nil {
		if c.ctx.Err() == nil {
			ss.svc.log.Warn("live: the number of a client's last change not read", "document", ss.id, "err", err)
		}
		c.close(statusInternal, "error")
		return
	}
	c.send(ss.stateMessage(c, cl.Seq))
}

// push accepts changes c made on count version, or refuses them. seq is
// the client's number of the first (0: the client numbers none).
func (ss *session) push(ctx context.Context, c *conn, version, seq int64, raws []json.RawMessage) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	count := ss.auth.Count()
	refuse := func(r refusal) error {
		c.send(refusedMessage(r.reason, count))
		if r.resync {
			ss.sendState(ctx, c)
		}
		return nil
	}
	switch {
	case !c.editing:
		return refuse(refusal{reason: "readonly"})
	case len(raws) == 0 || len(raws) > MaxUpdates || version < 0 || version > int64(count):
		return refuse(refusal{reason: "invalid", resync: true})
	case version < int64(count):
		// The client will have the updates it misses (they are on their
		// way to it) and rebases.
		return refuse(refusal{reason: "behind"})
	}
	changes := make([]changeset.ChangeSet, len(raws))
	for i, raw := range raws {
		cs, err := changeset.Parse(raw)
		if err != nil {
			return refuse(refusal{reason: "invalid", resync: true})
		}
		changes[i] = cs
	}
	b, err := ss.auth.Prepare(count, c.client, changes)
	switch {
	case errors.Is(err, changeset.ErrTooLarge):
		return refuse(refusal{reason: "too_large"})
	case err != nil:
		return refuse(refusal{reason: "invalid", resync: true})
	}
	rows := make([]quire.LiveChange, len(changes))
	ups := make([]update, len(changes))
	for i, cs := range b.Changes() {
		raw, err := cs.MarshalJSON()
		if err != nil {
			return err
		}
		rows[i] = quire.LiveChange{Change: raw, ClientID: c.client, UserID: c.actor.User.ID}
		if seq > 0 {
			rows[i].ClientSeq = seq + int64(i)
		}
		ups[i] = update{Client: c.client, User: c.actor.User.ID, Changes: raw}
	}
	// Stored before anything is confirmed: the count is the database's.
	err = ss.svc.store.AppendLive(ctx, all, ss.id, int64(count), rows, ss.svc.cfg.Now())
	if errors.Is(err, quire.ErrLiveBehind) {
		// Another node took that count: catch up (the client gets the
		// changes it misses) and let it rebase.
		if err := ss.catchUp(ctx); err != nil {
			return err
		}
		count = ss.auth.Count()
		return refuse(refusal{reason: "behind"})
	}
	if errors.Is(err, quire.ErrLiveRepeated) {
		// Accepted already, its confirmation lost: the state says up to
		// which number, and the client drops those.
		return refuse(refusal{reason: "repeated", resync: true})
	}
	if err != nil {
		return err
	}
	if err := ss.auth.Commit(b); err != nil {
		return err // cannot happen: the lock is held since Prepare
	}
	ss.length = changes[len(changes)-1].NewLen()
	ss.changed()
	actor := c.actor
	ss.lastAuthor = &actor
	ss.broadcast(updatesMessage(count, ups))
	if err := ss.svc.cfg.Waker.Notify(ctx, ss.id, int64(ss.auth.Count())); err != nil {
		ss.svc.log.Warn("live: wake-up not sent", "document", ss.id, "err", err)
	}
	return nil
}

// broadcast sends msg to every connection of the session. ss.mu is held.
func (ss *session) broadcast(msg []byte) {
	for c := range ss.conns {
		c.send(msg)
	}
}

// presence is who is on the document: this node's people, then those of
// the other nodes. ss.mu is held.
func (ss *session) presence() Presence {
	p := Presence{Viewing: []Person{}, Editing: []Person{}}
	p.add(ss.local())
	p.add(ss.others)
	return p
}

// local is who this node has on the document, each once, in the order
// they came. ss.mu is held.
func (ss *session) local() []quire.LivePresent {
	out := []quire.LivePresent{}
	at := map[string]int{}
	for _, c := range ss.joined {
		i, ok := at[c.actor.User.ID]
		if !ok {
			i = len(out)
			at[c.actor.User.ID] = i
			out = append(out, quire.LivePresent{UserID: c.actor.User.ID, Name: c.actor.User.Name})
		}
		out[i].Editing = out[i].Editing || c.editing
	}
	return out
}

// add lists people not listed yet.
func (p *Presence) add(people []quire.LivePresent) {
	for _, u := range people {
		person := Person{ID: u.UserID, Name: u.Name}
		if !slices.ContainsFunc(p.Viewing, func(o Person) bool { return o.ID == u.UserID }) {
			p.Viewing = append(p.Viewing, person)
		}
		if u.Editing && !slices.ContainsFunc(p.Editing, func(o Person) bool { return o.ID == u.UserID }) {
			p.Editing = append(p.Editing, person)
		}
	}
}

// sharePresence writes who this node has on the document when that
// changed or presenceBeat passed, and reads who the other nodes have,
// sending the presence to everyone here when it changed. The store is
// called without ss.mu.
func (ss *session) sharePresence(ctx context.Context, leaving bool) {
	store, node := ss.svc.store, ss.svc.node
	ss.mu.Lock()
	mine := ss.local()
	if leaving {
		mine = nil
	}
	due := leaving || !slices.Equal(mine, ss.wrote) || time.Since(ss.wroteAt) >= presenceBeat
	ss.mu.Unlock()
	if due {
		if err := store.SetLivePresence(ctx, ss.id, node, mine, time.Now()); err != nil {
			ss.svc.log.Warn("live: presence not shared", "document", ss.id, "err", err)
		} else {
			ss.mu.Lock()
			ss.wrote, ss.wroteAt = mine, time.Now()
			ss.mu.Unlock()
		}
	}
	if leaving {
		return
	}
	others, err := store.LivePresence(ctx, ss.id, node, time.Now().Add(-presenceTTL))
	if err != nil {
		ss.svc.log.Warn("live: presence of the other nodes not read", "document", ss.id, "err", err)
		return
	}
	ss.mu.Lock()
	ss.others = others
	ss.presenceChanged()
	ss.mu.Unlock()
}

// presenceChanged sends the presence to everyone when it changed. ss.mu is
// held.
func (ss *session) presenceChanged() {
	p := ss.presence()
	msg := mustJSON(struct {
		Type string `json:"type"`
		Presence
	}{"presence", p})
	if bytes.Equal(msg, ss.sentPres) {
		return
	}
	ss.sentPres = msg
	ss.broadcast(msg)
}

// cursor records c's cursor and schedules the cursors message. Only an
// editor's selection is shown to the others: a read-only connection (a
// follower, or an editor beyond MaxEditors) is not there to be followed,
// and no client can make a label appear by sending one.
func (ss *session) cursor(c *conn, cur cursor) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !c.editing {
		return
	}
	if cur.Version < 0 || cur.Version > int64(ss.auth.Count()) || cur.Anchor < 0 || cur.Head < 0 {
		return // not a cursor of this document
	}
	if cur.Version == int64(ss.auth.Count()) {
		if cur.Anchor > ss.length || cur.Head > ss.length {
			return
		}
	}
	c.cursor = &cur
	ss.cursorsLater()
}

// cursorsLater sends the cursors in Config.CursorEvery, unless that is
// scheduled already: at most one cursors message per CursorEvery and
// document on a node, to its connections and to the other nodes. ss.mu is
// held.
func (ss *session) cursorsLater() {
	if ss.cursorsDue {
		return
	}
	ss.cursorsDue = true
	time.AfterFunc(ss.svc.cfg.CursorEvery, ss.sendCursors)
}

// sendCursors sends every connection's last cursor, and those of the
// other nodes, to everyone here; when the database is shared, and this
// node's own changed, it sends them to the other nodes (wake.SendCursors,
// without ss.mu).
func (ss *session) sendCursors() {
	ss.mu.Lock()
	ss.cursorsDue = false
	list := ss.localCursors()
	share := ss.cursorsToShare(list, false)
	nodes := slices.Sorted(maps.Keys(ss.remote))
	for _, node := range nodes {
		list = append(list, ss.remote[node].list...)
	}
	ss.broadcast(mustJSON(struct {
		Type    string      `json:"type"`
		Cursors []cursorOut `json:"cursors"`
	}{"cursors", list}))
	ss.mu.Unlock()
	ss.shareCursors(share)
}

// localCursors are the last cursors of this node's connections, in the
// order they came. ss.mu is held.
func (ss *session) localCursors() []cursorOut {
	list := []cursorOut{}
	for _, c := range ss.joined {
		if cur := c.cursor; cur != nil && c.editing {
			list = append(list, cursorOut{Client: c.client, User: Person{ID: c.actor.User.ID, Name: c.actor.User.Name},
				Version: cur.Version, Anchor: cur.Anchor, Head: cur.Head})
		}
	}
	return list
}

// cursorsToShare returns the list of this node's cursors to send the
// other nodes, as JSON of at most wake.MaxCursors bytes (the first ones
// that fit), or nil when there is nothing to send: the database is not
// shared, or the list is the one sent last, less than presenceBeat ago
// (or at all, unless beat). ss.mu is held.
func (ss *session) cursorsToShare(list []cursorOut, beat bool) []byte {
	if !ss.svc.cfg.Waker.Shared() {
		return nil
	}
	out := []byte{'['}
	for _, c := range list {
		b := mustJSON(c)
		if len(out)+len(b)+2 > wake.MaxCursors {
			break
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	out = append(out, ']')
	if ss.shared == nil && len(list) == 0 {
		return nil // nothing was sent, nothing to take back
	}
	if bytes.Equal(out, ss.shared) && (!beat || len(list) == 0 || time.Since(ss.sharedAt) < presenceBeat) {
		return nil
	}
	ss.shared, ss.sharedAt = out, time.Now()
	return out
}

// shareCursors sends list to the other nodes, when there is one to send.
// ss.mu is not held.
func (ss *session) shareCursors(list []byte) {
	if list == nil {
		return
	}
	if err := ss.svc.cfg.Waker.SendCursors(context.Background(), ss.id, ss.svc.node, list); err != nil {
		ss.svc.log.Warn("live: cursors not passed to the other nodes", "document", ss.id, "err", err)
	}
}

// remoteCursorsCame keeps the cursors the other nodes sent (by node: the
// JSON of each one's list) and schedules them to everyone here. A list
// that does not read is dropped. ss.mu is held.
func (ss *session) remoteCursorsCame(lists map[string]string) {
	for node, raw := range lists {
		if node == ss.svc.node {
			continue // this node's own, echoed by the database
		}
		var list []cursorOut
		if json.Unmarshal([]byte(raw), &list) != nil {
			continue
		}
		list = slices.DeleteFunc(list, func(c cursorOut) bool {
			return !validClient(c.Client) || c.Version < 0 || c.Anchor < 0 || c.Head < 0
		})
		if ss.remote == nil {
			ss.remote = map[string]remoteCursors{}
		}
		if len(list) == 0 {
			delete(ss.remote, node)
		} else {
			ss.remote[node] = remoteCursors{list: list, at: time.Now()}
		}
		ss.cursorsLater()
	}
}

// beatCursors sends this node's cursors to the other nodes again when
// they were sent presenceBeat ago (others forget a node's cursors
// presenceTTL after they last came: a node that dies without saying so),
// and forgets those of other nodes that are older. ss.mu is not held.
func (ss *session) beatCursors() {
	ss.mu.Lock()
	share := ss.cursorsToShare(ss.localCursors(), true)
	for node, r := range ss.remote {
		if time.Since(r.at) >= presenceTTL {
			delete(ss.remote, node)
			ss.cursorsLater()
		}
	}
	ss.mu.Unlock()
	ss.shareCursors(share)
}

// loop wakes the session: on another node's changes, every Config.Recheck
// to find a write of the content that was not live, and at every tick to
// save the live text when editing paused (Config.Pause) or has gone on for
// Config.MaxUnsaved. Once the last connection left it saves, trims and
// ends: the session leaves memory.
func (ss *session) loop() {
	defer ss.svc.wg.Done()
	defer ss.sub.Close()
	tick := time.NewTicker(ss.svc.cfg.Tick)
	defer tick.Stop()
	check := time.NewTicker(ss.svc.cfg.Recheck)
	defer check.Stop()
	ctx := context.Background()
	for {
		select {
		case <-ss.done:
			ss.mu.Lock()
			ss.saveLocked(ctx)
			ss.mu.Unlock()
			if ss.svc.cfg.Waker.Shared() {
				ss.sharePresence(ctx, true)
				ss.mu.Lock()
				share := ss.cursorsToShare(nil, false) // none left here
				ss.mu.Unlock()
				ss.shareCursors(share)
			}
			return
		case <-ss.sub.C():
			w := ss.sub.Take()
			ss.mu.Lock()
			if lists := ss.sub.TakeCursors(); lists != nil {
				ss.remoteCursorsCame(lists)
			}
			if w.CatchUp || w.Seq > int64(ss.auth.Count()) {
				if err := ss.catchUp(ctx); err != nil {
					ss.failed(err)
				}
			}
			ss.mu.Unlock()
		case <-check.C:
			// Once per document, not per connection: a write of the
			// content that was not live (written).
			if d, err := ss.svc.store.Document(ctx, all, ss.id); err == nil {
				ss.written(ctx, d.UpdatedAt)
			}
			if ss.svc.cfg.Waker.Shared() {
				ss.sharePresence(ctx, false)
				ss.beatCursors()
			}
		case <-tick.C:
			ss.mu.Lock()
			now := ss.svc.cfg.Now()
			if !ss.firstUnsaved.IsZero() && (!now.Before(ss.lastChange.Add(ss.svc.cfg.Pause)) ||
				!now.Before(ss.firstUnsaved.Add(ss.svc.cfg.MaxUnsaved))) {
				ss.saveLocked(ctx)
			}
			ss.mu.Unlock()
		}
	}
}

// failed ends every connection after an error of the store: the document
// is gone (4404), or the node cannot go on with it (1011; the clients
// reconnect, maybe to another node). ss.mu is held.
func (ss *session) failed(err error) {
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		for c := range ss.conns {
			c.close(StatusTrashed, "trash")
		}
		return
	}
	ss.svc.log.Error("live: session failed", "document", ss.id, "err", err)
	for c := range ss.conns {
		c.close(statusInternal, "error")
	}
}

// saveLocked makes the live text a version when it holds changes not yet
// in one (SaveLive, with the document.updated event that notifies the
// document's watchers once per version), then trims the stored changes it
// holds. A save that another node made first, or a write of the content
// that superseded the live changes, starts the session again from the
// store. ss.mu is held.
func (ss *session) saveLocked(ctx context.Context) {
	count := int64(ss.auth.Count())
	if count <= ss.base && ss.firstUnsaved.IsZero() {
		return
	}
	for attempt := 0; ; attempt++ {
		err := ss.save(ctx, count)
		if err == nil {
			break
		}
		if attempt > 0 || !(errors.Is(err, quire.ErrLiveBehind) || quire.ErrorCode(err) == quire.EDOCUMENTCONFLICT) {
			if quire.ErrorCode(err) != quire.ENOTFOUND {
				ss.svc.log.Error("live: save of the live text", "document", ss.id, "err", err)
			}
			return
		}
		// Another save came first (another node's, or an earlier session
		// of this node), or the content was written otherwise: read the
		// store again. When it holds the same text, this session goes on
		// from its save; when not, from the store.
		if err := ss.resyncIfDiverged(ctx); err != nil {
			ss.failed(err)
			return
		}
		count = int64(ss.auth.Count())
		if count <= ss.base {
			break
		}
	}
	ss.firstUnsaved, ss.lastAuthor = time.Time{}, nil
	for {
		n, err := ss.svc.store.TrimLive(ctx, ss.id, ss.base, trimStep)
		if err != nil {
			ss.svc.log.Warn("live: trim of saved changes", "document", ss.id, "err", err)
			break
		}
		if n == 0 {
			break
		}
	}
}

// save writes the text at count as the document's content. A save of
// the text as stored records no event (it moves the base only).
func (ss *session) save(ctx context.Context, count int64) error {
	text := ss.auth.Text()
	var (
		w  quire.LiveStore = ss.svc.store
		by string
	)
	if ss.lastAuthor != nil {
		by = ss.lastAuthor.User.ID
	}
	if text != ss.saved {
		authors, err := ss.svc.store.LiveAuthors(ctx, ss.id, ss.base, count)
		if err != nil {
			return err
		}
		d, err := ss.svc.store.Document(ctx, all, ss.id)
		if err != nil {
			return err
		}
		actor := quire.Actor{User: quire.User{ID: d.OwnerID, Name: d.OwnerName}}
		switch {
		case ss.lastAuthor != nil:
			actor = *ss.lastAuthor
		case len(authors) > 0: // changes of another node's editors
			actor = quire.Actor{User: quire.User{ID: authors[len(authors)-1]}}
		}
		by = actor.User.ID
		ev := quire.NewEvent(quire.ActionDocumentUpdated, ss.svc.cfg.Now(), quire.EventActorOf(actor), quire.RequestInfo{}).
			On(quire.TargetDocument, ss.id, d.Title).With("fields", []string{"content"}).With("via", "live").
			With("authors", authors)
		ev.Mentions, ev.MentionsIgnored = quire.AddedMentions(ss.saved, text)
		w = ss.svc.store.Recording(ev)
	}
	d, err := w.SaveLive(ctx, all, ss.id, ss.updatedAt, by, count, text, ss.svc.cfg.Now())
	if err != nil {
		return err
	}
	ss.base, ss.saved, ss.updatedAt = count, text, d.UpdatedAt
	return nil
}

// written is told that the document's updated_at is at (the loop's check
// read it): when that is not the session's own save, the content may have
// been written otherwise, and the session reads the store again.
func (ss *session) written(ctx context.Context, at time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !at.After(ss.updatedAt) {
		return
	}
	if err := ss.resyncIfDiverged(ctx); err != nil {
		ss.failed(err)
	}
}

// resyncIfDiverged reads the store again after a refused save or a write
// of the content found by the check: first the changes stored after the
// count, passed to every connection as updates (a write through the API
// or a restore is one of them: livesql.ContentWritten), then the content
// and its base. When the store's text at its count is the session's, the
// session takes its base and guard and goes on; otherwise (the changes
// were superseded) it starts again from the store and every connection
// gets the state. ss.mu is held.
func (ss *session) resyncIfDiverged(ctx context.Context) error {
	from := ss.auth.Count()
	ups, err := ss.readMore(ctx)
	if len(ups) > 0 {
		ss.broadcast(updatesMessage(from, ups))
	}
	if quire.ErrorCode(err) == quire.ENOTFOUND {
		return err
	}
	text, count := ss.auth.Text(), ss.auth.Count()
	if err := ss.load(ctx); err != nil {
		return err
	}
	if ss.auth.Count() == count && ss.auth.Text() == text {
		return nil
	}
	for c := range ss.conns {
		ss.sendState(ctx, c)
	}
	return nil
}
