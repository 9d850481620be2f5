package changeset_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"quire/live/changeset"
)

func mustParse(t testing.TB, s string) changeset.ChangeSet {
	t.Helper()
	cs, err := changeset.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return cs
}

// marshal calls MarshalJSON itself: json.Marshal would escape <, >, & and
// U+2028 again (the same JSON value, other bytes).
func marshal(t testing.TB, cs changeset.ChangeSet) string {
	t.Helper()
	b, err := cs.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The JSON, the description (ChangeDesc.toString) and the result on
// "0123456789", as @codemirror/state 6.7.6 gives them for ChangeSet.of
// with the changes named.
func TestJSONAsCodeMirrorWritesIt(t *testing.T) {
	for _, tc := range []struct {
		name, json, desc, applied string
	}{
		{"an insertion", `[5,[0,"hi"],5]`, "5 0:2 5", "01234hi56789"},
		{"a deletion", `[5,[2],3]`, "5 2:0 3", "01234789"},
		{"a replacement", `[5,[2,"hi"],3]`, "5 2:2 3", "01234hi789"},
		{"lines replacing everything", `[[10,"a","b",""]]`, "10:4", "a\nb\n"},
		{"an emoji and a deletion", `[2,[0,"😀"],1,[1],6]`, "2 0:2 1 1:0 6", "01😀2456789"},
		{"a deletion then an insertion stay apart", `[[1],[0,"x"],9]`, "1:0 0:1 9", "x123456789"},
		{"nothing", `[10]`, "10", "0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := mustParse(t, tc.json)
			if got := marshal(t, cs); got != tc.json {
				t.Errorf("MarshalJSON = %s, want %s", got, tc.json)
			}
			if got := cs.String(); got != tc.desc {
				t.Errorf("String = %q, want %q", got, tc.desc)
			}
			got, err := cs.Apply("0123456789")
			if err != nil || got != tc.applied {
				t.Errorf("Apply = %q, %v; want %q", got, err, tc.applied)
			}
			if cs.Len() != 10 {
				t.Errorf("Len = %d, want 10", cs.Len())
			}
		})
	}
}

func TestMarshalEscapesAsJSONStringify(t *testing.T) {
	// JSON.stringify escapes quotes, backslashes and control characters
	// (short forms where JSON has them), and nothing else.
	in := `[3,[0,"a\"\\\t\u0001\u007f\/<>` + "\u2028" + `"],7]`
	want := `[3,[0,"a\"\\\t\u0001` + "\u007f" + `/<>` + "\u2028" + `"],7]`
	if got := marshal(t, mustParse(t, in)); got != want {
		t.Errorf("MarshalJSON = %s, want %s", got, want)
	}
}

