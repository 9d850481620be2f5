package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"quire"
)

func init() { register("live", testLive) }

// liveWorld is a docWorld with one private draft of the owner's, "Live",
// whose content is "hello".
type liveWorld struct {
	*docWorld
	doc *quire.Document
}

func newLiveWorld(t *testing.T, open Opener) *liveWorld {
	t.Helper()
	w := newDocWorld(t, open)
	d := draft(w.owner, "Live")
	d.Content = "hello"
	return &liveWorld{w, w.create(t, d, baseTime)}
}

// changes are n changes by the owner from client "tab-1", whose JSON names
// their position from first: {"n": first}, {"n": first+1}, ...
func (w *liveWorld) changes(first, n int) []quire.LiveChange {
	out := make([]quire.LiveChange, n)
	for i := range out {
		out[i] = quire.LiveChange{Change: json.RawMessage(fmt.Sprintf(`{"n": %d}`, first+i)), ClientID: "tab-1", UserID: w.owner.ID}
	}
	return out
}

// appendLive appends n changes after after and fails the test when that
// fails.
func (w *liveWorld) appendLive(t *testing.T, after int64, n int) []quire.LiveChange {
	t.Helper()
	cs := w.changes(int(after)+1, n)
	if err := w.s.AppendLive(t.Context(), seeAll, w.doc.ID, after, cs, baseTime.Add(time.Duration(after)*time.Second)); err != nil {
		t.Fatalf("append %d after %d: %v", n, after, err)
	}
	return cs
}

// seqs are the numbers of cs.
func seqs(cs []quire.LiveChange) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Seq
	}
	return out
}

