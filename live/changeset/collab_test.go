package changeset_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"quire/live/changeset"
)

// pieces of random text: ASCII, accents, CJK, emoji (surrogate pairs in
// UTF-16, one with a modifier), line breaks.
var pieces = []string{"a", "b", "xyz", " ", "é", "ß", "漢", "字", "😀", "👍🏽", "\n", "\n\n"}

func randText(r *rand.Rand, max int) string {
	var b strings.Builder
	for range r.IntN(max + 1) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// units returns the UTF-16 offset of every character boundary of s.
func units(s string) []int {
	out := []int{0}
	n := 0
	for _, c := range s {
		n++
		if c > 0xFFFF {
			n++
		}
		out = append(out, n)
	}
	return out
}

// randChange returns a random insertion, deletion or replacement of doc,
// sometimes two of them composed into one change set.
func randChange(t testing.TB, r *rand.Rand, doc string) changeset.ChangeSet {
	t.Helper()
	one := func(doc string) changeset.ChangeSet {
		b := units(doc)
		n := b[len(b)-1]
		i := r.IntN(len(b))
		from := b[i]
		to := b[min(len(b)-1, i+1+r.IntN(6))] // up to 6 characters
		insert := ""
		switch k := r.IntN(3); {
		case k == 0 || n > 600: // delete (documents stay small)
		case k == 1: // insert
			insert = randText(r, 4)
			to = from
		default: // replace
			insert = randText(r, 3)
		}
		cs, err := changeset.Replace(n, from, to, insert)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	cs := one(doc)
	if r.IntN(4) == 0 {
		mid, err := cs.Apply(doc)
		if err != nil {
			t.Fatal(err)
		}
		if cs, err = cs.Compose(one(mid)); err != nil {
			t.Fatal(err)
		}
	}
	return cs
}

// collabClient is the client side of @codemirror/collab (receiveUpdates,
// sendableUpdates) over this package.
type collabClient struct {
	id          string
	doc         string // what the editor shows
	base        string // the authority's text at version
	version     int
	unconfirmed []changeset.ChangeSet
	inFlight    *pushed // at most one push at a time, as in the collab example
}

type pushed struct {
	version int
	changes []changeset.ChangeSet
}

// receive is receiveUpdates of @codemirror/collab.
func (c *collabClient) receive(t testing.TB, updates []changeset.Update) {
	t.Helper()
	must := func(cs changeset.ChangeSet, err error) changeset.ChangeSet {
		t.Helper()
		if err != nil {
			t.Fatalf("client %s: %v", c.id, err)
		}
		return cs
	}
	c.version += len(updates)
	var changes *changeset.ChangeSet
	own := 0
	for _, u := range updates {
		base, err := u.Changes.Apply(c.base)
		if err != nil {
			t.Fatalf("client %s: an update does not apply to its base: %v", c.id, err)
		}
		c.base = base
		if own < len(c.unconfirmed) && u.Client == c.id {
			if changes != nil {
				m := must(changes.Map(c.unconfirmed[own], true))
				changes = &m
			}
			own++
			continue
		}
		if changes == nil {
			cs := u.Changes
			changes = &cs
		} else {
			m := must(changes.Compose(u.Changes))
			changes = &m
		}
	}
	c.unconfirmed = c.unconfirmed[own:]
	if changes == nil {
		return
	}
	for i, u := range c.unconfirmed {
		mapped := must(u.Map(*changes, false))
		m := must(changes.Map(u, true))
		changes = &m
		c.unconfirmed[i] = mapped
	}
	doc, err := changes.Apply(c.doc)
	if err != nil {
		t.Fatalf("client %s: remote changes do not apply: %v", c.id, err)
	}
	c.doc = doc
}

// checkInvariant: the unconfirmed changes lead from base to doc.
func (c *collabClient) checkInvariant(t testing.TB) {
	t.Helper()
	text := c.base
	for _, u := range c.unconfirmed {
		var err error
		if text, err = u.Apply(text); err != nil {
			t.Fatalf("client %s: unconfirmed change does not apply to its base: %v", c.id, err)
		}
	}
	if text != c.doc {
		t.Fatalf("client %s: base plus unconfirmed = %q, the editor shows %q", c.id, text, c.doc)
	}
}

// TestCollabClientsConverge simulates three editors running the
// @codemirror/collab client algorithm against an Authority: random edits
// with multi-byte text, pushes delayed and refused when stale, updates
// pulled in random slices, a small ring so that catching up often has to go
// to the stored log. At every step each client's base is the authority's
// text at its version; at the end every client shows the authority's text,
// and that is the replay of the accepted log from the start text.
func TestCollabClientsConverge(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			simulate(t, seed, 3000)
		})
	}
}

