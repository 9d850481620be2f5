// Package livesql is the store of live changes (quire.LiveStore), written
// once for SQLite and PostgreSQL on a sqlstore.Engine. The live server, which
// holds the rules, is package live.
package livesql

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"quire"
	"quire/live/changeset"
	"quire/sqlstore"
)

// LiveSQL is quire.LiveStore written once for both engines, which embed it.
type LiveSQL struct {
	sqlstore.Base
	// core writes a document's content for SaveLive, as UpdateDocument does.
	core *sqlstore.Store
}

// NewSQL returns the live store on e; core is the shared store on e, whose
// ChangeDocument writes the content of a SaveLive.
func NewSQL(e sqlstore.Engine, core *sqlstore.Store) *LiveSQL {
	return &LiveSQL{Base: sqlstore.NewBase(e), core: core}
}

var _ quire.LiveStore = (*LiveSQL)(nil)

const changeColumns = `seq, change, client_id, user_id, created_at`

func scanChange(scan func(dest ...any) error) (quire.LiveChange, error) {
	var (
		c      quire.LiveChange
		change string
	)
	err := scan(&c.Seq, &change, &c.ClientID, &c.UserID, sqlstore.T(&c.CreatedAt))
	c.Change = json.RawMessage(change)
	return c, err
}

// page is limit within 0..MaxLivePage.
func page(limit int) int { return min(max(limit, 0), quire.MaxLivePage) }

// document reads cols of document id (alias d) as vis sees it, out of the
// trash, in q, with lock appended (a row lock, or ""), into dest;
// ENOTFOUND when vis does not see it.
func (s *LiveSQL) document(ctx context.Context, q sqlstore.Q, vis quire.Visibility, id, cols, lock string, dest ...any) error {
	if sqlstore.HasNUL(id, vis.UserID, vis.DepartmentID) {
		return sqlstore.NotFound("document")
	}
	p := sqlstore.Params{id}
	cond := s.D.None("d.deleted_at") + ` AND ` + s.D.DocsVisible(vis, &p, false)
	err := q.QueryRow(ctx, `SELECT `+cols+` FROM documents d WHERE d.id = ? AND `+cond+lock, p...).Scan(dest...)
	return sqlstore.Found(err, "document")
}

// find is document reading nothing but the id.
func (s *LiveSQL) find(ctx context.Context, q sqlstore.Q, vis quire.Visibility, id, lock string) error {
	var found string
	return s.document(ctx, q, vis, id, `d.id`, lock, &found)
}

// liveCounts are what the stored content of a document includes of its
// live changes (live_documents), and its count.
// live is whether the document was ever opened live (it has a row of
// live_documents, or changes).
type liveCounts struct {
	base, superseded, seq int64
	live                  bool
}

// counts reads, in q, the live counts of document id. The row of
// live_documents is written only under the document's row lock (SaveLive
// and the writes of the content hold it), and the changes only by
// AppendLive, which holds the document as a reader: on PostgreSQL, a
// statement after the lock sees them as they are until the transaction
// ends.
func counts(ctx context.Context, q sqlstore.Q, id string) (c liveCounts, err error) {
	var rows int
	err = q.QueryRow(ctx, `SELECT count(*), COALESCE(max(base), 0), COALESCE(max(superseded), 0),
		COALESCE((SELECT max(seq) FROM live_changes WHERE document_id = ?), 0)
		FROM live_documents WHERE document_id = ?`, id, id).Scan(&rows, &c.base, &c.superseded, &c.seq)
	c.seq = max(c.seq, c.base)
	c.live = rows > 0 || c.seq > 0
	return c, err
}

