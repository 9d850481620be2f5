package web

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiffView(t *testing.T) {
	t.Parallel()
	from := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12"
	to := "1\n2\n3\n4\n5\n6\nsix and a half\n7\n8\n9\n10\n11\n12"
	dv := newDiffView(from, to, "old", "new")
	want := []diffRow{
		{Kind: "skip", Skip: 3},
		{Kind: "eq", Line: "4", A: 4, B: 4},
		{Kind: "eq", Line: "5", A: 5, B: 5},
		{Kind: "eq", Line: "6", A: 6, B: 6},
		{Kind: "ins", Line: "six and a half", B: 7},
		{Kind: "eq", Line: "7", A: 7, B: 8},
		{Kind: "eq", Line: "8", A: 8, B: 9},
		{Kind: "eq", Line: "9", A: 9, B: 10},
		{Kind: "skip", Skip: 3},
	}
	if diff := cmp.Diff(want, dv.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if dv.Added != 1 || dv.Removed != 0 || dv.Same {
		t.Errorf("added %d, removed %d, same %v", dv.Added, dv.Removed, dv.Same)
	}
	if same := newDiffView("x\ny", "x\ny", "a", "b"); !same.Same || same.Rows != nil {
		t.Errorf("equal texts: %+v", same)
	}
}

func TestDiffViewWords(t *testing.T) {
	t.Parallel()
	dv := newDiffView("keep\nthe old word\ngone entirely\nkeep", "keep\nthe new word\nkeep", "a", "b")
	var got []string
	for _, r := range dv.Rows {
		if r.Kind == "eq" {
			continue
		}
		s := r.Kind + ":"
		for _, w := range r.Words {
			if w.Changed {
				s += "[" + w.Text + "]"
			} else {
				s += w.Text
			}
		}
		got = append(got, s)
	}
	// The first deleted line pairs with the first inserted one; a deleted
	// line left without a partner is shown whole.
	want := []string{"del:the [old] word", "del:", "ins:the [new] word"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestMerge3(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		base, mine, theirs string
		want               string
		conflicts          int
	}{
		{"edits of different lines both apply", "a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nD", "A\nb\nc\nD", 0},
		{"the same edit on both sides applies once", "a\nb\nc", "a\nB\nc", "a\nB\nc", "a\nB\nc", 0},
		{"an edit on one side only is taken", "a\nb\nc", "a\nb\nc", "a\nb\nc\nd", "a\nb\nc\nd", 0},
		{"insertions at both ends apply", "m", "top\nm", "m\nbottom", "top\nm\nbottom", 0},
		{"a deletion and an edit elsewhere apply", "a\nb\nc\nd\ne", "a\nc\nd\ne", "a\nb\nc\nd\nE", "a\nc\nd\nE", 0},
		{
			"different edits of one line are marked",
			"a\nb\nc", "a\nmine\nc", "a\ntheirs\nc",
			"a\n" + markMine + "\nmine\n" + markSplit + "\ntheirs\n" + markTheirs + "\nc", 1,
		},
		{
			"an edit against a deletion of the same line is marked",
			"a\nb\nc", "a\nB\nc", "a\nc",
			"a\n" + markMine + "\nB\n" + markSplit + "\n" + markTheirs + "\nc", 1,
		},
		{"an empty base takes both when they agree", "", "x", "x", "x", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := merge3(tc.base, tc.mine, tc.theirs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
			if n != tc.conflicts {
				t.Errorf("%d conflicts, want %d", n, tc.conflicts)
			}
			if hasConflictMarkers(got) != (tc.conflicts > 0) {
				t.Errorf("hasConflictMarkers = %v", hasConflictMarkers(got))
			}
		})
	}
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/documents?status=draft": "/documents?status=draft",
		"/":                       "/",
		"":                        "",
		"//evil.example":          "",
		`/\evil.example`:          "",
		"https://evil.example/":   "",
		"documents":               "",
		"/x\r\nSet-Cookie: a=b":   "",
	} {
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