func simulate(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 33))
	start := randText(r, 20)
	auth, err := changeset.NewAuthority(start, 0, changeset.Limits{MaxText: 1 << 16, Keep: 4})
	if err != nil {
		t.Fatal(err)
	}
	var log []changeset.Update // the store: every accepted update
	texts := []string{start}   // texts[n]: the text after n updates
	clients := make([]*collabClient, 3)
	for i := range clients {
		clients[i] = &collabClient{id: fmt.Sprintf("c%d", i), doc: start, base: start}
	}
	var accepted, refused, trimmed int

	deliverPush := func(c *collabClient) {
		p := c.inFlight
		c.inFlight = nil
		got, err := auth.Receive(p.version, c.id, p.changes)
		if errors.Is(err, changeset.ErrBehind) {
			refused++
			return
		}
		if err != nil {
			t.Fatalf("client %s: an honest push is refused: %v", c.id, err)
		}
		for _, cs := range got {
			log = append(log, changeset.Update{Client: c.id, Changes: cs})
			next, err := cs.Apply(texts[len(texts)-1])
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, next)
		}
		accepted += len(got)
		if auth.Text() != texts[len(texts)-1] || auth.Count() != len(log) {
			t.Fatalf("the authority's text or count is not the replay of its log")
		}
	}
	pull := func(c *collabClient, all bool) {
		ups, err := auth.Since(c.version)
		switch {
		case errors.Is(err, changeset.ErrTrimmed):
			// Gone from memory: read them from the store, as the server will.
			if auth.Count()-c.version <= 4 {
				t.Fatalf("Since(%d) trimmed with count %d and a ring of 4", c.version, auth.Count())
			}
			trimmed++
			ups = log[c.version:]
		case err != nil:
			t.Fatal(err)
		default:
			if want := log[c.version:]; len(ups) != len(want) || len(ups) > 0 && ups[0].Client != want[0].Client {
				t.Fatalf("Since(%d) gave %d updates, the log has %d", c.version, len(ups), len(want))
			}
		}
		if len(ups) == 0 {
			return
		}
		if !all {
			ups = ups[:1+r.IntN(len(ups))]
		}
		c.receive(t, ups)
		if c.base != texts[c.version] {
			t.Fatalf("client %s at version %d: base %q, the authority had %q", c.id, c.version, c.base, texts[c.version])
		}
		c.checkInvariant(t)
	}
	push := func(c *collabClient) {
		if c.inFlight == nil && len(c.unconfirmed) > 0 {
			c.inFlight = &pushed{version: c.version, changes: append([]changeset.ChangeSet(nil), c.unconfirmed...)}
		}
	}

	for range steps {
		c := clients[r.IntN(len(clients))]
		switch k := r.IntN(10); {
		case k < 4:
			cs := randChange(t, r, c.doc)
			doc, err := cs.Apply(c.doc)
			if err != nil {
				t.Fatal(err)
			}
			c.doc = doc
			if !cs.Empty() {
				c.unconfirmed = append(c.unconfirmed, cs)
			}
		case k < 6:
			push(c)
		case k < 8:
			if c.inFlight != nil {
				deliverPush(c)
			}
		default:
			pull(c, false)
		}
	}
	// Quiet down: deliver, pull and push until nothing is left to send.
	for round := 0; ; round++ {
		if round > 100 {
			t.Fatal("the clients do not settle")
		}
		busy := false
		for _, c := range clients {
			if c.inFlight != nil {
				deliverPush(c)
			}
			pull(c, true)
			if len(c.unconfirmed) > 0 {
				busy = true
				push(c)
				deliverPush(c)
			}
		}
		if !busy {
			break
		}
	}
	for _, c := range clients {
		pull(c, true)
		if c.doc != auth.Text() {
			t.Errorf("client %s shows %q, the authority has %q", c.id, c.doc, auth.Text())
		}
	}
	replay := start
	for _, u := range log {
		if replay, err = u.Changes.Apply(replay); err != nil {
			t.Fatal(err)
		}
	}
	if replay != auth.Text() {
		t.Errorf("replaying the log gives %q, the authority has %q", replay, auth.Text())
	}
	if accepted < steps/10 || refused == 0 || trimmed == 0 {
		t.Errorf("a weak run: %d accepted, %d refused, %d caught up from the store", accepted, refused, trimmed)
	}
	t.Logf("%d changes accepted, %d pushes refused as stale, %d catch-ups from the store, final text %d bytes",
		accepted, refused, trimmed, len(auth.Text()))
}