// checkChanges refuses a batch that AppendLive may not store.
func checkChanges(changes []quire.LiveChange) error {
	bad := map[string]string{}
	switch {
	case len(changes) == 0:
		bad["changes"] = "must hold at least one change"
	case len(changes) > quire.MaxLiveBatch:
		bad["changes"] = "must hold at most 100 changes"
	}
	for _, c := range changes {
		switch {
		case len(c.Change) > quire.MaxLiveChange:
			bad["changes"] = "a change must be at most 65536 bytes"
		// json.Valid refuses U+0000 outside an escape; it takes invalid
		// UTF-8 in a string, which a PostgreSQL text column refuses.
		case !json.Valid(c.Change) || !utf8.Valid(c.Change):
			bad["changes"] = "a change must be JSON in UTF-8"
		}
		switch {
		case len(c.ClientID) > quire.MaxLiveClientID:
			bad["client_id"] = "must be at most 64 bytes"
		case !utf8.ValidString(c.ClientID):
			bad["client_id"] = "must be UTF-8"
		case sqlstore.HasNUL(c.ClientID):
			bad["client_id"] = sqlstore.MsgNUL
		}
		if sqlstore.HasNUL(c.UserID) {
			bad["user_id"] = "is not a user"
		}
	}
	if len(changes) > 0 && (changes[0].ClientSeq != 0 || changes[len(changes)-1].ClientSeq != 0) {
		for i, c := range changes {
			if c.ClientSeq <= 0 || c.ClientID != changes[0].ClientID || (i > 0 && c.ClientSeq <= changes[i-1].ClientSeq) {
				bad["client_seq"] = "must be above 0 and ascending, all of one client"
				break
			}
		}
	}
	if len(bad) > 0 {
		return quire.Invalid(bad)
	}
	return nil
}

// AppendLive holds the document as a reader (FOR SHARE, on PostgreSQL)
// while it checks the count and inserts: a SaveLive, which moves the base
// and lets TrimLive delete the changes up to it, waits for it, and it for
// a SaveLive, so that the count it read holds until it commits. Two
// AppendLive of one document both hold it and may read the same count:
// the primary key refuses the second insert of a number.
func (s *LiveSQL) AppendLive(ctx context.Context, vis quire.Visibility, id string, after int64, changes []quire.LiveChange,
	now time.Time) error {
	if err := checkChanges(changes); err != nil {
		return err
	}
	now = sqlstore.Micro(now)
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if err := s.find(ctx, q, vis, id, s.D.Locked(" FOR SHARE OF d")); err != nil {
			return err
		}
		c, err := counts(ctx, q, id)
		if err != nil {
			return err
		}
		if after != c.seq {
			return quire.ErrLiveBehind
		}
		var (
			p    sqlstore.Params
			rows []string
		)
		for i, c := range changes {
			rows = append(rows, `(`+p.Add(id)+`, `+p.Add(after+1+int64(i))+`, `+p.Add(string(c.Change))+`, `+
				p.Add(c.ClientID)+`, `+p.Add(c.UserID)+`, `+p.Add(s.D.Time(now))+`)`)
		}
		_, err = q.Exec(ctx, `INSERT INTO live_changes (document_id, seq, change, client_id, user_id, created_at) VALUES `+
			strings.Join(rows, ", "), p...)
		switch {
		case err == nil:
		case s.D.IsUnique(err):
			return quire.ErrLiveBehind
		case s.D.IsForeignKey(err): // the document is held: the user
			return quire.Invalid(map[string]string{"user_id": "is not a user"})
		default:
			return err
		}
		first, last := changes[0], changes[len(changes)-1]
		if last.ClientSeq == 0 {
			return nil
		}
		// The client's last number moves only forward: an update that
		// its WHERE refuses changes no row, and the changes were stored
		// already.
		n, err := q.Exec(ctx, `INSERT INTO live_clients (document_id, client_id, seq, at, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (document_id, client_id) DO UPDATE SET seq = excluded.seq, at = excluded.at, updated_at = excluded.updated_at
			WHERE live_clients.seq < ?`, id, quire.LiveClientKey(last.UserID, last.ClientID), last.ClientSeq, after+int64(len(changes)), s.D.Time(now), first.ClientSeq)
		if err == nil && n == 0 {
			return quire.ErrLiveRepeated
		}
		return err
	})
	if err != nil {
		return s.E.Fail(ctx, "append live changes", err)
	}
	for i := range changes {
		changes[i].Seq, changes[i].CreatedAt = after+1+int64(i), now
	}
	return nil
}

