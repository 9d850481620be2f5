package docindex

import (
	"unicode"
	"unicode/utf8"
)

// The index holds the words of a text exactly as SQLite's FTS5 tokenizer
// `unicode61 remove_diacritics 2` splits and folds them, for the texts
// where that needs no table of unicode61's own: ASCII letters and digits
// form words, folded to lower case; every other ASCII character separates
// them, and so does every character of separators (separators.go, written
// by asking unicode61 about every character that Go's tables call
// punctuation, space, symbol, control or format: unicode61 reads its own
// Unicode 6.1 tables, in which some of them, added since, are word
// characters). Any other character (a letter such as é or 東, a digit of
// another script, a combining mark) makes the text foreign: its words are
// found by asking SQLite (Doc.Terms), since unicode61 folds such letters by
// tables of its own.

// separator reports whether the non-ASCII rune r separates words for
// unicode61.
func separator(r rune) bool { return unicode.Is(separators, r) }

// asciiWord reports whether b is an ASCII letter or digit.
func asciiWord(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// tokenize calls emit with each word of s, folded to lower case, in order,
// and reports whether s is foreign (then the words emitted are not to be
// used). buf is scratch space for the folded word, returned for reuse.
func tokenize(s string, buf []byte, emit func(word []byte)) (foreign bool, _ []byte) {
	word := buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiWord(c) {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				word = append(word, c)
			} else if len(word) > 0 {
				emit(word)
				word = word[:0]
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !separator(r) {
			return true, word
		}
		if len(word) > 0 {
			emit(word)
			word = word[:0]
		}
		i += n
	}
	if len(word) > 0 {
		emit(word)
	}
	return false, word
}

// QueryWord folds one word of a search (a run of letters, digits and marks,
// as the store splits a search) to the term it asks for, and reports false
// when the word is not plain ASCII letters and digits: the index then
// cannot tell how unicode61 would fold and split it, and the store's own
// query must answer.
func QueryWord(w string) (string, bool) {
	if w == "" {
		return "", false
	}
	b := make([]byte, len(w))
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !asciiWord(c) {
			return "", false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b), true
}
