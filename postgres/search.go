package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"quire/docindex"
	"quire/textsearch"
)

// Full-text search without PostgreSQL's parser or dictionaries.
//
// The SQLite store indexes with FTS5's unicode61 tokenizer (remove_diacritics
// 2). To find the same documents here, whatever the database's locale or
// text-search configuration, the store splits and folds words in Go exactly
// as that tokenizer does, and hands PostgreSQL finished lexemes: the
// document's vector as a tsvector literal, and the search as a tsquery
// literal of prefix terms ('word':* & 'other':*). Lexemes are only letters
// and digits, and are quoted besides, so nothing a client types is read as
// query syntax.

// Limits of PostgreSQL's tsvector: a lexeme of at most 2046 bytes, at most
// 1 MiB of lexemes and positions together (each lexeme padded to an even
// length, with a 2-byte count and 2 bytes a position), positions 1 to
// 16383 and at most 256 of them per lexeme. A word longer than a lexeme is
// not indexed (and a search for it finds nothing); in a document whose
// words exceed the budget, the words and positions past it are not indexed.
const (
	maxLexemeBytes  = 2046
	maxVectorBytes  = 1_000_000
	maxPosition     = 16383
	maxPositionsPer = 256
)

// searchWords splits and folds text as FTS5's unicode61 tokenizer does
// (package textsearch, which the highlights share).
func searchWords(text string) []string { return textsearch.Words(text) }

// quoteLexeme writes w as a quoted tsvector or tsquery operand.
func quoteLexeme(b *strings.Builder, w string) {
	b.WriteByte('\'')
	for _, r := range w {
		if r == '\'' || r == '\\' {
			b.WriteRune(r)
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
}

// lexeme is one lexeme of a document's vector: its positions with their
// weights, within PostgreSQL's limits, and its weighted count in every
// column (docindex.Weight per occurrence) for the index of documents.
type lexeme struct {
	positions []int
	weights   []byte
	count     uint32
}

// vectorLexemes returns the lexemes of a document's vector in the order
// first met, and its number of words: the words of its title with weight
// A, of its summary with B, of its content with C and of its tags (in
// their order) with D, within PostgreSQL's limits (a word too long, or a
// new one past the budget, is left out).
func vectorLexemes(title, summary, content string, tags []string) (order []string, lex map[string]*lexeme, words int) {
	lex = map[string]*lexeme{}
	var pos, size int
	for col, part := range []struct {
		text   string
		weight byte
	}{{title, 'A'}, {summary, 'B'}, {content, 'C'}, {strings.Join(tags, " "), 'D'}} {
		for _, w := range searchWords(part.text) {
			pos++
			if len(w) > maxLexemeBytes {
				continue
			}
			l := lex[w]
			p := min(pos, maxPosition)
			if l == nil {
				cost := len(w) + len(w)%2 + 2 + 2
				if size+cost > maxVectorBytes {
					continue
				}
				size += cost
				l = &lexeme{positions: []int{p}, weights: []byte{part.weight}, count: docindex.Weight(col)}
				lex[w] = l
				order = append(order, w)
				continue
			}
			l.count += docindex.Weight(col)
			if n := len(l.positions); n < maxPositionsPer && l.positions[n-1] != p && size+2 <= maxVectorBytes {
				size += 2
				l.positions = append(l.positions, p)
				l.weights = append(l.weights, part.weight)
			}
		}
	}
	return order, lex, pos
}

// searchVector returns the tsvector literal of a document (vectorLexemes),
// each lexeme with its positions.
func searchVector(title, summary, content string, tags []string) string {
	order, lex, _ := vectorLexemes(title, summary, content, tags)
	var b strings.Builder
	for i, w := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteLexeme(&b, w)
		l := lex[w]
		for j, p := range l.positions {
			if j == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
			b.WriteByte(l.weights[j])
		}
	}
	return b.String()
}

// searchQuery returns the tsquery literal in which every word of search
// must match a lexeme or the start of one. ok is false when search can
// match nothing: it holds no word, or a word longer than any lexeme.
func searchQuery(search string) (query string, ok bool) {
	seen := map[string]bool{}
	var b strings.Builder
	for _, w := range searchWords(search) {
		if len(w) > maxLexemeBytes {
			return "", false
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		if b.Len() > 0 {
			b.WriteString(" & ")
		}
		quoteLexeme(&b, w)
		b.WriteString(":*")
	}
	return b.String(), b.Len() > 0
}

// rankWeights weigh a title match (A) ten times a content match (C), and a
// summary (B) or tag (D) match twice, as the SQLite store's bm25 weights
// do. The array is {D, C, B, A}.
const rankWeights = `'{0.2, 0.1, 0.2, 1.0}'::float4[]`

// A search ranks every match it finds, and a search for common words finds
// a large part of all documents: at 1,000,000 documents seconds of a small
// server's CPU each. Run ten of them at once (the pool's size) on a server
// with a core or two and each takes ten times as long. So a node runs at
// most half of its pool's connections (at least one) as searches at once;
// the others wait for a turn, as long as their caller waits. The rest of
// the pool stays free for everything else, and with the search's own
// statement timeout (searchTx) no search is refused for being slow.
func searchSlots(maxConns int32) int { return max(1, int(maxConns)/2) }

// searchTx is the transaction a search runs in: its statements may take up
// to searchTimeout instead of statement_timeout. A search is not stuck when
// it takes long: its work is linear in the matches it ranks and counts,
// which at 1,000,000 documents and a common word are a few hundred
// thousand, seconds of a small server's CPU, more while other searches run
// beside it. Half the HTTP server's write timeout (60 s) still ends one
// that is.
var searchTx = pgx.TxOptions{AccessMode: pgx.ReadOnly,
	BeginQuery: `BEGIN READ ONLY; SET LOCAL statement_timeout = '` + searchTimeout + `'`}

const searchTimeout = "30s"

// searchTurn waits for a turn to search, or for ctx to end; release ends
// the turn.
func (db *DB) searchTurn(ctx context.Context) (release func(), err error) {
	select {
	case db.searches <- struct{}{}:
		return func() { <-db.searches }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