// errPageFull ends the reading of a page at MaxLivePageBytes.
var errPageFull = errors.New("page full")

// since reads, in q, up to limit changes after after, of a document of
// counts c, and at most MaxLivePageBytes of them (one at least): the rows
// are read one at a time and the page stops before the one that would
// overflow it. ErrLiveTrimmed when the change after+1 should be there
// (after is below the count) and is not, or was superseded.
func since(ctx context.Context, q sqlstore.Q, id string, after int64, c liveCounts, limit int) ([]quire.LiveChange, error) {
	out := []quire.LiveChange{}
	if after >= c.seq || limit == 0 {
		return out, nil
	}
	if after < c.superseded {
		return nil, quire.ErrLiveTrimmed
	}
	size := 0
	err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
		c, err := scanChange(scan)
		if err != nil {
			return err
		}
		if size += len(c.Change); size > quire.MaxLivePageBytes && len(out) > 0 {
			return errPageFull
		}
		out = append(out, c)
		return nil
	}, `SELECT `+changeColumns+` FROM live_changes WHERE document_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, err
	}
	if len(out) == 0 || out[0].Seq != after+1 {
		return nil, quire.ErrLiveTrimmed
	}
	return out, nil
}

func (s *LiveSQL) LiveChangesSince(ctx context.Context, vis quire.Visibility, id string, after int64, limit int) ([]quire.LiveChange, error) {
	var out []quire.LiveChange
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		if err := s.find(ctx, q, vis, id, ""); err != nil {
			return err
		}
		c, err := counts(ctx, q, id)
		if err != nil {
			return err
		}
		out, err = since(ctx, q, id, max(after, 0), c, page(limit))
		return err
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "read live changes", err)
	}
	return out, nil
}

func (s *LiveSQL) LiveState(ctx context.Context, vis quire.Visibility, id string, limit int) (*quire.LiveState, error) {
	var st quire.LiveState
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		err := s.document(ctx, q, vis, id, `d.id, d.content_type, d.content, d.version, d.updated_at`, "",
			&st.DocumentID, &st.ContentType, &st.Content, &st.Version, sqlstore.T(&st.UpdatedAt))
		if err != nil {
			return err
		}
		c, err := counts(ctx, q, id)
		if err != nil {
			return err
		}
		st.Base, st.Seq = c.base, c.seq
		st.Changes, err = since(ctx, q, id, c.base, c, page(limit))
		return err
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "read live state", err)
	}
	return &st, nil
}

// SaveLive runs ChangeDocument, which takes the document's row lock
// (FOR NO KEY UPDATE, on PostgreSQL) before anything: AppendLive's
// readers' lock waits for it, so no change is stored while the base moves.
// The counts are read and checked inside apply, after the lock, and written
// after ChangeDocument, whose write of the content (when the content
// changed) has marked every change superseded (ContentWritten): upto, the
// count the caller's text holds, and the superseded count as it was,
// replace that.
func (s *LiveSQL) SaveLive(ctx context.Context, vis quire.Visibility, id string, guard time.Time, byUserID string, upto int64,
	content string, now time.Time) (*quire.Document, error) {
	var (
		out      *quire.Document
		applyErr error
	)
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		applyErr = nil
		var (
			c      liveCounts
			err    error
			before int
		)
		out, err = s.core.ChangeDocument(context.WithValue(ctx, savingLive{}, true), q, vis, id, guard, byUserID, now, func(d *quire.Document) (bool, error) {
			before = d.Version
			c, err = counts(ctx, q, id)
			switch {
			case err != nil:
				return false, err
			case upto < c.base:
				applyErr = quire.ErrLiveBehind
			case upto > c.seq:
				applyErr = quire.Invalid(map[string]string{"upto": "is beyond the stored live changes"})
			}
			if applyErr != nil {
				return false, applyErr
			}
			changed := d.Content != content
			d.Content = content
			return changed, nil
		})
		if err != nil {
			return err
		}
		if out.Version != before {
			// A new version: its authors, the people whose changes it
			// holds, in the order of their first change.
			if _, err := q.Exec(ctx, `INSERT INTO version_authors (document_id, number, position, user_id)
				SELECT ?, CAST(? AS INTEGER), row_number() OVER (ORDER BY min(seq)), user_id FROM live_changes
				WHERE document_id = ? AND seq > ? AND seq <= ? GROUP BY user_id`,
				id, out.Version, id, c.base, upto); err != nil {
				return err
			}
		}
		_, err = q.Exec(ctx, `INSERT INTO live_documents (document_id, base, superseded) VALUES (?, ?, ?)
			ON CONFLICT (document_id) DO UPDATE SET base = excluded.base, superseded = excluded.superseded`,
			id, upto, c.superseded)
		if err != nil {
			return err
		}
		_, err = q.Exec(ctx, `DELETE FROM live_clients WHERE document_id = ? AND updated_at < ?`,
			id, s.D.Time(sqlstore.Micro(now.Add(-quire.LiveClientTTL))))
		return err
	})
	if applyErr != nil {
		return nil, applyErr
	}
	if err != nil {
		if de, ok := s.E.(sqlstore.DocumentEngine); ok {
			err = de.DocumentWriteError(err)
		}
		return nil, s.E.Fail(ctx, "save live text of document "+id, err)
	}
	return out, nil
}

// ContentWritten is told, in the transaction of every write of document
// id's content that is not a SaveLive (sqlstore.Store.ContentChanged, set
// by package stores: a save through the API or the form, a version
// restore, an import), that content replaced was. A document never edited
// live costs one indexed lookup and writes nothing. For one edited live,
// the write is applied to the live text as one change, so that no change
// of its editors is lost and their sessions take it as an update: the live
// text (was, followed by the changes after the base) is rebuilt here,
// under the document's row lock (AppendLive waits for it), the change from
// it to content (changeset.Diff) is stored as the next change, by
// byUserID from client APIClient, at at (the write's updated_at: the clock
// of the service that wrote, as every other row of the write), and the
// base becomes its number. The
// changes up to the base as it was (in a version already) are deleted: the
// table keeps no history of writes of documents nobody edits. When the
// live text cannot be rebuilt (a stored change does not apply) the write
// supersedes the changes stored until then instead: the base becomes the
// count, and sessions start again from the content.
func (s *LiveSQL) ContentWritten(ctx context.Context, q sqlstore.Q, id, was, content, byUserID string, at time.Time) error {
	if ctx.Value(savingLive{}) != nil {
		return nil // SaveLive writes the counts itself
	}
	c, err := counts(ctx, q, id)
	if err != nil || !c.live {
		return err
	}
	raw, err := s.asChange(ctx, q, id, was, content, byUserID, c)
	if err != nil {
		return err
	}
	if raw == nil {
		if c.seq == c.superseded {
			return nil
		}
		_, err = q.Exec(ctx, `INSERT INTO live_documents (document_id, base, superseded) VALUES (?, ?, ?)
			ON CONFLICT (document_id) DO UPDATE SET base = excluded.base, superseded = excluded.superseded`, id, c.seq, c.seq)
		return err
	}
	seq := c.seq + 1
	if _, err := q.Exec(ctx, `INSERT INTO live_changes (document_id, seq, change, client_id, user_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, id, seq, string(raw), APIClient, byUserID, s.D.Time(sqlstore.Micro(at))); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `INSERT INTO live_documents (document_id, base, superseded) VALUES (?, ?, ?)
		ON CONFLICT (document_id) DO UPDATE SET base = excluded.base`, id, seq, c.superseded); err != nil {
		return err
	}
	_, err = q.Exec(ctx, `DELETE FROM live_changes WHERE document_id = ? AND seq <= ?`, id, c.base)
	return err
}