// span is the numbers from..to.
func span(from, to int64) []int64 {
	out := []int64{}
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

// since reads the changes after after (limit 1000) and fails the test on
// an error.
func (w *liveWorld) since(t *testing.T, after int64) []int64 {
	t.Helper()
	cs, err := w.s.LiveChangesSince(t.Context(), seeAll, w.doc.ID, after, 1000)
	if err != nil {
		t.Fatalf("changes since %d: %v", after, err)
	}
	return seqs(cs)
}

// state reads the live state (limit 1000) and fails the test on an error.
func (w *liveWorld) state(t *testing.T) *quire.LiveState {
	t.Helper()
	st, err := w.s.LiveState(t.Context(), seeAll, w.doc.ID, 1000)
	if err != nil {
		t.Fatalf("live state: %v", err)
	}
	return st
}

// save saves content as the live text at upto, and fails the test on an
// error.
func (w *liveWorld) save(t *testing.T, upto int64, content string) *quire.Document {
	t.Helper()
	d, err := w.s.SaveLive(t.Context(), seeAll, w.doc.ID, time.Time{}, w.owner.ID, upto, content, baseTime.Add(time.Hour))
	if err != nil {
		t.Fatalf("save live text at %d: %v", upto, err)
	}
	return d
}

func wantIs(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func testLive(t *testing.T, open Opener) {
	t.Run("changes are numbered from the count and read back in order, byte for byte, a page at a time", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		if got := w.since(t, 0); len(got) != 0 {
			t.Fatalf("a document never edited live has changes %v", got)
		}
		odd := json.RawMessage(`{"z": [1, 2],  "a": "\u00e9\u0000"}`)
		first := []quire.LiveChange{{Change: odd, ClientID: "tab-9", UserID: w.colleague.ID}}
		if err := w.s.AppendLive(ctx, sees(w.owner), w.doc.ID, 0, first, baseTime.Add(1234567*time.Microsecond)); err != nil {
			t.Fatal(err)
		}
		if first[0].Seq != 1 || !first[0].CreatedAt.Equal(baseTime.Add(1234567*time.Microsecond)) {
			t.Fatalf("appended %+v", first[0])
		}
		cs := w.appendLive(t, 1, 3)
		if !slices.Equal(seqs(cs), []int64{2, 3, 4}) {
			t.Fatalf("numbered %v, want 2..4", seqs(cs))
		}
		got, err := w.s.LiveChangesSince(ctx, sees(w.owner), w.doc.ID, 0, 2)
		if err != nil || !slices.Equal(seqs(got), []int64{1, 2}) {
			t.Fatalf("first page %v, %v", seqs(got), err)
		}
		if string(got[0].Change) != string(odd) || got[0].ClientID != "tab-9" || got[0].UserID != w.colleague.ID ||
			!got[0].CreatedAt.Equal(first[0].CreatedAt) || string(got[1].Change) != `{"n": 2}` {
			t.Fatalf("read back %+v, %s", got[0], got[1].Change)
		}
		if got := w.since(t, 2); !slices.Equal(got, []int64{3, 4}) {
			t.Fatalf("since 2: %v", got)
		}
		for _, after := range []int64{4, 5, 100} {
			if got := w.since(t, after); len(got) != 0 {
				t.Fatalf("since %d (the count or beyond): %v", after, got)
			}
		}
		if got, err := w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, 0, 0); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("limit 0: %v, %v", got, err)
		}
	})

	t.Run("a number already stored is refused whole, and of appends racing for one number exactly one is stored", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		w.appendLive(t, 0, 2)
		for _, after := range []int64{0, 1, 3, -1} {
			err := w.s.AppendLive(ctx, seeAll, w.doc.ID, after, w.changes(50, 2), baseTime)
			wantIs(t, err, quire.ErrLiveBehind)
		}
		if got := w.since(t, 0); !slices.Equal(got, []int64{1, 2}) {
			t.Fatalf("after the refusals: %v", got)
		}
		if cs, _ := w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, 0, 10); string(cs[1].Change) != `{"n": 2}` {
			t.Fatalf("change 2 became %s", cs[1].Change)
		}
		// Rounds of 8 appends on top of one count: each stores 3 changes
		// once.
		const rounds = 10
		for r := range int64(rounds) {
			won := atOnce(8, func() bool {
				err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 2+3*r, w.changes(int(3+3*r), 3), baseTime)
				if err != nil && !errors.Is(err, quire.ErrLiveBehind) {
					t.Error(err)
				}
				return err == nil
			})
			if won != 1 {
				t.Fatalf("round %d: %d of 8 racing appends were stored, want 1", r, won)
			}
		}
		if got := w.since(t, 0); !slices.Equal(got, span(1, 2+3*rounds)) {
			t.Fatalf("after the races: %v", got)
		}
	})

	t.Run("the state is the content with its base and the changes after it, and a save of the live text moves the base", func(t *testing.T) {
		w := newLiveWorld(t, open)
		st := w.state(t)
		if st.DocumentID != w.doc.ID || st.Content != "hello" || st.ContentType != "markdown" || st.Version != 1 ||
			!st.UpdatedAt.Equal(w.doc.UpdatedAt) || st.Base != 0 || st.Seq != 0 || st.Changes == nil || len(st.Changes) != 0 {
			t.Fatalf("state of a document never edited live: %+v", st)
		}
		w.appendLive(t, 0, 5)
		d := w.save(t, 3, "hello, world")
		if d.Version != 2 || d.Content != "hello, world" {
			t.Fatalf("saved %+v", d)
		}
		st = w.state(t)
		if st.Content != "hello, world" || st.Version != 2 || !st.UpdatedAt.Equal(d.UpdatedAt) || st.Base != 3 || st.Seq != 5 ||
			!slices.Equal(seqs(st.Changes), []int64{4, 5}) {
			t.Fatalf("state after the save at 3: %+v", st)
		}
		if v, err := w.s.Version(t.Context(), seeAll, w.doc.ID, 2); err != nil || v.Content != "hello, world" || v.CreatedByID != w.owner.ID {
			t.Fatalf("version 2: %+v, %v", v, err)
		}
		// The changes in the content stay readable for a browser that
		// reconnects from before the save, until they are trimmed.
		if got := w.since(t, 1); !slices.Equal(got, span(2, 5)) {
			t.Fatalf("since 1 after the save: %v", got)
		}
		wantIs(t, func() error {
			_, err := w.s.SaveLive(t.Context(), seeAll, w.doc.ID, time.Time{}, w.owner.ID, 2, "x", baseTime)
			return err
		}(),
			quire.ErrLiveBehind)
		_, err := w.s.SaveLive(t.Context(), seeAll, w.doc.ID, time.Time{}, w.owner.ID, 6, "x", baseTime)
		wantCode(t, err, quire.EVALIDATION)
		_, err = w.s.SaveLive(t.Context(), seeAll, w.doc.ID, baseTime, w.owner.ID, 5, "x", baseTime.Add(2*time.Hour))
		wantCode(t, err, quire.EDOCUMENTCONFLICT)
		// Changes that add up to nothing make no version; the base moves.
		if d := w.save(t, 5, "hello, world"); d.Version != 2 {
			t.Fatalf("a save of the same text made version %d", d.Version)
		}
		if st := w.state(t); st.Base != 5 || st.Seq != 5 || st.Version != 2 || len(st.Changes) != 0 {
			t.Fatalf("state after the save at 5: %+v", st)
		}
		w.appendLive(t, 5, 1)
		if st := w.state(t); st.Seq != 6 || !slices.Equal(seqs(st.Changes), []int64{6}) {
			t.Fatalf("state after one more change: %+v", st)
		}
	})

	t.Run("the authors of a range of changes are listed once each, in the order of their first change", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		by := func(u *quire.User, first int) []quire.LiveChange {
			cs := w.changes(first, 2)
			for i := range cs {
				cs[i].UserID = u.ID
			}
			return cs
		}
		for i, u := range []*quire.User{w.colleague, w.owner, w.colleague, w.member} {
			if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, int64(2*i), by(u, 2*i+1), baseTime); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			after, upto int64
			want        []string
		}{
			{0, 8, []string{w.colleague.ID, w.owner.ID, w.member.ID}},
			{2, 6, []string{w.owner.ID, w.colleague.ID}},
			{3, 3, []string{}},
			{8, 100, []string{}},
		} {
			got, err := w.s.LiveAuthors(ctx, w.doc.ID, c.after, c.upto)
			if err != nil || got == nil || !slices.Equal(got, c.want) {
				t.Fatalf("authors after %d up to %d: %v, %v; want %v", c.after, c.upto, got, err, c.want)
			}
		}
		if got, err := w.s.LiveAuthors(ctx, "a\x00b", 0, 8); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("authors of a NUL id: %v, %v", got, err)
		}
	})

	t.Run("a trim deletes only changes in the content, in bounded steps, and the count never goes back", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		w.appendLive(t, 0, 7)
		if n, err := w.s.TrimLive(ctx, w.doc.ID, 7, 100); err != nil || n != 0 {
			t.Fatalf("trim before any save: %d, %v", n, err)
		}
		w.save(t, 5, "five")
		var steps []int
		for {
			n, err := w.s.TrimLive(ctx, w.doc.ID, 100, 2)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			steps = append(steps, n)
		}
		if !slices.Equal(steps, []int{2, 2, 1}) {
			t.Fatalf("trimmed in steps %v, want 2, 2, 1 (up to the base 5)", steps)
		}
		if got := w.since(t, 5); !slices.Equal(got, []int64{6, 7}) {
			t.Fatalf("since 5 after the trim: %v", got)
		}
		_, err := w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, 3, 10)
		wantIs(t, err, quire.ErrLiveTrimmed)
		st := w.state(t)
		if st.Base != 5 || st.Seq != 7 || !slices.Equal(seqs(st.Changes), []int64{6, 7}) {
			t.Fatalf("state after the trim: %+v", st)
		}
		// Every change in the content, every one trimmed: the count stays.
		w.save(t, 7, "seven")
		if n, err := w.s.TrimLive(ctx, w.doc.ID, 6, 100); err != nil || n != 1 {
			t.Fatalf("trim up to 6: %d, %v", n, err)
		}
		if n, err := w.s.TrimLive(ctx, w.doc.ID, 100, 100); err != nil || n != 1 {
			t.Fatalf("trim of the rest: %d, %v", n, err)
		}
		if st := w.state(t); st.Base != 7 || st.Seq != 7 || len(st.Changes) != 0 {
			t.Fatalf("state with every change trimmed: %+v", st)
		}
		wantIs(t, w.s.AppendLive(ctx, seeAll, w.doc.ID, 0, w.changes(1, 1), baseTime), quire.ErrLiveBehind)
		w.appendLive(t, 7, 1)
		if got := w.since(t, 7); !slices.Equal(got, []int64{8}) {
			t.Fatalf("since 7: %v", got)
		}
		for _, c := range []struct {
			id           string
			upto         int64
			limit, wantN int
		}{{unknownID, 100, 100, 0}, {"a\x00b", 100, 100, 0}, {w.doc.ID, 100, 0, 0}, {w.doc.ID, 100, -1, 0}} {
			if n, err := w.s.TrimLive(ctx, c.id, c.upto, c.limit); err != nil || n != c.wantN {
				t.Fatalf("trim %q up to %d, limit %d: %d, %v", c.id, c.upto, c.limit, n, err)
			}
		}
	})

	t.Run("a client's numbered changes are stored once: its last number outlives the trim, a repeat is refused, a day later a save forgets it", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		numbered := func(client string, first int64, n int) []quire.LiveChange {
			cs := w.changes(int(first), n)
			for i := range cs {
				cs[i].ClientID, cs[i].ClientSeq = client, first+int64(i)
			}
			return cs
		}
		client := func(id string) quire.LiveClient {
			t.Helper()
			c, err := w.s.LiveClient(ctx, w.doc.ID, w.owner.ID, id)
			if err != nil {
				t.Fatalf("live client %q: %v", id, err)
			}
			return c
		}
		if c := client("tab-a"); c != (quire.LiveClient{}) {
			t.Fatalf("a client that pushed nothing: %+v", c)
		}
		w.appendLive(t, 0, 1) // a change without a number
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 1, numbered("tab-a", 1, 3), baseTime); err != nil {
			t.Fatal(err)
		}
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 4, numbered("tab-b", 7, 1), baseTime); err != nil {
			t.Fatal(err)
		}
		if c := client("tab-a"); c != (quire.LiveClient{Seq: 3, At: 4}) {
			t.Fatalf("tab-a after its changes 1..3 as 2..4: %+v", c)
		}
		if c := client("tab-b"); c != (quire.LiveClient{Seq: 7, At: 5}) {
			t.Fatalf("tab-b: %+v", c)
		}
		// Pushed again after a lost confirmation, on the count: refused
		// whole, nothing stored, the number stays.
		for _, first := range []int64{1, 3} {
			wantIs(t, w.s.AppendLive(ctx, seeAll, w.doc.ID, 5, numbered("tab-a", first, 2), baseTime), quire.ErrLiveRepeated)
		}
		if st := w.state(t); st.Seq != 5 {
			t.Fatalf("a repeated push stored changes: count %d", st.Seq)
		}
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 5, numbered("tab-a", 4, 1), baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		for _, bad := range [][]quire.LiveChange{
			{numbered("tab-a", 9, 1)[0], numbered("tab-a", 9, 1)[0]},
			append(numbered("tab-a", 9, 1), numbered("tab-c", 10, 1)...),
			append(numbered("tab-a", 9, 1), w.changes(10, 1)...),
			numbered("tab-a", -2, 1),
		} {
			var qe *quire.Error
			if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 6, bad, baseTime); !errors.As(err, &qe) || qe.Fields["client_seq"] == "" {
				t.Fatalf("client numbers %v: %v, want VALIDATION_ERROR on client_seq", bad, err)
			}
		}
		// Saved and trimmed: the number is still there, for a client
		// that comes back to the whole text.
		w.save(t, 6, "saved")
		if n, err := w.s.TrimLive(ctx, w.doc.ID, 6, 100); err != nil || n != 6 {
			t.Fatalf("trim: %d, %v", n, err)
		}
		if c := client("tab-a"); c != (quire.LiveClient{Seq: 4, At: 6}) {
			t.Fatalf("tab-a after the trim: %+v", c)
		}
		// A save a day after a client's last change forgets it; the
		// other's, a minute younger, is kept until its day is over.
		if _, err := w.s.SaveLive(ctx, seeAll, w.doc.ID, time.Time{}, w.owner.ID, 6, "saved",
			baseTime.Add(quire.LiveClientTTL+time.Second)); err != nil {
			t.Fatal(err)
		}
		if a, b := client("tab-a"), client("tab-b"); a.Seq != 4 || b.Seq != 0 {
			t.Fatalf("a day after tab-b's change: tab-a %+v, tab-b %+v", a, b)
		}
		for _, c := range [][2]string{{unknownID, "tab-a"}, {w.doc.ID, "tab\x00"}, {w.doc.ID + "\x00", "tab-a"}} {
			if got, err := w.s.LiveClient(ctx, c[0], w.owner.ID, c[1]); err != nil || got != (quire.LiveClient{}) {
				t.Fatalf("live client %q of %q: %+v, %v", c[1], c[0], got, err)
			}
		}
		// A client's numbers are its person's: the same id is nobody
		// else's.
		if got, err := w.s.LiveClient(ctx, w.doc.ID, unknownID, "tab-a"); err != nil || got != (quire.LiveClient{}) {
			t.Fatalf("tab-a of another person: %+v, %v", got, err)
		}
		if err := w.s.DeleteDocument(ctx, seeAll, w.doc.ID, w.owner.ID, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := w.s.PurgeDocument(ctx, seeAll, w.doc.ID); err != nil {
			t.Fatalf("purge of a document with live clients: %v", err)
		}
	})

	t.Run("a write of the content that is not a save of the live text supersedes the changes stored until then", func(t *testing.T) {
		w := newLiveWorld(t, open)
		w.appendLive(t, 0, 4)
		w.save(t, 2, "two")
		w.update(t, w.doc.ID, baseTime.Add(2*time.Hour), func(d *quire.Document) { d.Content = "typed in the form" })
		st := w.state(t)
		if st.Content != "typed in the form" || st.Base != 4 || st.Seq != 4 || len(st.Changes) != 0 {
			t.Fatalf("state after a save of the form: %+v", st)
		}
		for _, after := range []int64{0, 2, 3} {
			_, err := w.s.LiveChangesSince(t.Context(), seeAll, w.doc.ID, after, 10)
			wantIs(t, err, quire.ErrLiveTrimmed)
		}
		w.appendLive(t, 4, 2)
		if got := w.since(t, 4); !slices.Equal(got, []int64{5, 6}) {
			t.Fatalf("since 4: %v", got)
		}
		// A save of the live text keeps what was superseded as it was.
		w.save(t, 6, "typed in the form, then live")
		if got := w.since(t, 4); !slices.Equal(got, []int64{5, 6}) {
			t.Fatalf("since 4 after a save of the live text: %v", got)
		}
		_, err := w.s.LiveChangesSince(t.Context(), seeAll, w.doc.ID, 3, 10)
		wantIs(t, err, quire.ErrLiveTrimmed)
		// A write that leaves the content alone supersedes nothing.
		w.appendLive(t, 6, 1)
		w.update(t, w.doc.ID, baseTime.Add(3*time.Hour), func(d *quire.Document) { d.Title = "Renamed" })
		if st := w.state(t); st.Base != 6 || st.Seq != 7 {
			t.Fatalf("state after a rename: %+v", st)
		}
	})

	t.Run("a write of the content of a document edited live is stored as one change from the live text", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		typed := []quire.LiveChange{{Change: json.RawMessage(`[5,[0," world"]]`), ClientID: "tab-1", UserID: w.owner.ID}}
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 0, typed, baseTime); err != nil {
			t.Fatal(err)
		}
		// The form writes "hello there" over "hello world", the live text.
		w.update(t, w.doc.ID, baseTime.Add(time.Hour), func(d *quire.Document) { d.Content = "hello there" })
		st := w.state(t)
		if st.Content != "hello there" || st.Base != 2 || st.Seq != 2 || len(st.Changes) != 0 {
			t.Fatalf("state after a write of the form: %+v", st)
		}
		cs, err := w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, 1, 10)
		if err != nil || len(cs) != 1 || cs[0].Seq != 2 || cs[0].ClientID != "quire" || cs[0].UserID != w.owner.ID ||
			string(cs[0].Change) != `[6,[5,"there"]]` {
			t.Fatalf("the change of the write: %+v, %v", cs, err)
		}
		// A change typed on count 2 applies on top; the next write deletes
		// the changes that were in the content before it (up to 2), keeping
		// the ones after.
		typed[0].Change = json.RawMessage(`[11,[0,"!"]]`)
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 2, typed, baseTime); err != nil {
			t.Fatal(err)
		}
		w.update(t, w.doc.ID, baseTime.Add(2*time.Hour), func(d *quire.Document) { d.Content = "bye" })
		if st := w.state(t); st.Content != "bye" || st.Base != 4 || st.Seq != 4 {
			t.Fatalf("state after a second write: %+v", st)
		}
		if got := w.since(t, 2); !slices.Equal(got, []int64{3, 4}) {
			t.Fatalf("since 2: %v", got)
		}
		_, err = w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, 1, 10)
		wantIs(t, err, quire.ErrLiveTrimmed)
		// A save of the live text is not a write to apply again.
		typed[0].Change = json.RawMessage(`[3,[0,"?"]]`)
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 4, typed, baseTime); err != nil {
			t.Fatal(err)
		}
		w.save(t, 5, "bye?")
		if st := w.state(t); st.Content != "bye?" || st.Base != 5 || st.Seq != 5 {
			t.Fatalf("state after a save of the live text: %+v", st)
		}
	})

	t.Run("a version saved from the live text records its authors", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		other := w.colleague
		for i, u := range []string{other.ID, w.owner.ID, other.ID} {
			c := []quire.LiveChange{{Change: json.RawMessage(fmt.Sprintf(`[%d,[0,"!"]]`, 5+i)), ClientID: "tab", UserID: u}}
			if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, int64(i), c, baseTime); err != nil {
				t.Fatal(err)
			}
		}
		w.save(t, 2, "hello!!")
		w.save(t, 3, "hello!!!")
		w.update(t, w.doc.ID, baseTime.Add(2*time.Hour), func(d *quire.Document) { d.Content = "typed" })
		got, err := w.s.VersionAuthors(ctx, seeAll, w.doc.ID, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int][]quire.Named{2: {{ID: other.ID, Name: other.Name}, {ID: w.owner.ID, Name: w.owner.Name}},
			3: {{ID: other.ID, Name: other.Name}}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("authors: %v, want %v", got, want)
		}
		if got, err := w.s.VersionAuthors(ctx, seeAll, w.doc.ID, 3, 3); err != nil || len(got) != 1 || len(got[3]) != 1 {
			t.Fatalf("authors of version 3: %v, %v", got, err)
		}
		_, err = w.s.VersionAuthors(ctx, sees(w.outsider), w.doc.ID, 1, 10)
		wantCode(t, err, quire.ENOTFOUND)
	})

	t.Run("presence across nodes: each node's people, recent ones only, never the asking node's", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		set := func(node string, at time.Time, people ...quire.LivePresent) {
			t.Helper()
			if err := w.s.SetLivePresence(ctx, w.doc.ID, node, people, at); err != nil {
				t.Fatal(err)
			}
		}
		list := func(node string, since time.Time) string {
			t.Helper()
			ps, err := w.s.LivePresence(ctx, w.doc.ID, node, since)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(ps)
		}
		set("n1", baseTime, quire.LivePresent{UserID: w.owner.ID, Editing: true}, quire.LivePresent{UserID: w.colleague.ID})
		set("n2", baseTime.Add(10*time.Second), quire.LivePresent{UserID: w.colleague.ID, Editing: true})
		owner, colleague := w.owner.ID+" "+w.owner.Name, w.colleague.ID+" "+w.colleague.Name
		if got, want := list("n3", baseTime), "[{"+owner+" true} {"+colleague+" false} {"+colleague+" true}]"; got != want {
			t.Fatalf("seen by n3: %s, want %s", got, want)
		}
		if got, want := list("n1", baseTime), "[{"+colleague+" true}]"; got != want {
			t.Fatalf("seen by n1: %s, want %s", got, want)
		}
		if got, want := list("n3", baseTime.Add(5*time.Second)), "[{"+colleague+" true}]"; got != want {
			t.Fatalf("recent ones: %s, want %s", got, want)
		}
		set("n2", baseTime.Add(20*time.Second)) // n2 has nobody now
		if got := list("n1", baseTime); got != "[]" {
			t.Fatalf("after n2 left: %s", got)
		}
		if err := w.s.SetLivePresence(ctx, unknownID, "n1", []quire.LivePresent{{UserID: w.owner.ID}}, baseTime); err != nil {
			t.Fatalf("presence on a missing document: %v", err)
		}
	})

	t.Run("a document someone cannot see, in the trash or missing has no live text; a purge takes its changes", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		w.appendLive(t, 0, 2)
		w.save(t, 1, "one")
		check := func(vis quire.Visibility, id string) {
			t.Helper()
			wantCode(t, w.s.AppendLive(ctx, vis, id, 2, w.changes(3, 1), baseTime), quire.ENOTFOUND)
			_, err := w.s.LiveChangesSince(ctx, vis, id, 0, 10)
			wantCode(t, err, quire.ENOTFOUND)
			_, err = w.s.LiveState(ctx, vis, id, 10)
			wantCode(t, err, quire.ENOTFOUND)
			_, err = w.s.SaveLive(ctx, vis, id, time.Time{}, w.owner.ID, 2, "two", baseTime)
			wantCode(t, err, quire.ENOTFOUND)
		}
		check(sees(w.outsider), w.doc.ID)
		check(sees(w.owner), unknownID)
		check(quire.Visibility{UserID: w.owner.ID + "\x00"}, w.doc.ID)
		check(seeAll, w.doc.ID+"\x00")
		if err := w.s.DeleteDocument(ctx, seeAll, w.doc.ID, w.owner.ID, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		check(sees(w.owner), w.doc.ID)
		if _, err := w.s.RestoreDocument(ctx, seeAll, w.doc.ID); err != nil {
			t.Fatal(err)
		}
		if st := w.state(t); st.Base != 1 || st.Seq != 2 || st.Content != "one" {
			t.Fatalf("state after the restore: %+v", st)
		}
		if err := w.s.DeleteDocument(ctx, seeAll, w.doc.ID, w.owner.ID, baseTime.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := w.s.PurgeDocument(ctx, seeAll, w.doc.ID); err != nil {
			t.Fatalf("purge of a document with live changes: %v", err)
		}
		check(seeAll, w.doc.ID)
	})

	t.Run("appends out of bounds are refused whole, and a page is bounded", func(t *testing.T) {
		w := newLiveWorld(t, open)
		ctx := t.Context()
		big := `"` + strings.Repeat("a", quire.MaxLiveChange-2) + `"`
		for _, c := range []struct {
			name    string
			changes []quire.LiveChange
			field   string
		}{
			{"none", nil, "changes"},
			{"too many", w.changes(1, quire.MaxLiveBatch+1), "changes"},
			{"not JSON", []quire.LiveChange{{Change: json.RawMessage(`{"n":`), ClientID: "c", UserID: w.owner.ID}}, "changes"},
			{"empty", []quire.LiveChange{{ClientID: "c", UserID: w.owner.ID}}, "changes"},
			{"a raw NUL", []quire.LiveChange{{Change: json.RawMessage("\"a\x00\""), ClientID: "c", UserID: w.owner.ID}}, "changes"},
			{"too large", []quire.LiveChange{{Change: json.RawMessage(big + " "), ClientID: "c", UserID: w.owner.ID}}, "changes"},
			{"a long client id", []quire.LiveChange{{Change: json.RawMessage(`1`), ClientID: strings.Repeat("c", quire.MaxLiveClientID+1),
				UserID: w.owner.ID}}, "client_id"},
			{"a NUL in the client id", []quire.LiveChange{{Change: json.RawMessage(`1`), ClientID: "c\x00", UserID: w.owner.ID}}, "client_id"},
			{"a client id not in UTF-8", []quire.LiveChange{{Change: json.RawMessage(`1`), ClientID: "c\xff", UserID: w.owner.ID}}, "client_id"},
			{"a change not in UTF-8", []quire.LiveChange{{Change: json.RawMessage("\"a\xff\""), ClientID: "c", UserID: w.owner.ID}}, "changes"},
			{"an unknown user", append(w.changes(1, 1), quire.LiveChange{Change: json.RawMessage(`1`), ClientID: "c", UserID: unknownID}), "user_id"},
		} {
			err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 0, c.changes, baseTime)
			var qe *quire.Error
			if !errors.As(err, &qe) || qe.Code != quire.EVALIDATION || qe.Fields[c.field] == "" {
				t.Fatalf("%s: error %v, want VALIDATION_ERROR on %s", c.name, err, c.field)
			}
		}
		if got := w.since(t, 0); len(got) != 0 {
			t.Fatalf("refused appends stored %v", got)
		}
		at := []quire.LiveChange{{Change: json.RawMessage(big), ClientID: strings.Repeat("c", quire.MaxLiveClientID), UserID: w.owner.ID}}
		if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, 0, at, baseTime); err != nil {
			t.Fatalf("a change of exactly %d bytes: %v", quire.MaxLiveChange, err)
		}
		for after := int64(1); after < quire.MaxLivePage+1; after += quire.MaxLiveBatch {
			w.appendLive(t, after, quire.MaxLiveBatch)
		}
		got, err := w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, 0, 1<<30)
		if err != nil || len(got) != quire.MaxLivePage || got[0].Seq != 1 || len(got[0].Change) != quire.MaxLiveChange {
			t.Fatalf("a page asked with a huge limit: %d changes, %v", len(got), err)
		}
		st, err := w.s.LiveState(ctx, seeAll, w.doc.ID, 1<<30)
		if err != nil || st.Seq != quire.MaxLivePage+1 || len(st.Changes) != quire.MaxLivePage {
			t.Fatalf("state asked with a huge limit: count %d, %d changes, %v", st.Seq, len(st.Changes), err)
		}
		// Changes of the largest size: a page stops at MaxLivePageBytes.
		count := int64(quire.MaxLivePage + 1)
		perPage := quire.MaxLivePageBytes / quire.MaxLiveChange
		for range perPage + 2 {
			at[0].Seq = 0
			if err := w.s.AppendLive(ctx, seeAll, w.doc.ID, count, at, baseTime); err != nil {
				t.Fatal(err)
			}
			count++
		}
		got, err = w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, quire.MaxLivePage+1, 100)
		if err != nil || len(got) != perPage || got[0].Seq != quire.MaxLivePage+2 {
			t.Fatalf("a page of the largest changes: %d changes, %v; want %d from %d", len(got), err, perPage, quire.MaxLivePage+2)
		}
		// One change of the largest size over the bound still makes a page.
		if got, err := w.s.LiveChangesSince(ctx, seeAll, w.doc.ID, count-1, 100); err != nil || len(got) != 1 {
			t.Fatalf("the last change: %d changes, %v", len(got), err)
		}
	})
}
