package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The full-text index (documents_fts) is brought up to date once per
// committed transaction, by one statement just before COMMIT, rather than
// by triggers on every write.
//
// FTS5 flushes the terms it holds in memory into a new segment of the index
// at every statement savepoint, and SQLite opens one for each statement of
// a transaction that may need undoing partway (every document write, with
// its triggers, is one). With triggers, each document written in a batch of
// the group commit (commit.go) became its own one-document segment, which
// FTS5's automerge then merged again: the profile of concurrent creates
// spent 26% of the server's time flushing and 19% merging. Written by one
// statement, a batch's documents make one segment.
//
// The journal keeps, for each row whose text a transaction changed, the
// text the index holds for it (none for a row the transaction created), and
// flush removes that text and indexes the row's text as it is now (nothing
// for a row since deleted), in that order, in the same SQLite transaction as
// the writes. Every write of a document's title, summary, content or tags goes
// through CreateDocument, UpdateDocument or a purge (trash.go), which record
// it (a document moved to the trash keeps its entry: FTS5's external content
// must match every row, and the searches keep to live rows);
// a change made to the documents table by hand leaves the index behind
// until `INSERT INTO documents_fts(documents_fts) VALUES ('rebuild')`.

// ftsText is what the index holds for a document: its title, summary,
// content and tags (ftsTags).
type ftsText struct {
	title, summary, content, tags string
}

// ftsTags is the text the index holds for the tags of the document d: its
// tags in their order, joined by single spaces ("" for none). The view
// documents_fts_source (migration 0022) has the same expression, and
// tagsText the same result in Go. The tags are ordered in a subquery, not
// by group_concat(... ORDER BY ...), which SQLite before 3.44 cannot read.
const ftsTags = `COALESCE((SELECT group_concat(o.tag, ' ') FROM (SELECT t.tag AS tag FROM document_tags t WHERE t.document_id = d.id ORDER BY t.position) o), '')`

// tagsText is ftsTags of a document whose tags are tags.
func tagsText(tags []string) string { return strings.Join(tags, " ") }

// ftsJournal is the rows whose text the running transaction changed. It
// belongs to the committer goroutine, the only one that runs transactions.
type ftsJournal struct {
	order []int64 // the rows, in the order first touched
	old   map[int64]*ftsText
}

// reset forgets everything recorded: the transaction ended.
func (j *ftsJournal) reset() {
	j.order = j.order[:0]
	clear(j.old)
}

// created records a row inserted by the transaction.
func (j *ftsJournal) created(seq int64) { j.touch(seq, nil) }

// changed records a row whose text was old when the transaction first
// touched it (updated or deleted); later changes in the same transaction
// keep the first old text, which is what the index holds.
func (j *ftsJournal) changed(seq int64, old ftsText) { j.touch(seq, &old) }

func (j *ftsJournal) touch(seq int64, old *ftsText) {
	if j.old == nil {
		j.old = map[int64]*ftsText{}
	}
	if _, seen := j.old[seq]; seen {
		return
	}
	j.order = append(j.order, seq)
	j.old[seq] = old
}

// flush brings the index up to date for every recorded row, in one
// statement: for each row in rowid order, its old text removed (FTS5's
// 'delete' command, which needs the text that was indexed), then its
// current text added if it still exists. A row deleted and a new one
// inserted under the same rowid is handled like an update.
//
// The order matters: FTS5 keeps the terms it is given in memory only while
// the rowids come in ascending order (a delete and then an insert of the
// same rowid included), and writes a new segment each time a rowid is
// lower than the one before, which is what the triggers made of every
// document in a batch.
func (j *ftsJournal) flush(ctx context.Context, tx execer) error {
	if len(j.order) == 0 {
		return nil
	}
	var (
		olds []string
		args []any
	)
	for _, seq := range j.order {
		if old := j.old[seq]; old != nil {
			olds = append(olds, `('delete', ?, ?, ?, ?, ?, 0)`)
			args = append(args, seq, old.title, old.summary, old.content, old.tags)
		}
	}
	seqs, err := json.Marshal(j.order)
	if err != nil {
		return fmt.Errorf("full-text index: %w", err)
	}
	args = append(args, string(seqs))
	rows := `SELECT NULL, d.seq, d.title, d.summary, d.content, ` + ftsTags + `, 1 FROM documents d
		WHERE d.seq IN (SELECT value FROM json_each(?))`
	if len(olds) > 0 {
		rows = `VALUES ` + strings.Join(olds, ", ") + ` UNION ALL ` + rows
	}
	_, err = tx.ExecContext(ctx, `WITH r (cmd, seq, title, summary, content, tags, k) AS (`+rows+`)
		INSERT INTO documents_fts (documents_fts, rowid, title, summary, content, tags)
		SELECT cmd, seq, title, summary, content, tags FROM r ORDER BY seq, k`, args...)
	if err != nil {
		return fmt.Errorf("full-text index: %w", err)
	}
	return nil
}
