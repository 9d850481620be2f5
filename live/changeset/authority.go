package changeset

import (
	"errors"
	"fmt"
)

// Errors of the Authority.
var (
	// ErrBehind: the changes were made on another count than the
	// authority's current one. The client catches up (Since) and rebases
	// its changes, or reloads the text.
	ErrBehind = errors.New("changes not made on the current count")
	// ErrTrimmed: the changes after the count asked for are no longer in
	// memory; the caller reads them from the store or sends the whole
	// text.
	ErrTrimmed = errors.New("changes no longer in memory")
	// ErrTooLarge: the text would exceed the size limit.
	ErrTooLarge = errors.New("text too large")
)

// Update is one accepted change set and the client that sent it (the
// clientID of @codemirror/collab, by which a client recognises its own
// changes coming back).
type Update struct {
	Client  string
	Changes ChangeSet
}

// Limits bound the memory an Authority holds.
type Limits struct {
	// MaxText is the largest text, in bytes of UTF-8; a batch that would
	// make it larger is refused whole with ErrTooLarge.
	MaxText int
	// Keep is how many of the last accepted updates stay in memory for
	// Since (at least 1).
	Keep int
	// KeepBytes bounds their size, counting the inserted text and 16
	// bytes a run; the oldest go first, the newest always stays. Zero
	// means no bound beyond Keep.
	KeepBytes int
}

// Authority is the in-memory state of the central authority of
// @codemirror/collab for one document: the text, the count of changes it
// has had (the version of @codemirror/collab), and the last accepted
// updates. It does no I/O; it is not safe for concurrent use (the server
// holds it under its document's lock).
//
// It never trusts a client: changes are taken only on the current count,
// whole batches or nothing, and only when each applies to the text it
// meets. To store a batch before it is confirmed, call Prepare, write
// Batch.Changes, then Commit, under the same lock; Receive does both at
// once.
type Authority struct {
	text   string
	length int // of text, in UTF-16 units
	count  int
	limits Limits
	ring   []Update // ring[(start+i)%len(ring)], i < n, oldest first
	start  int
	n      int
	size   int // of the updates in the ring
	sizes  []int
}

// NewAuthority starts an authority on text at count (0 for a new session,
// or the count the store has reached). It returns ErrTooLarge when text is
// already above the limit, and an error for a negative count or limits
// that keep nothing.
func NewAuthority(text string, count int, limits Limits) (*Authority, error) {
	if count < 0 || limits.Keep < 1 || limits.MaxText < 0 || limits.KeepBytes < 0 {
		return nil, fmt.Errorf("changeset: invalid authority count %d or limits %+v", count, limits)
	}
	if len(text) > limits.MaxText {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(text), limits.MaxText)
	}
	return &Authority{
		text:   text,
		length: utf16Len(text),
		count:  count,
		limits: limits,
		ring:   make([]Update, limits.Keep),
		sizes:  make([]int, limits.Keep),
	}, nil
}

// Text returns the current text.
func (a *Authority) Text() string { return a.text }

// Count returns the number of changes accepted so far.
func (a *Authority) Count() int { return a.count }

// Batch is a checked batch of changes, not yet accepted: the result of
// Prepare, for Commit once it is stored.
type Batch struct {
	count   int
	client  string
	changes []ChangeSet
	text    string
	length  int
}

// Text returns the text after the batch.
func (b *Batch) Text() string { return b.text }

// Changes returns the change sets of the batch, as they will be stored.
func (b *Batch) Changes() []ChangeSet { return b.changes }

// Count returns the count the batch was made on; after it the count is
// Count()+len(Changes()).
func (b *Batch) Count() int { return b.count }