func TestParseJoinsRunsAsCodeMirrorDoes(t *testing.T) {
	for in, want := range map[string]string{
		`[1,2,[0,"a"],[0,"b"]]`:       `[3,[0,"ab"]]`,
		`[[1],[2],0,[0],[0,""],3]`:    `[[3],3]`,
		`[[2,""]]`:                    `[[2]]`,
		` [ 1 , [ 0 , "x" , "y" ] ] `: `[1,[0,"x","y"]]`,
		`[]`:                          `[]`,
	} {
		if got := marshal(t, mustParse(t, in)); got != want {
			t.Errorf("Parse(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestParseRefusesWhatTheBrowserDoesNotSend(t *testing.T) {
	for _, in := range []string{
		``, `null`, `{}`, `"x"`, `[`, `[1,]`, `[,1]`, `[1 2]`, `[1]x`, `[1][2]`,
		`[-1]`, `[1.0]`, `[1e2]`, `[01]`, `[2147483648]`, `[2147483647,1]`,
		`[[]]`, `[["a"]]`, `[[1,2]]`, `[[1,null]]`, `[[1,"a"],]`, `[[1,"a"`,
		`[[0,"a\nb"]]`, `[[0,"a\rb"]]`, `[[0,"tab	raw"]]`, `[[0,"\x"]]`, `[[0,"\u12"]]`,
		`[[0,"\ud83d"]]`, `[[0,"\ude00"]]`, `[[0,"\ud83d\u0041"]]`, `[[0,"` + "\xff" + `"]]`,
		`[[0,"` + "\xed\xa0\x80" + `"]]`, // a surrogate encoded in UTF-8
		`[[0,"unterminated]]`,
	} {
		_, err := changeset.Parse([]byte(in))
		if !errors.Is(err, changeset.ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

func TestParseDecodesEscapes(t *testing.T) {
	cs := mustParse(t, `[[0,"\ud83d\ude00\u00e9\/\"","b"]]`)
	got, err := cs.Apply("")
	if want := "😀é/\"\nb"; err != nil || got != want {
		t.Errorf("Apply = %q, %v; want %q", got, err, want)
	}
	if cs.NewLen() != 7 {
		t.Errorf("NewLen = %d, want 7 (2 for the emoji)", cs.NewLen())
	}
}

func TestUnmarshalJSONInAMessage(t *testing.T) {
	var msg struct {
		Changes []changeset.ChangeSet `json:"changes"`
	}
	if err := json.Unmarshal([]byte(`{"changes":[[1,[0,"x"]],[[2]]]}`), &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Changes) != 2 || msg.Changes[0].String() != "1 0:1" || msg.Changes[1].String() != "2:0" {
		t.Errorf("got %v", msg.Changes)
	}
	err := json.Unmarshal([]byte(`{"changes":[[[0,"\ud800"]]]}`), &msg)
	if !errors.Is(err, changeset.ErrMalformed) {
		t.Errorf("a lone surrogate in a message: %v, want ErrMalformed", err)
	}
}

func TestApplyRefusesAWrongLengthOrASplitCharacter(t *testing.T) {
	for _, tc := range []struct {
		name, json, text string
		want             error
	}{
		{"text shorter", `[5]`, "abcd", changeset.ErrLength},
		{"text longer", `[3,[0,"x"]]`, "abcd", changeset.ErrLength},
		{"an emoji counts two units", `[1]`, "😀", changeset.ErrLength},
		{"insert between the halves of an emoji", `[1,[0,"x"],1]`, "😀", changeset.ErrSurrogate},
		{"delete half an emoji", `[[1],1]`, "😀", changeset.ErrSurrogate},
		{"delete from the middle of an emoji", `[1,[2],1]`, "😀😀", changeset.ErrSurrogate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustParse(t, tc.json).Apply(tc.text)
			if !errors.Is(err, tc.want) {
				t.Errorf("Apply = %q, %v; want %v", got, err, tc.want)
			}
		})
	}
	t.Run("whole characters apply", func(t *testing.T) {
		got, err := mustParse(t, `[2,[2,"é"],[0,"漢"],1]`).Apply("😀😀é")
		if want := "😀é漢é"; err != nil || got != want {
			t.Errorf("Apply = %q, %v; want %q", got, err, want)
		}
	})
}

func TestMapPos(t *testing.T) {
	// "01234" with "hi" inserted at 2 and 3..4 replaced by "xyz".
	cs := mustParse(t, `[2,[0,"hi"],1,[1,"xyz"],1]`)
	for _, tc := range []struct{ pos, assoc, want int }{
		{0, changeset.Before, 0},
		{2, changeset.Before, 2}, // stays before the insertion
		{2, changeset.After, 4},  // moves past it
		{3, changeset.Before, 5},
		{3, changeset.After, 5}, // the start of a replaced range stays at its start
		{4, changeset.Before, 8},
		{4, changeset.After, 8},
		{5, changeset.After, 9},
	} {
		got, err := cs.MapPos(tc.pos, tc.assoc)
		if err != nil || got != tc.want {
			t.Errorf("MapPos(%d, %d) = %d, %v; want %d", tc.pos, tc.assoc, got, err, tc.want)
		}
	}
	inside := mustParse(t, `[1,[3,"ab"],1]`)
	if got, _ := inside.MapPos(2, changeset.Before); got != 1 {
		t.Errorf("inside a replaced range, Before: %d, want 1 (its start)", got)
	}
	if got, _ := inside.MapPos(2, changeset.After); got != 3 {
		t.Errorf("inside a replaced range, After: %d, want 3 (its end)", got)
	}
	for _, pos := range []int{-1, 6} {
		if _, err := cs.MapPos(pos, changeset.Before); !errors.Is(err, changeset.ErrLength) {
			t.Errorf("MapPos(%d) = %v, want ErrLength", pos, err)
		}
	}
}

func TestReplace(t *testing.T) {
	cs, err := changeset.Replace(4, 1, 3, "😀\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, cs); got != `[1,[2,"😀",""],1]` {
		t.Errorf("Replace = %s", got)
	}
	for _, r := range [][3]int{{4, -1, 0}, {4, 2, 1}, {4, 0, 5}} {
		if _, err := changeset.Replace(r[0], r[1], r[2], ""); !errors.Is(err, changeset.ErrLength) {
			t.Errorf("Replace(%v) = %v, want ErrLength", r, err)
		}
	}
	if _, err := changeset.Replace(1, 0, 0, "\xff"); !errors.Is(err, changeset.ErrMalformed) {
		t.Errorf("Replace with invalid UTF-8 = %v, want ErrMalformed", err)
	}
}

func TestComposeAndMapRefuseMismatchedLengths(t *testing.T) {
	a, b := mustParse(t, `[2,[0,"x"]]`), mustParse(t, `[2]`)
	if _, err := a.Compose(b); !errors.Is(err, changeset.ErrLength) {
		t.Errorf("Compose = %v, want ErrLength", err)
	}
	if _, err := mustParse(t, `[3]`).Map(a, false); !errors.Is(err, changeset.ErrLength) {
		t.Errorf("Map = %v, want ErrLength", err)
	}
	// A later change that cuts an inserted emoji in half.
	if _, err := mustParse(t, `[[0,"😀"]]`).Compose(mustParse(t, `[1,[1]]`)); !errors.Is(err, changeset.ErrSurrogate) {
		t.Errorf("Compose cutting an emoji = %v, want ErrSurrogate", err)
	}
}

// TestAgainstCodeMirror checks Parse, MarshalJSON, Apply, Compose, Map and
// MapPos against results @codemirror/state 6.7.6 computed on random
// documents and changes with multi-byte text (testdata/gen.mjs).
func TestAgainstCodeMirror(t *testing.T) {
	data, err := os.ReadFile("testdata/codemirror.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Doc             string
		A, B, C         json.RawMessage
		ApplyA          string
		MapAB           json.RawMessage
		MapABBefore     json.RawMessage
		ComposeAC       json.RawMessage
		ComposeAMappedB json.RawMessage
		MapPosA         [][3]int
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	same := func(i int, what string, got changeset.ChangeSet, want json.RawMessage) {
		t.Helper()
		if g := marshal(t, got); g != string(want) {
			t.Errorf("case %d: %s = %s, want %s", i, what, g, want)
		}
	}
	for i, c := range cases {
		a, b, cc := mustParse(t, string(c.A)), mustParse(t, string(c.B)), mustParse(t, string(c.C))
		same(i, "a", a, c.A)
		same(i, "b", b, c.B)
		same(i, "c", cc, c.C)
		if got, err := a.Apply(c.Doc); err != nil || got != c.ApplyA {
			t.Errorf("case %d: Apply = %q, %v; want %q", i, got, err, c.ApplyA)
		}
		m, err := a.Map(b, false)
		if err != nil {
			t.Fatalf("case %d: Map: %v", i, err)
		}
		same(i, "a.map(b)", m, c.MapAB)
		m, err = a.Map(b, true)
		if err != nil {
			t.Fatalf("case %d: Map before: %v", i, err)
		}
		same(i, "a.map(b, true)", m, c.MapABBefore)
		ac, err := a.Compose(cc)
		if err != nil {
			t.Fatalf("case %d: Compose: %v", i, err)
		}
		same(i, "a.compose(c)", ac, c.ComposeAC)
		bm, err := b.Map(a, false)
		if err != nil {
			t.Fatalf("case %d: Map: %v", i, err)
		}
		abm, err := a.Compose(bm)
		if err != nil {
			t.Fatalf("case %d: Compose: %v", i, err)
		}
		same(i, "a.compose(b.map(a))", abm, c.ComposeAMappedB)
		for _, p := range c.MapPosA {
			if got, err := a.MapPos(p[0], changeset.Before); err != nil || got != p[1] {
				t.Errorf("case %d: MapPos(%d, -1) = %d, %v; want %d", i, p[0], got, err, p[1])
			}
			if got, err := a.MapPos(p[0], changeset.After); err != nil || got != p[2] {
				t.Errorf("case %d: MapPos(%d, 1) = %d, %v; want %d", i, p[0], got, err, p[2])
			}
		}
	}
}

func TestIdentityAndChanges(t *testing.T) {
	if got := marshal(t, changeset.Identity(3)); got != `[3]` {
		t.Errorf("Identity(3) = %s", got)
	}
	if got := marshal(t, changeset.Identity(0)); got != `[]` || !changeset.Identity(0).Empty() {
		t.Errorf("Identity(0) = %s", got)
	}
	type change struct {
		fromA, toA, fromB, toB int
		text                   string
	}
	for in, want := range map[string][]change{
		`[2,[0,"hi"],1,[1,"xyz"],1]`: {{2, 2, 2, 4, "hi"}, {3, 4, 5, 8, "xyz"}},
		`[[1],[0,"x"],9]`:            {{0, 1, 0, 1, "x"}}, // adjacent: reported together
		`[3]`:                        nil,
	} {
		var got []change
		mustParse(t, in).Changes(func(fromA, toA, fromB, toB int, text string) {
			got = append(got, change{fromA, toA, fromB, toB, text})
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Changes(%s) = %v, want %v", in, got, want)
		}
	}
}
