package changeset_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"quire/live/changeset"
)

var fuzzSeeds = []string{
	`[]`, `[10]`, `[5,[0,"hi"],5]`, `[5,[2],3]`, `[[10,"a","b",""]]`, `[2,[0,"😀"],1,[1],6]`,
	`[[1],[0,"x"],9]`, `[1,2,[0,"a"],[0,"b"]]`, `[[0,"\ud83d\ude00\u00e9\/\"","b"]]`,
	`[[0,"\ud83d"]]`, `[1.5]`, `[-1]`, `[[0,"a\nb"]]`, `[2147483647,1]`, ` [ 1 , [ 0 , "x" ] ] `,
	`[[`, `[1,`, `[[1,"`, `[[1,"\u`,
}

// FuzzParse: Parse never panics; what it accepts is JSON, and its
// MarshalJSON parses back to the same change set (a fixed point).
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := changeset.Parse(data)
		if err != nil {
			if !errors.Is(err, changeset.ErrMalformed) {
				t.Fatalf("Parse error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted invalid JSON %q", data)
		}
		out, err := cs.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := changeset.Parse(out)
		if err != nil {
			t.Fatalf("Parse(MarshalJSON(%q)) = %v", data, err)
		}
		out2, _ := again.MarshalJSON()
		if string(out2) != string(out) || again.Len() != cs.Len() || again.NewLen() != cs.NewLen() {
			t.Fatalf("round trip of %q: %s then %s", data, out, out2)
		}
	})
}

// FuzzApply: Apply never panics; it fails only with its errors, and when
// it succeeds on valid UTF-8 the result is valid UTF-8 of NewLen units,
// and Diff finds a change set back from the text to the result.
func FuzzApply(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "0123456789")
	}
	f.Add([]byte(`[1,[0,"x"],1]`), "😀")
	f.Add([]byte(`[2,[2,"é"],[0,"漢"],1]`), "😀😀é")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		cs, err := changeset.Parse(data)
		if err != nil {
			return
		}
		got, err := cs.Apply(text)
		if err != nil {
			if !errors.Is(err, changeset.ErrLength) && !errors.Is(err, changeset.ErrSurrogate) {
				t.Fatalf("Apply error %v", err)
			}
			return
		}
		if !utf8.ValidString(text) {
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Apply(%q) on %q gave invalid UTF-8 %q", data, text, got)
		}
		if n := utf16Len(got); n != cs.NewLen() {
			t.Fatalf("Apply(%q) on %q gave %d units, NewLen is %d", data, text, n, cs.NewLen())
		}
		back, err := changeset.Diff(text, got).Apply(text)
		if err != nil || back != got {
			t.Fatalf("Diff(%q, %q) applied: %q, %v", text, got, back, err)
		}
	})
}

func utf16Len(s string) int { u := units(s); return u[len(u)-1] }

// FuzzMapConverges: for change sets a and b of one document, a then
// b.Map(a, false) and b then a.Map(b, true) give the same text (the
// property @codemirror/collab rests on). Map and Compose never panic or
// hang on any pair Parse accepts.
func FuzzMapConverges(f *testing.F) {
	f.Add([]byte(`[5,[0,"hi"],5]`), []byte(`[5,[2],3]`))
	f.Add([]byte(`[[10,"a","b",""]]`), []byte(`[2,[0,"😀"],1,[1],6]`))
	f.Add([]byte(`[[1],[0,"x"],9]`), []byte(`[[0,"y"],10]`))
	f.Fuzz(func(t *testing.T, da, db []byte) {
		a, err1 := changeset.Parse(da)
		b, err2 := changeset.Parse(db)
		if err1 != nil || err2 != nil {
			return
		}
		bm, err := b.Map(a, false)
		am, err2 := a.Map(b, true)
		if a.Len() != b.Len() {
			if err == nil || err2 == nil {
				t.Fatalf("Map of lengths %d and %d succeeded", a.Len(), b.Len())
			}
			return
		}
		if err != nil || err2 != nil {
			t.Fatalf("Map: %v, %v", err, err2)
		}
		if a.Len() > 1<<12 {
			return
		}
		doc := strings.Repeat("-", a.Len())
		ab, err := apply2(doc, a, bm)
		if err != nil {
			t.Fatal(err)
		}
		ba, err := apply2(doc, b, am)
		if err != nil {
			t.Fatal(err)
		}
		if ab != ba {
			t.Fatalf("a=%s b=%s: %q != %q", da, db, ab, ba)
		}
		c, err := a.Compose(bm)
		if err != nil {
			t.Fatalf("Compose: %v", err)
		}
		if got, err := c.Apply(doc); err != nil || got != ab {
			t.Fatalf("composed: %q, %v; want %q", got, err, ab)
		}
	})
}

func apply2(doc string, a, b changeset.ChangeSet) (string, error) {
	mid, err := a.Apply(doc)
	if err != nil {
		return "", err
	}
	return b.Apply(mid)
}