// Prepare checks a batch of changes that client made on count without
// changing the authority: it returns ErrBehind unless count is the current
// count, an error wrapping ErrLength or ErrSurrogate when a change does not
// apply to the text it meets, and ErrTooLarge when the text after the batch
// would exceed the limit.
//
// The changes are composed (in a balanced tree) and the text is built once,
// which is the same as applying them one after the other (Compose refuses a
// later change that cuts a character an earlier one inserted, Apply one
// that cuts a character of the text): the work is linear in the text plus
// the size of the changes times the logarithm of their number, not the
// text times the number of changes.
func (a *Authority) Prepare(count int, client string, changes []ChangeSet) (*Batch, error) {
	if count != a.count {
		return nil, fmt.Errorf("%w: made on %d, the count is %d", ErrBehind, count, a.count)
	}
	length := a.length
	for i, cs := range changes {
		if cs.Len() != length {
			return nil, fmt.Errorf("change %d: %w: made on length %d, the text has %d", i, ErrLength, cs.Len(), length)
		}
		length = cs.NewLen()
	}
	text := a.text
	if len(changes) > 0 {
		all, err := composeAll(changes)
		if err != nil {
			return nil, err
		}
		if text, err = all.Apply(text); err != nil {
			return nil, err
		}
	}
	if len(text) > a.limits.MaxText {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(text), a.limits.MaxText)
	}
	return &Batch{count: count, client: client, changes: changes, text: text, length: length}, nil
}

// composeAll composes change sets that follow each other, in pairs, then
// pairs of pairs, so that each section takes part in a logarithmic number
// of compositions.
func composeAll(changes []ChangeSet) (ChangeSet, error) {
	level := append([]ChangeSet(nil), changes...)
	for len(level) > 1 {
		next := level[:0]
		for i := 0; i < len(level); i += 2 {
			if i+1 == len(level) {
				next = append(next, level[i])
				break
			}
			c, err := level[i].Compose(level[i+1])
			if err != nil {
				return ChangeSet{}, err
			}
			next = append(next, c)
		}
		level = next
	}
	return level[0], nil
}

// Commit accepts a prepared batch: the text and count move on and the
// updates join the ring. It returns ErrBehind when the authority moved
// since Prepare (another batch was committed), and accepts nothing then.
func (a *Authority) Commit(b *Batch) error {
	if b.count != a.count {
		return fmt.Errorf("%w: prepared on %d, the count is %d", ErrBehind, b.count, a.count)
	}
	for _, cs := range b.changes {
		a.push(Update{Client: b.client, Changes: cs})
	}
	a.text, a.length = b.text, b.length
	a.count += len(b.changes)
	return nil
}

// Receive accepts the changes client made on count, all or none, as
// Prepare then Commit, and returns them as accepted (what to store and
// pass on, in order).
func (a *Authority) Receive(count int, client string, changes []ChangeSet) ([]ChangeSet, error) {
	b, err := a.Prepare(count, client, changes)
	if err != nil {
		return nil, err
	}
	if err := a.Commit(b); err != nil {
		return nil, err
	}
	return b.changes, nil
}

// Since returns the updates accepted after count, oldest first (none when
// count is the current count). It returns ErrTrimmed when some of them
// have left memory, and ErrBehind for a count the authority has not
// reached (or a negative one).
func (a *Authority) Since(count int) ([]Update, error) {
	if count < 0 || count > a.count {
		return nil, fmt.Errorf("%w: asked from %d, the count is %d", ErrBehind, count, a.count)
	}
	want := a.count - count
	if want > a.n {
		return nil, fmt.Errorf("%w: asked from %d, memory starts at %d", ErrTrimmed, count, a.count-a.n)
	}
	out := make([]Update, want)
	for i := range want {
		out[i] = a.ring[(a.start+a.n-want+i)%len(a.ring)]
	}
	return out, nil
}

func (a *Authority) push(u Update) {
	size := 0
	for _, s := range u.Changes.sections {
		size += 16 + len(s.text)
	}
	if a.n == len(a.ring) {
		a.drop()
	}
	for a.limits.KeepBytes > 0 && a.n > 0 && a.size+size > a.limits.KeepBytes {
		a.drop()
	}
	i := (a.start + a.n) % len(a.ring)
	a.ring[i], a.sizes[i] = u, size
	a.n++
	a.size += size
}

// drop forgets the oldest update in the ring.
func (a *Authority) drop() {
	a.size -= a.sizes[a.start]
	a.ring[a.start], a.sizes[a.start] = Update{}, 0
	a.start = (a.start + 1) % len(a.ring)
	a.n--
}
