// Package slug makes the id quire's pages give a heading, so that the
// renderer (web) and the importer's wikilinks (transfer) agree on it.
package slug

import "strings"

// Max bounds a slug: an id is written three times (the heading, its §
// link and the table of contents), so a long heading must not make it long.
const Max = 64

// Of makes an id of a heading: ASCII letters and digits in lower case,
// words joined by "-" ("section" when none is left), at most Max-2 bytes.
// The sanitiser keeps only ids of [a-zA-Z0-9:_.-].
func Of(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range title {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case r == '_' || r == '-':
		default:
			dash = b.Len() > 0
			continue
		}
		if b.Len()+2 > Max {
			break
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "section"
	}
	return b.String()
}
