package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode"

	"quire/docindex"
)

// TestTokenizerSeparators checks docindex/separators.go against unicode61
// itself: of the runes outside ASCII that Go's tables call punctuation,
// space, symbol, control or format, the index takes for a separator exactly
// those that separate words for unicode61, and takes a text holding any
// other for foreign.
func TestTokenizerSeparators(t *testing.T) {
	t.Parallel()
	var tok ftsTokenizer
	defer tok.close()
	seps := map[rune]bool{}
	for _, r := range unicode61Separators(t, &tok) {
		seps[r] = true
	}
	if len(seps) < 5000 {
		t.Fatalf("only %d separators", len(seps))
	}
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !unicode.In(r, unicode.P, unicode.Z, unicode.S, unicode.Cc, unicode.Cf) {
			continue
		}
		n++
		words, _, ok := docindex.Words(&docindex.Doc{Content: "a" + string(r) + "b"})
		if ok != seps[r] {
			t.Fatalf("%U: the index reads it as a separator: %v; unicode61: %v (run the generator: QUIRE_GENERATE_SEPARATORS=1 go test ./sqlite -run TestTokenizerGenerate)", r, ok, seps[r])
		}
		if ok && (len(words) != 2 || words["a"] != 1 || words["b"] != 1) {
			t.Fatalf("%U: words %v", r, words)
		}
	}
	if n-len(seps) == 0 {
		t.Fatal("no character of those categories is a word character for unicode61: the check compares nothing")
	}
}

// TestTokenizerWords compares the words the index finds itself with those
// unicode61 finds, on random texts of ASCII and of the separators above,
// and checks that a foreign text is recognised as one. unicode61 reads all
// the texts in one statement (under the race detector one statement each
// took two seconds of CPU), and the index's own tokenizer of foreign texts
// (ftsTokenizer.words) reads a few of them too, which must agree.
func TestTokenizerWords(t *testing.T) {
	t.Parallel()
	var tok ftsTokenizer
	defer tok.close()
	r := rand.New(rand.NewPCG(18, 18))
	pieces := []string{"a", "B", "z", "Q", "0", "9", "release", "Release", "inc2198", " ", "\t", "\n", "-", "_", ".",
		",", "'", "\"", "*", "#", "`", "<", ">", "/", "\\", "\x00", "\x7f", "\u00a0", "\u2014", "\u201c", "\u201d",
		"\u2022", "\u00b7", "\U0001F600", "\u3000", "\ufeff", "\u200b", "\u00a9", "\u20ac"}
	foreign := []string{"é", "e\u0301", "東京", "Ä", "ß", "ı", "\u00aa", "\u00b2", "\u0660", "\ue000"}
	type sample struct {
		texts [4]string
		words map[string]uint32
		n     uint32
	}
	var samples []sample
	for i := range 600 {
		var texts [4]string
		isForeign := i%5 == 0
		for c := range texts {
			var b strings.Builder
			for range r.IntN(40) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if isForeign && c == i%4 {
				b.WriteString(foreign[r.IntN(len(foreign))])
			}
			texts[c] = b.String()
		}
		d := &docindex.Doc{Title: texts[0], Summary: texts[1], Content: texts[2], Tags: texts[3]}
		mine, n, ok := docindex.Words(d)
		if ok == isForeign {
			t.Fatalf("%q: foreign %v, want %v", texts, !ok, isForeign)
		}
		if ok {
			samples = append(samples, sample{texts, mine, n})
		}
	}
	theirs, counts := unicode61Words(t, &tok, samples, func(s sample) [4]string { return s.texts })
	for i, s := range samples {
		if s.n != counts[i] || !maps.Equal(s.words, theirs[i]) {
			t.Fatalf("%q:\nindex    %d %v\nunicode61 %d %v", s.texts, s.n, s.words, counts[i], theirs[i])
		}
	}
	for _, s := range samples[:20] {
		words, n, _, err := tok.words(context.Background(), s.texts)
		if err != nil {
			t.Fatal(err)
		}
		if n != s.n || !maps.Equal(words, s.words) {
			t.Fatalf("%q:\nindex          %d %v\nftsTokenizer %d %v", s.texts, s.n, s.words, n, words)
		}
	}
}

