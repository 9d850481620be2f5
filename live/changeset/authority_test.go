package changeset_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"quire/live/changeset"
)

func newAuthority(t *testing.T, text string, limits changeset.Limits) *changeset.Authority {
	t.Helper()
	a, err := changeset.NewAuthority(text, 0, limits)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func sets(t *testing.T, jsons ...string) []changeset.ChangeSet {
	t.Helper()
	var out []changeset.ChangeSet
	for _, j := range jsons {
		out = append(out, mustParse(t, j))
	}
	return out
}

// unchanged checks that the authority still has text at count.
func unchanged(t *testing.T, a *changeset.Authority, text string, count int) {
	t.Helper()
	if a.Text() != text || a.Count() != count {
		t.Errorf("the authority has %q at %d, want %q at %d", a.Text(), a.Count(), text, count)
	}
	if ups, err := a.Since(0); err != nil || len(ups) != count {
		t.Errorf("Since(0) = %d updates, %v; want %d", len(ups), err, count)
	}
}

func TestAuthorityAcceptsOnlyOnItsCount(t *testing.T) {
	limits := changeset.Limits{MaxText: 100, Keep: 10}
	a := newAuthority(t, "abc", limits)
	got, err := a.Receive(0, "c1", sets(t, `[3,[0,"d"]]`, `[[1],3]`))
	if err != nil || len(got) != 2 {
		t.Fatalf("Receive = %v, %v", got, err)
	}
	unchanged(t, a, "bcd", 2)

	t.Run("a stale count is behind", func(t *testing.T) {
		_, err := a.Receive(1, "c2", sets(t, `[[4],0]`))
		if !errors.Is(err, changeset.ErrBehind) {
			t.Errorf("Receive = %v, want ErrBehind", err)
		}
		unchanged(t, a, "bcd", 2)
	})
	t.Run("a count ahead is refused too", func(t *testing.T) {
		_, err := a.Receive(3, "c2", sets(t, `[3]`))
		if !errors.Is(err, changeset.ErrBehind) {
			t.Errorf("Receive = %v, want ErrBehind", err)
		}
		unchanged(t, a, "bcd", 2)
	})
	t.Run("a batch with a change that does not apply is refused whole", func(t *testing.T) {
		_, err := a.Receive(2, "c2", sets(t, `[3,[0,"e"]]`, `[3]`))
		if !errors.Is(err, changeset.ErrLength) {
			t.Errorf("Receive = %v, want ErrLength", err)
		}
		unchanged(t, a, "bcd", 2)
	})
	t.Run("a batch that would pass the size limit is refused whole", func(t *testing.T) {
		_, err := a.Receive(2, "c2", sets(t, `[3,[0,"e"]]`, `[4,[0,"`+strings.Repeat("x", 97)+`"]]`))
		if !errors.Is(err, changeset.ErrTooLarge) {
			t.Errorf("Receive = %v, want ErrTooLarge", err)
		}
		unchanged(t, a, "bcd", 2)
		// Up to the limit exactly is fine; multi-byte text counts in bytes.
		if _, err := a.Receive(2, "c2", sets(t, `[3,[0,"`+strings.Repeat("é", 47)+`","xy"]]`)); err != nil {
			t.Errorf("a text of 100 bytes: %v", err)
		}
		unchanged(t, a, "bcd"+strings.Repeat("é", 47)+"\nxy", 3)
	})
	t.Run("a change inside an emoji is refused", func(t *testing.T) {
		b := newAuthority(t, "😀", limits)
		if _, err := b.Receive(0, "c1", sets(t, `[1,[0,"x"],1]`)); !errors.Is(err, changeset.ErrSurrogate) {
			t.Errorf("Receive = %v, want ErrSurrogate", err)
		}
		unchanged(t, b, "😀", 0)
	})
	t.Run("a later change of a batch that cuts an emoji is refused", func(t *testing.T) {
		b := newAuthority(t, "😀", limits)
		// The first change inserts an emoji, the second cuts it.
		_, err := b.Receive(0, "c1", sets(t, `[2,[0,"😀"]]`, `[3,[1]]`))
		if !errors.Is(err, changeset.ErrSurrogate) {
			t.Errorf("cutting an inserted emoji: %v, want ErrSurrogate", err)
		}
		// The first change keeps the text's emoji, the second cuts it.
		_, err = b.Receive(0, "c1", sets(t, `[2,[0,"x"]]`, `[1,[1],1]`))
		if !errors.Is(err, changeset.ErrSurrogate) {
			t.Errorf("cutting the text's emoji: %v, want ErrSurrogate", err)
		}
		unchanged(t, b, "😀", 0)
	})
	t.Run("an empty batch changes nothing", func(t *testing.T) {
		b := newAuthority(t, "x", limits)
		if got, err := b.Receive(0, "c1", nil); err != nil || len(got) != 0 {
			t.Errorf("Receive = %v, %v", got, err)
		}
		unchanged(t, b, "x", 0)
	})
}

func TestAuthorityPrepareThenCommit(t *testing.T) {
	a := newAuthority(t, "", changeset.Limits{MaxText: 100, Keep: 10})
	b1, err := a.Prepare(0, "c1", sets(t, `[[0,"one"]]`))
	if err != nil {
		t.Fatal(err)
	}
	b2, err := a.Prepare(0, "c2", sets(t, `[[0,"two"]]`))
	if err != nil {
		t.Fatal(err)
	}
	unchanged(t, a, "", 0) // prepared, not accepted
	if b1.Text() != "one" || b1.Count() != 0 || len(b1.Changes()) != 1 {
		t.Errorf("batch: %q at %d", b1.Text(), b1.Count())
	}
	if err := a.Commit(b1); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(b2); !errors.Is(err, changeset.ErrBehind) {
		t.Errorf("committing a batch prepared on an older count: %v, want ErrBehind", err)
	}
	unchanged(t, a, "one", 1)
}

func TestAuthoritySince(t *testing.T) {
	a := newAuthority(t, "", changeset.Limits{MaxText: 1000, Keep: 3})
	for i := range 5 {
		text := fmt.Sprint(i)
		if _, err := a.Receive(i, fmt.Sprintf("c%d", i%2), sets(t, fmt.Sprintf(`[%d,[0,%q]]`, i, text))); err != nil {
			t.Fatal(err)
		}
	}
	ups, err := a.Since(2)
	if err != nil || len(ups) != 3 {
		t.Fatalf("Since(2) = %v, %v", ups, err)
	}
	for i, u := range ups {
		if want := fmt.Sprintf("c%d", (i+2)%2); u.Client != want || u.Changes.Len() != i+2 {
			t.Errorf("update %d: client %s, length %d; want %s, %d", i, u.Client, u.Changes.Len(), want, i+2)
		}
	}
	if ups, err := a.Since(5); err != nil || len(ups) != 0 {
		t.Errorf("Since(current) = %v, %v; want none", ups, err)
	}
	if _, err := a.Since(1); !errors.Is(err, changeset.ErrTrimmed) {
		t.Errorf("Since(1) with 3 kept of 5 = %v, want ErrTrimmed", err)
	}
	for _, c := range []int{-1, 6} {
		if _, err := a.Since(c); !errors.Is(err, changeset.ErrBehind) {
			t.Errorf("Since(%d) = %v, want ErrBehind", c, err)
		}
	}
}

func TestAuthorityKeepsBoundedBytes(t *testing.T) {
	// Each update: 2 runs (32) plus 50 bytes of text = 82; 200 bytes keep two.
	a := newAuthority(t, "", changeset.Limits{MaxText: 1 << 20, Keep: 100, KeepBytes: 200})
	line := strings.Repeat("x", 50)
	for i := range 10 {
		if _, err := a.Receive(i, "c", sets(t, fmt.Sprintf(`[%d,[0,%q]]`, 50*i, line))); err != nil {
			t.Fatal(err)
		}
	}
	if ups, err := a.Since(8); err != nil || len(ups) != 2 {
		t.Errorf("Since(8) = %d updates, %v; want 2", len(ups), err)
	}
	if _, err := a.Since(7); !errors.Is(err, changeset.ErrTrimmed) {
		t.Errorf("Since(7) = %v, want ErrTrimmed", err)
	}
	// One update larger than the bound is still kept (the newest always is).
	if _, err := a.Receive(10, "c", sets(t, fmt.Sprintf(`[500,[0,%q]]`, strings.Repeat("y", 300)))); err != nil {
		t.Fatal(err)
	}
	if ups, err := a.Since(10); err != nil || len(ups) != 1 {
		t.Errorf("Since(10) = %d updates, %v; want 1", len(ups), err)
	}
}

func TestNewAuthorityRefuses(t *testing.T) {
	if _, err := changeset.NewAuthority("too long", 0, changeset.Limits{MaxText: 3, Keep: 1}); !errors.Is(err, changeset.ErrTooLarge) {
		t.Errorf("a text above the limit: %v, want ErrTooLarge", err)
	}
	for _, l := range []changeset.Limits{{MaxText: 10}, {MaxText: 10, Keep: 1, KeepBytes: -1}} {
		if _, err := changeset.NewAuthority("", 0, l); err == nil {
			t.Errorf("limits %+v accepted", l)
		}
	}
	if _, err := changeset.NewAuthority("", -1, changeset.Limits{MaxText: 10, Keep: 1}); err == nil {
		t.Error("a negative count accepted")
	}
	a, err := changeset.NewAuthority("abc", 7, changeset.Limits{MaxText: 10, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Receive(7, "c", sets(t, `[3,[0,"d"]]`)); err != nil || a.Text() != "abcd" || a.Count() != 8 {
		t.Errorf("starting at count 7: %v, %q at %d", err, a.Text(), a.Count())
	}
	if _, err := a.Since(6); !errors.Is(err, changeset.ErrTrimmed) {
		t.Errorf("Since before the start = %v, want ErrTrimmed", err)
	}
}

// TestPrepareIsLinear measures the bytes Prepare allocates for a batch of k
// small changes on a text of n bytes, at (n, k) and (4n, 4k): applying the
// changes one by one copies the text k times (16 times more at 4n, 4k);
// composing them first and applying once grows about 4 times.
func TestPrepareIsLinear(t *testing.T) {
	allocated := func(n, k int) uint64 {
		text := strings.Repeat("abcdéfgh漢\n", n/16) // no surrogate pairs: any position is whole
		length := utf16Len(text)
		var batch []changeset.ChangeSet
		for i := range k {
			cs, err := changeset.Replace(length+i, (i*7919)%length, (i*7919)%length, "x")
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, cs)
		}
		a := newAuthority(t, text, changeset.Limits{MaxText: 1 << 30, Keep: 1})
		best := uint64(1 << 62)
		for range 3 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b, err := a.Prepare(0, "c", batch)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(text) + k; len(b.Text()) != want {
				t.Fatalf("batch text of %d bytes, want %d", len(b.Text()), want)
			}
			best = min(best, after.TotalAlloc-before.TotalAlloc)
		}
		return best
	}
	m1, m4 := allocated(1<<16, 300), allocated(1<<18, 1200)
	t.Logf("Prepare allocates %d bytes at (64 KiB, 300 changes), %d at (256 KiB, 1200) (%.1fx)", m1, m4, float64(m4)/float64(m1))
	if m4 > 8*m1 {
		t.Errorf("Prepare allocates %d bytes at (n, k) and %d at (4n, 4k): more than linear", m1, m4)
	}
}
