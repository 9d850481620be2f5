// Package textsearch is words as the full-text indexes of both stores see
// them, and the highlights of a search result built from them.
//
// The SQLite store indexes with FTS5's unicode61 tokenizer (remove_diacritics
// 2); the PostgreSQL store splits and folds words in Go with Words, exactly
// as that tokenizer does, so that both find the same documents; highlights
// are computed once, here, from a page's documents, so that both stores
// answer the same marks.
package textsearch

import (
	"strings"
	"unicode"
)

// Words splits text into the words FTS5's unicode61 tokenizer makes:
// runs of letters, digits and private-use characters (the categories L*,
// N* and Co), which a combining diacritic also continues; everything else
// separates. Each character is folded: lower-cased, and a Latin letter
// with a diacritic replaced by its base letter (the diacritic itself is
// dropped), as remove_diacritics 2 does. Greek, Cyrillic and other scripts
// keep their marks, as in FTS5.
func Words(text string) []string {
	var (
		words  []string
		b      strings.Builder
		inWord bool
	)
	end := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
		}
		b.Reset()
		inWord = false
	}
	for _, r := range text {
		if isTokenChar(r) || (inWord && isDiacritic(r)) {
			inWord = true
			if f := foldRune(r); f != 0 {
				b.WriteRune(f)
			}
			continue
		}
		end()
	}
	end()
	return words
}

func isTokenChar(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return r != unicode.ReplacementChar &&
		(unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r))
}

// isDiacritic is sqlite3Fts5UnicodeIsdiacritic: the combining marks, among
// U+0300 to U+0331, that continue a word.
func isDiacritic(r rune) bool {
	const mask0, mask1 = 0x08029FDF, 0x000361F8
	switch {
	case r < 768 || r > 817:
		return false
	case r < 768+32:
		return mask0&(1<<(r-768)) != 0
	}
	return mask1&(1<<(r-768-32)) != 0
}

// foldRune is sqlite3Fts5UnicodeFold with remove_diacritics 2: ASCII and the
// Basic Multilingual Plane are case-folded (the BMP also loses Latin
// diacritics), Deseret is lower-cased, the rest is left alone. 0 means the
// character is dropped.
func foldRune(r rune) rune {
	switch {
	case r < 0x80:
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	case r < 0x10000:
		return removeDiacritic(caseFold(r))
	case r >= 66560 && r < 66600:
		return r + 40
	}
	return r
}

// caseFold is the simple case folding of Unicode's CaseFolding.txt, which
// FTS5 applies rather than lower-casing: ſ is s and µ is μ. It is the lower
// case of the upper case when that stays within the characters that fold
// together; otherwise (dotless ı, whose upper case I folds to i) the
// character folds to itself.
func caseFold(r rune) rune {
	f := unicode.ToLower(unicode.ToUpper(r))
	for c := unicode.SimpleFold(r); c != r; c = unicode.SimpleFold(c) {
		if c == f {
			return f
		}
	}
	return r
}

// removeDiacritic is fts5_remove_diacritic (SQLite's fts5_unicode2.c, in the
// public domain) in its complex mode. Entry i of diaKeys covers the code
// points from diaKeys[i]>>3 to that plus diaKeys[i]&7, which fold to the
// ASCII letter diaChars[i]&0x7F (0: the character is a diacritic and is
// dropped); the high bit marks folds that only the complex mode makes.
func removeDiacritic(r rune) rune {
	key := uint32(r)<<3 | 7
	res := 0
	lo, hi := 0, len(diaKeys)-1
	for hi >= lo {
		mid := (hi + lo) / 2
		if key >= uint32(diaKeys[mid]) {
			res = mid
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	if r > rune(diaKeys[res]>>3)+rune(diaKeys[res]&7) {
		return r
	}
	return rune(diaChars[res] & 0x7F)
}

var diaKeys = [126]uint16{
	0, 1797, 1848, 1859, 1891, 1928, 1940, 1995, 2024, 2040, 2060, 2110, 2168, 2206, 2264, 2286,
	2344, 2383, 2472, 2488, 2516, 2596, 2668, 2732, 2782, 2842, 2894, 2954, 2984, 3000, 3028, 3336,
	3456, 3696, 3712, 3728, 3744, 3766, 3832, 3896, 3912, 3928, 3944, 3968, 4008, 4040, 4056, 4106,
	4138, 4170, 4202, 4234, 4266, 4296, 4312, 4344, 4408, 4424, 4442, 4472, 4488, 4504, 6148, 6198,
	6264, 6280, 6360, 6429, 6505, 6529, 61448, 61468, 61512, 61534, 61592, 61610, 61642, 61672, 61688, 61704,
	61726, 61784, 61800, 61816, 61836, 61880, 61896, 61914, 61948, 61998, 62062, 62122, 62154, 62184, 62200, 62218,
	62252, 62302, 62364, 62410, 62442, 62478, 62536, 62554, 62584, 62604, 62640, 62648, 62656, 62664, 62730, 62766,
	62830, 62890, 62924, 62974, 63032, 63050, 63082, 63118, 63182, 63242, 63274, 63310, 63368, 63390,
}

var diaChars = [126]uint8{
	0, 97, 99, 101, 105, 110, 111, 117, 121, 121, 97, 99, 100, 101, 101, 103,
	104, 105, 106, 107, 108, 110, 111, 114, 115, 116, 117, 117, 119, 121, 122, 111,
	117, 97, 105, 111, 117, 245, 225, 103, 107, 111, 239, 106, 103, 110, 225, 97,
	101, 105, 111, 114, 117, 115, 116, 104, 97, 101, 239, 111, 239, 121, 0, 0,
	0, 0, 0, 0, 0, 0, 97, 98, 227, 100, 100, 229, 101, 229, 102, 103,
	104, 104, 105, 233, 107, 108, 236, 108, 109, 110, 239, 112, 114, 242, 114, 115,
	243, 116, 117, 245, 118, 119, 119, 120, 121, 122, 104, 116, 119, 121, 97, 225,
	225, 225, 101, 229, 229, 105, 111, 239, 239, 239, 117, 245, 245, 121,
}