// tokTx opens tok's database and begins a transaction on it, which the
// caller rolls back: what it puts in tok's tables stays out of them.
func tokTx(t *testing.T, tok *ftsTokenizer) *sql.Tx {
	t.Helper()
	ctx := context.Background()
	if err := tok.open(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := tok.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// unicode61Words puts the four texts (title, summary, content, tags) of
// each of xs in tok's table at once, and returns the weighted count of
// every term of each and the number of its tokens, as FTS5 counts them
// (what ftsTokenizer.words returns for one), in the order of xs.
func unicode61Words[T any](t *testing.T, tok *ftsTokenizer, xs []T, texts func(T) [4]string) ([]map[string]uint32, []uint32) {
	ctx := context.Background()
	tx := tokTx(t, tok)
	defer tx.Rollback()
	all := make([][4]string, len(xs))
	for i, x := range xs {
		all[i] = texts(x)
	}
	js, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO tok (rowid, title, summary, content, tags)
		SELECT key + 1, value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?)`, string(js))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(xs)) {
		t.Fatalf("%d of %d texts inserted (%v)", n, len(xs), err)
	}
	words := make([]map[string]uint32, len(xs))
	counts := make([]uint32, len(xs))
	for i := range words {
		words[i] = map[string]uint32{}
	}
	rows, err := tx.QueryContext(ctx, `SELECT doc, term, col FROM tokv ORDER BY doc, col, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			doc       int
			term, col string
		)
		if err := rows.Scan(&doc, &term, &col); err != nil {
			t.Fatal(err)
		}
		c, ok := tokColumns[col]
		if !ok || doc < 1 || doc > len(xs) {
			t.Fatalf("doc %d, column %q", doc, col)
		}
		words[doc-1][term] += docindex.Weight(c)
		counts[doc-1]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return words, counts
}

// unicode61Separators returns, of the runes outside ASCII that Go's tables
// call punctuation, space, symbol, control or format, those that separate
// words for unicode61, in order.
func unicode61Separators(t *testing.T, tok *ftsTokenizer) []rune {
	ctx := context.Background()
	tx := tokTx(t, tok)
	defer tx.Rollback()
	// The candidates go in with one statement, as a JSON array of texts,
	// not one statement each: under the race detector some 8,000 statements
	// took a second of CPU.
	var cands []rune
	var texts []string
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if unicode.In(r, unicode.P, unicode.Z, unicode.S, unicode.Cc, unicode.Cf) {
			cands = append(cands, r)
			texts = append(texts, "a"+string(r)+"b")
		}
	}
	js, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO tok (rowid, content) SELECT key + 1, value FROM json_each(?)`, string(js))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(cands)) {
		t.Fatalf("%d of %d candidates inserted (%v)", n, len(cands), err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT doc FROM tokv GROUP BY doc HAVING count(*) = 2 AND min(term) = 'a' AND max(term) = 'b' ORDER BY doc`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seps []rune
	for rows.Next() {
		var doc int
		if err := rows.Scan(&doc); err != nil {
			t.Fatal(err)
		}
		seps = append(seps, cands[doc-1])
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return seps
}

func TestTokenizerGenerate(t *testing.T) {
	if os.Getenv("QUIRE_GENERATE_SEPARATORS") == "" {
		t.Skip("set QUIRE_GENERATE_SEPARATORS=1 to write docindex/separators.go")
	}
	var tok ftsTokenizer
	defer tok.close()
	seps := unicode61Separators(t, &tok)
	var b strings.Builder
	b.WriteString("// Code generated by TestTokenizerGenerate (sqlite/tokenizer_test.go); DO NOT EDIT.\n\npackage docindex\n\nimport \"unicode\"\n\n")
	b.WriteString("// separators are the runes outside ASCII that SQLite's unicode61 tokenizer\n// reads as separators and Go's tables call punctuation, space, symbol,\n// control or format.\nvar separators = &unicode.RangeTable{\n\tR16: []unicode.Range16{\n")
	var r16, r32 []string
	for i := 0; i < len(seps); {
		j := i
		for j+1 < len(seps) && seps[j+1] == seps[j]+1 {
			j++
		}
		line := fmt.Sprintf("\t\t{Lo: 0x%04x, Hi: 0x%04x, Stride: 1},\n", seps[i], seps[j])
		if seps[j] <= 0xffff {
			r16 = append(r16, line)
		} else {
			r32 = append(r32, line)
		}
		i = j + 1
	}
	b.WriteString(strings.Join(r16, ""))
	b.WriteString("\t},\n\tR32: []unicode.Range32{\n")
	b.WriteString(strings.Join(r32, ""))
	b.WriteString("\t},\n}\n")
	if err := os.WriteFile("../docindex/separators.go", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d separators", len(seps))
}