// APIClient is the client id of the changes that writes of the content
// outside the live editor (ContentWritten) store.
const APIClient = "quire"

// savingLive marks the context of SaveLive's write of the content: the
// live text itself, not a write to apply to it.
type savingLive struct{}

// asChange returns the change from the live text of document id (of
// counts c, whose content was) to content, as JSON, or nil when the live
// text cannot be rebuilt, the change does not read back as itself, or
// byUserID is not a user (the write then supersedes the live changes).
// Its work is linear in the content and the stored changes after the base.
func (s *LiveSQL) asChange(ctx context.Context, q sqlstore.Q, id, was, content, byUserID string, c liveCounts) (json.RawMessage, error) {
	if byUserID == "" || sqlstore.HasNUL(byUserID) {
		return nil, nil
	}
	var n int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM users WHERE id = ?`, byUserID).Scan(&n); err != nil || n == 0 {
		return nil, err
	}
	text, ok := was, c.base >= c.superseded
	if ok && c.seq > c.base {
		next := c.base + 1
		err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
			var (
				seq    int64
				change string
			)
			if err := scan(&seq, &change); err != nil || !ok {
				return err
			}
			cs, err := changeset.Parse([]byte(change))
			if err == nil && seq == next {
				text, err = cs.Apply(text)
			}
			ok, next = err == nil && seq == next, next+1
			return nil
		}, `SELECT seq, change FROM live_changes WHERE document_id = ? AND seq > ? ORDER BY seq`, id, c.base)
		if err != nil {
			return nil, err
		}
		ok = ok && next == c.seq+1
	}
	if !ok {
		return nil, nil
	}
	cs := changeset.Diff(text, content)
	raw, err := cs.MarshalJSON()
	if err != nil {
		return nil, nil
	}
	back, err := changeset.Parse(raw)
	if err != nil {
		return nil, nil
	}
	if got, err := back.Apply(text); err != nil || got != content {
		return nil, nil
	}
	return raw, nil
}

// LiveClient reads one row of live_clients by its primary key.
func (s *LiveSQL) LiveClient(ctx context.Context, id, userID, clientID string) (quire.LiveClient, error) {
	var c quire.LiveClient
	if sqlstore.HasNUL(id, userID, clientID) {
		return c, nil
	}
	err := s.E.Read().QueryRow(ctx, `SELECT seq, at FROM live_clients WHERE document_id = ? AND client_id = ?`,
		id, quire.LiveClientKey(userID, clientID)).Scan(&c.Seq, &c.At)
	if errors.Is(err, sqlstore.ErrNoRows) {
		return quire.LiveClient{}, nil
	}
	if err != nil {
		return c, s.E.Fail(ctx, "read live client", err)
	}
	return c, nil
}

// LiveAuthors reads the range of the primary key: the changes not yet in
// a version, as a rule.
func (s *LiveSQL) LiveAuthors(ctx context.Context, id string, after, upto int64) ([]string, error) {
	if sqlstore.HasNUL(id) {
		return []string{}, nil
	}
	return sqlstore.List(ctx, s.E, "read live authors", func(scan func(dest ...any) error) (string, error) {
		var (
			user  string
			first int64
		)
		err := scan(&user, &first)
		return user, err
	}, `SELECT user_id, min(seq) FROM live_changes WHERE document_id = ? AND seq > ? AND seq <= ?
		GROUP BY user_id ORDER BY min(seq) LIMIT ?`, id, after, upto, quire.MaxLivePage)
}

// VersionAuthors reads the range of version_authors' primary key, with
// the visibility of the document in the same snapshot.
func (s *LiveSQL) VersionAuthors(ctx context.Context, vis quire.Visibility, id string, from, to int) (map[int][]quire.Named, error) {
	out := map[int][]quire.Named{}
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		if err := s.find(ctx, q, vis, id, ""); err != nil {
			return err
		}
		return sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
			var (
				n int
				p quire.Named
			)
			if err := scan(&n, &p.ID, &p.Name); err != nil {
				return err
			}
			out[n] = append(out[n], p)
			return nil
		}, `SELECT a.number, u.id, u.name FROM version_authors a JOIN users u ON u.id = a.user_id
			WHERE a.document_id = ? AND a.number >= ? AND a.number <= ? ORDER BY a.number, a.position`, id, from, to)
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "read version authors", err)
	}
	return out, nil
}

// SetLivePresence deletes and writes the node's rows of the document in
// one transaction; a document (or person) that is gone writes none.
func (s *LiveSQL) SetLivePresence(ctx context.Context, id, node string, people []quire.LivePresent, now time.Time) error {
	if sqlstore.HasNUL(id, node) {
		return nil
	}
	people = people[:min(len(people), quire.MaxLivePresence)]
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if _, err := q.Exec(ctx, `DELETE FROM live_presence WHERE document_id = ? AND node = ?`, id, node); err != nil {
			return err
		}
		if len(people) == 0 {
			return nil
		}
		var (
			p    sqlstore.Params
			rows []string
		)
		at := s.D.Time(sqlstore.Micro(now))
		for i, u := range people {
			if sqlstore.HasNUL(u.UserID) {
				continue
			}
			rows = append(rows, `(`+p.Add(id)+`, `+p.Add(node)+`, `+p.Add(i)+`, `+p.Add(u.UserID)+`, `+p.Add(u.Editing)+`, `+p.Add(at)+`)`)
		}
		if len(rows) == 0 {
			return nil
		}
		_, err := q.Exec(ctx, `INSERT INTO live_presence (document_id, node, position, user_id, editing, seen_at) VALUES `+
			strings.Join(rows, ", "), p...)
		return err
	})
	if s.D.IsForeignKey(err) {
		return nil // the document (or a person) is gone: nobody to list
	}
	if err != nil {
		return s.E.Fail(ctx, "write live presence", err)
	}
	return nil
}

func (s *LiveSQL) LivePresence(ctx context.Context, id, node string, since time.Time) ([]quire.LivePresent, error) {
	if sqlstore.HasNUL(id, node) {
		return []quire.LivePresent{}, nil
	}
	return sqlstore.List(ctx, s.E, "read live presence", func(scan func(dest ...any) error) (quire.LivePresent, error) {
		var p quire.LivePresent
		err := scan(&p.UserID, &p.Name, &p.Editing)
		return p, err
	}, `SELECT u.id, u.name, p.editing FROM live_presence p JOIN users u ON u.id = p.user_id
		WHERE p.document_id = ? AND p.node <> ? AND p.seen_at >= ? ORDER BY p.node, p.position LIMIT ?`,
		id, node, s.D.Time(sqlstore.Micro(since)), 4*quire.MaxLivePresence)
}

// TrimLive deletes by the primary key's range: the oldest stored change
// and the limit-1 after it, up to upto and the base.
func (s *LiveSQL) TrimLive(ctx context.Context, id string, upto int64, limit int) (int, error) {
	if limit <= 0 || sqlstore.HasNUL(id) {
		return 0, nil
	}
	n, err := s.E.ExecOne(ctx, "", `DELETE FROM live_changes WHERE document_id = ? AND seq <= ?
		AND seq <= (SELECT base FROM live_documents WHERE document_id = ?)
		AND seq < (SELECT min(seq) FROM live_changes WHERE document_id = ?) + ?`, id, upto, id, id, limit)
	if err != nil {
		return 0, s.E.Fail(ctx, "trim live changes", err)
	}
	return int(n), nil
}
