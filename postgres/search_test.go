package postgres

import (
	"database/sql"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	_ "modernc.org/sqlite"
)

func TestSearchWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"splits on punctuation and lower-cases", `C'est "Quoted" coverage_rate a\b`, []string{"c", "est", "quoted", "coverage", "rate", "a", "b"}},
		{"strips Latin accents", "Café ÉCOLE Łódź đông İstanbul", []string{"cafe", "ecole", "łodz", "đong", "istanbul"}},
		{"drops a combining accent inside a word", "e\u0301cole x\u0301\u0301y", []string{"ecole", "xy"}},
		{"takes a combining accent alone as a separator", "\u0301 a \u0301b", []string{"a", "b"}},
		{"keeps Greek and Cyrillic marks, as FTS5 does", "Ἀθῆναι й ё", []string{"ἀθῆναι", "й", "ё"}},
		{"keeps digits and number signs", "v2 ² ½ Ⅻ 100%", []string{"v2", "²", "½", "ⅻ", "100"}},
		{"separates on invalid UTF-8, NUL and emoji", "a\xffb\x00c🙂d", []string{"a", "b", "c", "d"}},
		{"finds no word in symbols", `!!! "*" -- () 🙂`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, searchWords(tc.text), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("searchWords(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// TestSearchWordsAgreeWithFTS5 tokenizes random text with SQLite's FTS5
// (unicode61, remove_diacritics 2: the SQLite store's index) and with
// searchWords, and wants the same words: the two stores must find the
// same documents.
func TestSearchWordsAgreeWithFTS5(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// Characters from the scripts and classes that matter: ASCII, Latin
	// letters with and without decompositions, combining marks inside and
	// outside FTS5's diacritic set, Greek, Cyrillic, CJK, digits and number
	// signs, punctuation, private use, and a symbol. Each class is stable
	// in Unicode since the 6.1 data FTS5 was generated from.
	alphabet := []rune("aZ09 _-'\".,;:!?/\\()*")
	for _, r := range [][2]rune{
		{0xC0, 0x17F},    // Latin-1 Supplement letters and Latin Extended-A
		{0x180, 0x24F},   // Latin Extended-B
		{0x1E00, 0x1EFF}, // Latin Extended Additional
		{0x300, 0x33F},   // combining diacritical marks
		{0x391, 0x3C9},   // Greek
		{0x1F00, 0x1F15}, // Greek Extended
		{0x400, 0x45F},   // Cyrillic
		{0x4E00, 0x4E20}, // CJK
		{0xB2, 0xBE},     // superscripts, fractions
		{0x2160, 0x216F}, // Roman numerals
		{0xE000, 0xE005}, // private use
		{0x2600, 0x2605}, // symbols
	} {
		for c := r[0]; c <= r[1]; c++ {
			// Unassigned code points have no category to agree on.
			if unicode.In(c, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Co) {
				alphabet = append(alphabet, c)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 2000)
	for i := range texts {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts[i] = b.String()
	}
	// One transaction and one read for all texts: FTS5 is slow to drive
	// row by row under the race detector.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if _, err := tx.Exec(`INSERT INTO t (rowid, x) VALUES (?, ?)`, i+1, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	fts5 := make([][]string, len(texts))
	rows, err := db.Query(`SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			doc  int
			term string
		)
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		fts5[doc-1] = append(fts5[doc-1], term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	mismatches := 0
	for i, text := range texts {
		if diff := cmp.Diff(fts5[i], searchWords(text), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("words of %q (%U) (-fts5 +searchWords):\n%s", text, []rune(text), diff)
			if mismatches++; mismatches == 10 {
				t.Fatal("too many mismatches")
			}
		}
	}
}

func TestSearchVectorAndQuery(t *testing.T) {
	t.Parallel()
	t.Run("the vector weighs title, summary and content and counts positions across them", func(t *testing.T) {
		got := searchVector("Deploy guide", "How to deploy", "Deploy it", nil)
		want := `'deploy':1A,5B,6C 'guide':2A 'how':3B 'to':4B 'it':7C`
		if got != want {
			t.Errorf("vector = %s, want %s", got, want)
		}
	})

	t.Run("the vector stays within PostgreSQL's limits", func(t *testing.T) {
		long := strings.Repeat("x", maxLexemeBytes+1)
		if got := searchVector(long+" ok", "", "", nil); got != `'ok':2A` {
			t.Errorf("vector with an over-long word = %s", got)
		}
		many := strings.Repeat("same ", 20000)
		got := searchVector("", "", many, nil)
		if n := strings.Count(got, ","); n != maxPositionsPer-1 {
			t.Errorf("a word repeated 20000 times has %d positions, want %d", n+1, maxPositionsPer)
		}
	})

	t.Run("the query makes each word a quoted prefix and drops repeats", func(t *testing.T) {
		got, ok := searchQuery(`Ca'fé & !x | café`)
		if want := `'ca':* & 'fe':* & 'x':* & 'cafe':*`; !ok || got != want {
			t.Errorf("query = %s %v, want %s", got, ok, want)
		}
		if _, ok := searchQuery("!!! *"); ok {
			t.Error("a search without words gave a query")
		}
		if _, ok := searchQuery("a " + strings.Repeat("b", maxLexemeBytes+1)); ok {
			t.Error("a search with an over-long word gave a query")
		}
	})
}
