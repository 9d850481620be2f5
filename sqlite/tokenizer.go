package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"quire/docindex"
)

// ftsTokenizer asks SQLite's own unicode61 tokenizer for the words of the
// texts the index of documents cannot tokenize itself (docindex.Foreign:
// letters outside ASCII, folded by unicode61's own tables): it writes the
// text into an FTS5 table declared like documents_fts, in a private
// in-memory database of one connection, and reads the words back from its
// fts5vocab table of instances. The words are then exactly those
// documents_fts holds for the same text.
type ftsTokenizer struct {
	once sync.Once
	err  error
	mu   sync.Mutex // one text at a time
	db   *sql.DB
}

func (t *ftsTokenizer) open(ctx context.Context) error {
	t.once.Do(func() {
		db, err := sql.Open("sqlite", "file::memory:")
		if err != nil {
			t.err = err
			return
		}
		// One connection, never closed: the tables live in it.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxIdleTime(0)
		db.SetConnMaxLifetime(0)
		_, err = db.ExecContext(ctx, `CREATE VIRTUAL TABLE tok USING fts5(title, summary, content, tags,
			tokenize = 'unicode61 remove_diacritics 2');
			CREATE VIRTUAL TABLE tokv USING fts5vocab(tok, instance)`)
		if err != nil {
			db.Close()
			t.err = err
			return
		}
		t.db = db
	})
	return t.err
}

// columns of tok, in the order of docindex.Weight.
var tokColumns = map[string]int{"title": 0, "summary": 1, "content": 2, "tags": 3}

// words returns the weighted count of every term of the four texts (title,
// summary, content, tags) and the number of their tokens, as FTS5 counts
// them. order, when not nil, receives the terms in the order of the text.
func (t *ftsTokenizer) words(ctx context.Context, texts [4]string) (map[string]uint32, uint32, []string, error) {
	if err := t.open(ctx); err != nil {
		return nil, 0, nil, fmt.Errorf("tokenizer: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.db.ExecContext(ctx, `INSERT INTO tok (rowid, title, summary, content, tags) VALUES (1, ?, ?, ?, ?)`,
		texts[0], texts[1], texts[2], texts[3]); err != nil {
		return nil, 0, nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer t.db.ExecContext(context.WithoutCancel(ctx), `DELETE FROM tok`)
	rows, err := t.db.QueryContext(ctx, `SELECT term, col FROM tokv ORDER BY col, offset`)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer rows.Close()
	counts := map[string]uint32{}
	var n uint32
	var order []string
	for rows.Next() {
		var term, col string
		if err := rows.Scan(&term, &col); err != nil {
			return nil, 0, nil, fmt.Errorf("tokenizer: %w", err)
		}
		c, ok := tokColumns[col]
		if !ok {
			return nil, 0, nil, fmt.Errorf("tokenizer: column %q", col)
		}
		counts[term] += docindex.Weight(c)
		order = append(order, term)
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, 0, nil, fmt.Errorf("tokenizer: %w", err)
	}
	return counts, n, order, nil
}

// queryTerm returns the one term FTS5 makes of the search word w, and
// false when it makes none or several (a phrase, which the index does
// not answer).
func (t *ftsTokenizer) queryTerm(ctx context.Context, w string) (string, bool, error) {
	_, _, order, err := t.words(ctx, [4]string{w, "", "", ""})
	if err != nil || len(order) != 1 {
		return "", false, err
	}
	return order[0], true, nil
}

func (t *ftsTokenizer) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.db != nil {
		t.db.Close()
	}
}
