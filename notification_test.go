package quire

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMentions(t *testing.T) {
	id := func(i int) string { return fmt.Sprintf("01900000-0000-7000-8000-%012d", i) }
	m := func(i int) string { return "[@P" + fmt.Sprint(i) + "](mention:" + id(i) + ")" }

	t.Run("distinct, in order, upper-case ids read as lower-case, other links ignored", func(t *testing.T) {
		text := m(2) + " " + m(1) + " " + strings.ToUpper(m(2)) + " [x](https://example.com) [@Q](mention:not-an-id)"
		got, ignored := Mentions(text)
		if !slices.Equal(got, []string{id(2), id(1)}) || ignored != 0 {
			t.Errorf("Mentions = %v, %d", got, ignored)
		}
	})
	t.Run("at most MaxMentions, the rest counted", func(t *testing.T) {
		var b strings.Builder
		for i := range 60 {
			b.WriteString(m(i) + m(i))
		}
		got, ignored := Mentions(b.String())
		if len(got) != MaxMentions || got[0] != id(0) || ignored != 10 {
			t.Errorf("%d mentions, %d ignored; want %d and 10", len(got), ignored, MaxMentions)
		}
	})
	t.Run("a save adds only what the previous content did not have", func(t *testing.T) {
		got, _ := AddedMentions("hi "+m(1), "hi "+m(1)+" and "+m(3)+" "+m(3))
		if !slices.Equal(got, []string{id(3)}) {
			t.Errorf("AddedMentions = %v, want only the new one", got)
		}
		if got, _ := AddedMentions(m(1)+m(3), m(3)); len(got) != 0 {
			t.Errorf("a removed mention notified %v", got)
		}
	})
}
