// Package commentssql is the store of comments and their reactions,
// written once for SQLite and PostgreSQL on a sqlstore.Engine. Package
// comments holds the rules. A comment is seen only through its document:
// every query joins documents with the visibility of the caller and leaves
// the trash out, so an invisible or trashed document's comment is
// NOT_FOUND exactly like an unknown id.
package commentssql

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"quire"
	"quire/anchor"
	"quire/sqlstore"
)

// CommentSQL is quire.CommentStore written once for both engines, which
// embed it. Reanchor is the hook every write of a document's content calls
// in its transaction (sqlstore.Store.ContentChanged).
type CommentSQL struct{ sqlstore.Base }

// NewSQL returns the comment store on e.
func NewSQL(e sqlstore.Engine) *CommentSQL { return &CommentSQL{sqlstore.NewBase(e)} }

var _ quire.CommentStore = (*CommentSQL)(nil)

// commentColumns read a comment (alias c) with the names of its author and
// of who resolved it; scanComment reads them.
const commentColumns = `c.id, c.document_id, COALESCE(c.parent_id, ''), c.author_id,
	COALESCE((SELECT u.name FROM users u WHERE u.id = c.author_id), ''), c.body, c.quote, c.prefix, c.suffix,
	c.anchor_state, c.position, c.created_at, c.updated_at, c.edited, c.deleted, c.resolved_at,
	COALESCE(c.resolved_by, ''), COALESCE((SELECT u.name FROM users u WHERE u.id = c.resolved_by), '')`

func scanComment(scan func(dest ...any) error) (quire.Comment, error) {
	var (
		c                            quire.Comment
		quote, prefix, suffix, state string
		position                     int
	)
	err := scan(&c.ID, &c.DocumentID, &c.ParentID, &c.AuthorID, &c.AuthorName, &c.Body, &quote, &prefix, &suffix,
		&state, &position, sqlstore.T(&c.CreatedAt), sqlstore.T(&c.UpdatedAt), &c.Edited, &c.Deleted,
		sqlstore.T(&c.ResolvedAt), &c.ResolvedByID, &c.ResolvedByName)
	if state != "" {
		c.Anchor = &quire.Anchor{Quote: quote, Prefix: prefix, Suffix: suffix, State: state, Position: position}
	}
	c.Reactions = []quire.Reaction{}
	return c, err
}

// live is the condition that vis sees the document (alias d) and that it
// is out of the trash, binding its values in p.
func (s *CommentSQL) live(vis quire.Visibility, p *sqlstore.Params) string {
	return s.D.None("d.deleted_at") + ` AND ` + s.D.DocsVisible(vis, p, false)
}

// lockDocument is the row lock a comment write takes on its document (on
// PostgreSQL; SQLite's writer is alone): the writes of one document's
// comments, and its saves, which re-anchor them, run one at a time, so a
// count of threads or replies holds until the insert and an anchor is
// found in the text the document keeps.
func (s *CommentSQL) lockDocument() string { return s.D.Locked(" FOR NO KEY UPDATE OF d") }

// get reads comment id as vis sees it in q; in a write (lock) it holds its
// document. ENOTFOUND when vis does not see it.
func (s *CommentSQL) get(ctx context.Context, q sqlstore.Q, vis quire.Visibility, id string, lock bool) (*quire.Comment, error) {
	if sqlstore.HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, sqlstore.NotFound("comment")
	}
	p := sqlstore.Params{id}
	query := `SELECT ` + commentColumns + ` FROM comments c JOIN documents d ON d.id = c.document_id
		WHERE c.id = ? AND ` + s.live(vis, &p)
	if lock {
		query += s.lockDocument()
	}
	c, err := scanComment(q.QueryRow(ctx, query, p...).Scan)
	if err != nil {
		return nil, sqlstore.Found(err, "comment")
	}
	return &c, nil
}

// withReactions reads comment id (which vis sees) with its reactions, Mine
// for viewerID.
func (s *CommentSQL) withReactions(ctx context.Context, q sqlstore.Q, vis quire.Visibility, viewerID, id string) (*quire.Comment, error) {
	c, err := s.get(ctx, q, vis, id, false)
	if err != nil {
		return nil, err
	}
	rs, err := s.reactions(ctx, q, viewerID, `r.comment_id = ?`, id)
	if err != nil {
		return nil, err
	}
	if r, ok := rs[id]; ok {
		c.Reactions = r
	}
	return c, nil
}

// reactions reads the reactions of the comments that where (a condition
// on r.comment_id, binding args) selects, by comment, in the order of
// quire.Reactions.
func (s *CommentSQL) reactions(ctx context.Context, q sqlstore.Q, viewerID, where string, args ...any) (map[string][]quire.Reaction, error) {
	if sqlstore.HasNUL(viewerID) {
		viewerID = ""
	}
	out := map[string][]quire.Reaction{}
	err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
		var (
			id   string
			r    quire.Reaction
			mine int
		)
		if err := scan(&id, &r.Emoji, &r.Count, &mine); err != nil {
			return err
		}
		r.Mine = mine > 0
		out[id] = append(out[id], r)
		return nil
	}, `SELECT r.comment_id, r.emoji, count(*), max(CASE WHEN r.user_id = ? THEN 1 ELSE 0 END)
		FROM comment_reactions r WHERE `+where+` GROUP BY r.comment_id, r.emoji`,
		append([]any{viewerID}, args...)...)
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b quire.Reaction) int {
			return slices.Index(quire.Reactions, a.Emoji) - slices.Index(quire.Reactions, b.Emoji)
		})
	}
	return out, err
}

func (s *CommentSQL) Comment(ctx context.Context, vis quire.Visibility, viewerID, id string) (*quire.Comment, error) {
	var c *quire.Comment
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) (err error) {
		c, err = s.withReactions(ctx, q, vis, viewerID, id)
		return err
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "read comment", err)
	}
	return c, nil
}

// CreateComment normalises the anchor's quote, prefix and suffix (runs of
// white space collapsed as in the reading text, anchor.Normalize, which
// keeps a space at either end) and stores them so.
func (s *CommentSQL) CreateComment(ctx context.Context, vis quire.Visibility, c *quire.Comment, now time.Time) error {
	if sqlstore.HasNUL(c.DocumentID, vis.UserID, vis.DepartmentID) {
		return sqlstore.NotFound("document")
	}
	out := *c
	out.CreatedAt, out.UpdatedAt = sqlstore.Micro(now), sqlstore.Micro(now)
	if out.ID == "" {
		out.ID = sqlstore.NewID()
	}
	out.Edited, out.Deleted, out.ResolvedAt, out.ResolvedByID, out.ResolvedByName = false, false, time.Time{}, "", ""
	out.Reactions, out.Replies = []quire.Reaction{}, nil
	if c.Anchor != nil {
		out.Anchor = &quire.Anchor{Quote: anchor.Normalize(c.Anchor.Quote), Prefix: anchor.Normalize(c.Anchor.Prefix),
			Suffix: anchor.Normalize(c.Anchor.Suffix)}
		if c.ParentID != "" {
			return quire.Invalid(map[string]string{"anchor": "a reply has no anchor: only a thread's first comment has one"})
		}
		if strings.TrimSpace(out.Anchor.Quote) == "" {
			return quire.Invalid(map[string]string{"anchor": "the quote must not be empty"})
		}
	}
	fields := map[string]string{"body": out.Body}
	if out.Anchor != nil {
		fields["anchor"] = out.Anchor.Quote + out.Anchor.Prefix + out.Anchor.Suffix
	}
	if err := sqlstore.NoNUL(fields); err != nil {
		return err
	}
	quire.NameCreated(s.E.Events(), out.ID)
	// The anchor's place is found before the transaction, in the version
	// the document has then: rendering a large document's reading text
	// takes long, and the transaction holds the document (a save and the
	// other comment writes of the document wait for it). The transaction
	// takes the place only if the document is still at that version, and
	// finds it again in the text it locked otherwise.
	var found *place
	if out.Anchor != nil {
		p := sqlstore.Params{out.DocumentID}
		var contentType, text string
		var version int
		err := s.E.Read().QueryRow(ctx, `SELECT d.content_type, d.content, d.version FROM documents d WHERE d.id = ? AND `+
			s.live(vis, &p), p...).Scan(&contentType, &text, &version)
		if err != nil {
			return s.E.Fail(ctx, "create comment", sqlstore.Found(err, "document"))
		}
		found = &place{version, anchor.NewIndex(anchor.Text(contentType, text)).Find(out.Anchor.Quote, out.Anchor.Prefix, out.Anchor.Suffix)}
	}
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		return s.insert(ctx, q, vis, &out, found)
	})
	if err != nil {
		return s.E.Fail(ctx, "create comment", err)
	}
	*c = out
	return nil
}

// place is where an anchor's quote is (Position, -1 for nowhere) in the
// reading text of a document at version.
type place struct{ version, position int }

// insert is CreateComment's transaction: c is filled but for its root,
// author's name and anchor's place; found is the anchor's place found
// before it, nil for none.
func (s *CommentSQL) insert(ctx context.Context, q sqlstore.Q, vis quire.Visibility, c *quire.Comment, found *place) error {
	p := sqlstore.Params{c.DocumentID}
	var contentType string
	var version int
	err := q.QueryRow(ctx, `SELECT d.content_type, d.version FROM documents d WHERE d.id = ? AND `+s.live(vis, &p)+
		s.lockDocument(), p...).Scan(&contentType, &version)
	if err != nil {
		return sqlstore.Found(err, "document")
	}
	if c.ParentID != "" {
		// A reply to a reply joins its root's thread.
		var root string
		if !sqlstore.HasNUL(c.ParentID) {
			err = q.QueryRow(ctx, `SELECT COALESCE(parent_id, id) FROM comments WHERE id = ? AND document_id = ?`,
				c.ParentID, c.DocumentID).Scan(&root)
		}
		if root == "" {
			if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
				return err
			}
			return quire.Invalid(map[string]string{"parent_id": "is not a comment of this document"})
		}
		c.ParentID = root
	}
	// The document's roots are counted in comment_versions (threads), kept
	// by every create and delete of one: counting them made each create
	// cost as much as the threads before it.
	count, key, limit := `SELECT COALESCE((SELECT threads FROM comment_versions WHERE document_id = ?), 0)`, c.DocumentID, quire.MaxThreads
	full := quire.Errorf(quire.ELIMITREACHED, "A document has at most %d threads", limit)
	if c.ParentID != "" {
		count, key, limit = `SELECT count(*) FROM comments WHERE parent_id = ?`, c.ParentID, quire.MaxReplies
		full = quire.Errorf(quire.ELIMITREACHED, "A thread has at most %d replies", limit)
	}
	n := 0
	if err := q.QueryRow(ctx, count, key).Scan(&n); err != nil {
		return err
	}
	if n >= limit {
		return full
	}
	state, position := "", -1
	if a := c.Anchor; a != nil {
		if found == nil || found.version != version {
			// A save came in between: the text it left, read under the lock.
			var text string
			if err := q.QueryRow(ctx, `SELECT content FROM documents WHERE id = ?`, c.DocumentID).Scan(&text); err != nil {
				return err
			}
			found = &place{version, anchor.NewIndex(anchor.Text(contentType, text)).Find(a.Quote, a.Prefix, a.Suffix)}
		}
		a.State, a.Position = quire.AnchorAttached, found.position
		if a.Position < 0 {
			return quire.Invalid(map[string]string{"anchor": "the quote is not in the document's text"})
		}
		state, position = a.State, a.Position
	}
	noAuthor := quire.Invalid(map[string]string{"author_id": "does not exist"})
	if sqlstore.HasNUL(c.AuthorID) {
		return noAuthor
	}
	err = q.QueryRow(ctx, `SELECT name FROM users WHERE id = ?`, c.AuthorID).Scan(&c.AuthorName)
	if errors.Is(err, sqlstore.ErrNoRows) {
		return noAuthor
	}
	if err != nil {
		return err
	}
	quote, prefix, suffix := "", "", ""
	if c.Anchor != nil {
		quote, prefix, suffix = c.Anchor.Quote, c.Anchor.Prefix, c.Anchor.Suffix
	}
	_, err = q.Exec(ctx, `INSERT INTO comments (id, document_id, parent_id, author_id, body, quote, prefix, suffix,
		anchor_state, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.DocumentID, sqlstore.NullString(c.ParentID), c.AuthorID, c.Body, quote, prefix, suffix, state, position,
		s.D.Time(c.CreatedAt), s.D.Time(c.UpdatedAt))
	if err != nil {
		return err
	}
	threads := int64(0)
	if c.ParentID == "" {
		threads = 1
	}
	return bumpThreads(ctx, q, c.DocumentID, threads)
}

// bump adds one to the comments version of document id (CommentsSeq), in
// q, the transaction that changes its comments: to both its numbers, but
// to All alone for a reaction.
func bump(ctx context.Context, q sqlstore.Q, id string) error { return bumpThreads(ctx, q, id, 0) }

// bumpThreads is bump for a write that adds threads to the document's
// count of them (its roots, which a create checks quire.MaxThreads
// against), or takes them away when negative.
func bumpThreads(ctx context.Context, q sqlstore.Q, id string, threads int64) error {
	_, err := q.Exec(ctx, `INSERT INTO comment_versions (document_id, seq, threads_seq, threads) VALUES (?, 1, 1, ?)
		ON CONFLICT (document_id) DO UPDATE SET seq = comment_versions.seq + 1, threads_seq = comment_versions.seq + 1,
		threads = comment_versions.threads + ?, reacted_id = NULL`, id, threads, threads)
	return err
}

// bumpReaction is bump for a reaction to comment commentID.
func bumpReaction(commentID string) func(ctx context.Context, q sqlstore.Q, id string) error {
	return func(ctx context.Context, q sqlstore.Q, id string) error {
		_, err := q.Exec(ctx, `INSERT INTO comment_versions (document_id, seq, threads_seq, reacted_id) VALUES (?, 1, 0, ?)
			ON CONFLICT (document_id) DO UPDATE SET seq = comment_versions.seq + 1, reacted_id = ?`, id, commentID, commentID)
		return err
	}
}

// CommentsSeq returns the version of the comments of document id, which
// every write of them and every save that moves their anchors changes, in
// its transaction: a reader holding what it read at one version knows it
// is still what the database has. ENOTFOUND when vis does not see the
// document or it is in the trash.
func (s *CommentSQL) CommentsSeq(ctx context.Context, vis quire.Visibility, id string) (quire.CommentsVersion, error) {
	seq, err := s.version(ctx, s.E.Read(), vis, id)
	if err != nil {
		return seq, s.E.Fail(ctx, "read comments version", err)
	}
	return seq, nil
}

// version reads the comments version of document id in q: ENOTFOUND as
// CommentsSeq.
func (s *CommentSQL) version(ctx context.Context, q sqlstore.Q, vis quire.Visibility, id string) (quire.CommentsVersion, error) {
	var seq quire.CommentsVersion
	if sqlstore.HasNUL(id, vis.UserID, vis.DepartmentID) {
		return seq, sqlstore.NotFound("document")
	}
	p := sqlstore.Params{id}
	err := q.QueryRow(ctx, `SELECT COALESCE(v.seq, 0), COALESCE(v.threads_seq, 0), COALESCE(v.reacted_id, '')
		FROM documents d LEFT JOIN comment_versions v ON v.document_id = d.id WHERE d.id = ? AND `+s.live(vis, &p),
		p...).Scan(&seq.All, &seq.Threads, &seq.Reacted)
	return seq, sqlstore.Found(err, "document")
}

// threadOrder is the order of product.md section 18: anchored threads by
// their quote's place in the current text, then outdated ones, then page
// comments, each group oldest first. threadCompare is the same order in Go.
const threadOrder = `CASE c.anchor_state WHEN 'attached' THEN 0 WHEN 'outdated' THEN 1 ELSE 2 END,
	c.position, c.created_at, c.id`

// threadCompare orders roots as threadOrder does (ids are UUIDs of one
// length and shape, which every collation orders as their bytes); outdated
// threads and page comments have no position.
func threadCompare(a, b quire.Comment) int {
	group := func(c *quire.Comment) (int, int) {
		switch {
		case c.Anchor == nil:
			return 2, -1
		case c.Anchor.State == quire.AnchorAttached:
			return 0, c.Anchor.Position
		}
		return 1, -1
	}
	ga, pa := group(&a)
	gb, pb := group(&b)
	return cmp.Or(cmp.Compare(ga, gb), cmp.Compare(pa, pb), a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// threadColumns read a comment of a page of threads (alias c) as
// commentColumns without the names, which Threads reads once for all.
//
// Its last column is the comment's reactions, one word each, the emoji, a
// slash and the id of who reacted: reactions reads them in the same
// statement, at the cost of one lookup per comment (string_agg: SQLite
// 3.44 and PostgreSQL alike), the same for every reader.
const threadColumns = `c.id, COALESCE(c.parent_id, ''), c.author_id, c.body, c.quote, c.prefix, c.suffix,
	c.anchor_state, c.position, c.created_at, c.updated_at, c.edited, c.deleted, c.resolved_at, COALESCE(c.resolved_by, ''),
	COALESCE((SELECT string_agg(r.emoji || '/' || r.user_id, ' ')
		FROM comment_reactions r WHERE r.comment_id = c.id), '')`

// scanThreadComment reads a row of threadColumns, Mine for viewer, and
// adds who made each reaction to reactors when it is not nil.
func scanThreadComment(documentID, viewer string, reactors map[string]map[string][]string) func(scan func(dest ...any) error) (quire.Comment, error) {
	return func(scan func(dest ...any) error) (quire.Comment, error) {
		var (
			c                            = quire.Comment{DocumentID: documentID}
			quote, prefix, suffix, state string
			position                     int
		)
		var reactions string
		err := scan(&c.ID, &c.ParentID, &c.AuthorID, &c.Body, &quote, &prefix, &suffix, &state, &position,
			sqlstore.T(&c.CreatedAt), sqlstore.T(&c.UpdatedAt), &c.Edited, &c.Deleted, sqlstore.T(&c.ResolvedAt), &c.ResolvedByID,
			&reactions)
		if state != "" {
			c.Anchor = &quire.Anchor{Quote: quote, Prefix: prefix, Suffix: suffix, State: state, Position: position}
		}
		c.Reactions = reactionsOf(reactions, viewer, c.ID, reactors)
		return c, err
	}
}

// listBatch is how many ids one statement of Threads asks names for: a shorter batch repeats its last id, so that the statement's
// text is always the same.
const listBatch = 100

// batches calls fn with ids cut in batches of listBatch, the last padded.
func batches(ids []string, fn func(batch []string) error) error {
	for len(ids) > 0 {
		batch := ids[:min(listBatch, len(ids))]
		ids = ids[len(batch):]
		if err := fn(append(slices.Clone(batch), slices.Repeat(batch[len(batch)-1:], listBatch-len(batch))...)); err != nil {
			return err
		}
	}
	return nil
}

// Threads reads, in one snapshot, the page of roots with their replies and
// their reactions in one statement (the page selected once, in a common
// table expression, sorted on its ids alone), then the names of their
// authors and resolvers by batches of ids: a fixed number of statements
// per page, none per thread, each linear in what the page shows. A thread has at most quire.MaxReplies replies: CreateComment
// counts them under the document's lock.
func (s *CommentSQL) Threads(ctx context.Context, f quire.CommentFilter) ([]quire.Comment, int, error) {
	threads, total, _, err := s.threads(ctx, f, nil)
	return threads, total, err
}

// SharedThreads is Threads for a reader that keeps what it reads for every
// viewer (f.ViewerID is not read): Mine is false throughout, reactors holds
// who made each reaction (by comment id, then emoji), and seq is the
// comments version (CommentsSeq) the threads were read at, in the same
// snapshot.
func (s *CommentSQL) SharedThreads(ctx context.Context, f quire.CommentFilter) (threads []quire.Comment, total int,
	seq quire.CommentsVersion, reactors map[string]map[string][]string, err error) {
	f.ViewerID = ""
	reactors = map[string]map[string][]string{}
	threads, total, seq, err = s.threads(ctx, f, reactors)
	return threads, total, seq, reactors, err
}

// SharedReactions reads, in one snapshot, the comments version of document
// documentID (ENOTFOUND as CommentsSeq) and the reactions of the comments
// ids of that document (roots and replies), as SharedThreads has them: the
// counts by comment id (Mine false; comments without any left out) and who
// made each. By batches of ids, one search of an index per id; comments of
// another document read nothing.
func (s *CommentSQL) SharedReactions(ctx context.Context, vis quire.Visibility, documentID string, ids []string) (
	seq quire.CommentsVersion, reactions map[string][]quire.Reaction, reactors map[string]map[string][]string, err error) {
	reactions, reactors = map[string][]quire.Reaction{}, map[string]map[string][]string{}
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return sqlstore.HasNUL(id) })
	err = s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		var err error
		if seq, err = s.version(ctx, q, vis, documentID); err != nil {
			return err
		}
		words := map[string][]string{} // comment id → "emoji/user" words
		err = batches(ids, func(batch []string) error {
			p := sqlstore.Params{documentID}
			in := p.In(batch...)
			// The CROSS JOIN keeps SQLite's planner from reading every
			// comment of the document to find the few.
			return sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
				var id, emoji, user string
				if err := scan(&id, &emoji, &user); err != nil {
					return err
				}
				words[id] = append(words[id], emoji+"/"+user)
				return nil
			}, `SELECT r.comment_id, r.emoji, r.user_id FROM comment_reactions r CROSS JOIN comments c
				WHERE c.id = r.comment_id AND c.document_id = ? AND r.comment_id IN `+in, p...)
		})
		if err != nil {
			return err
		}
		for id, w := range words {
			reactions[id] = reactionsOf(strings.Join(w, " "), "", id, reactors)
		}
		return nil
	})
	if err != nil {
		return seq, nil, nil, s.E.Fail(ctx, "read reactions", err)
	}
	return seq, reactions, reactors, nil
}

// threads is Threads, with the comments version read in its snapshot and
// who made each reaction added to reactors when it is not nil.
func (s *CommentSQL) threads(ctx context.Context, f quire.CommentFilter, reactors map[string]map[string][]string) ([]quire.Comment, int, quire.CommentsVersion, error) {
	status := ""
	switch f.Status {
	case "", "open":
		status = ` AND ` + s.D.None("c.resolved_at")
	case "resolved":
		status = ` AND ` + s.D.Some("c.resolved_at")
	case "all":
	default:
		return nil, 0, quire.CommentsVersion{}, quire.Invalid(map[string]string{"status": "must be open, resolved or all"})
	}
	vis := f.Visibility
	if sqlstore.HasNUL(f.DocumentID, vis.UserID, vis.DepartmentID, f.ThreadID) {
		return nil, 0, quire.CommentsVersion{}, sqlstore.NotFound("document")
	}
	limit, offset := max(f.Limit, 0), max(f.Offset, 0)
	viewer := f.ViewerID
	if sqlstore.HasNUL(viewer) {
		viewer = ""
	}
	roots, args := ` FROM comments c WHERE c.document_id = ? AND c.parent_id IS NULL`+status, []any{f.DocumentID}
	if f.ThreadID != "" {
		roots, args = roots+` AND c.id = ?`, append(args, f.ThreadID)
	}
	var (
		threads []quire.Comment
		total   int
		seq     quire.CommentsVersion
	)
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		var err error
		if seq, err = s.version(ctx, q, vis, f.DocumentID); err != nil {
			return err
		}
		if err := q.QueryRow(ctx, `SELECT count(*)`+roots, args...).Scan(&total); err != nil {
			return err
		}
		if offset >= total || limit == 0 {
			return nil
		}
		all, err := sqlstore.Collect(ctx, q, scanThreadComment(f.DocumentID, viewer, reactors), `WITH page AS (SELECT c.id`+roots+`
			ORDER BY `+threadOrder+` LIMIT ? OFFSET ?)
			SELECT `+threadColumns+` FROM page JOIN comments c ON c.id = page.id
			UNION ALL SELECT `+threadColumns+` FROM page JOIN comments c ON c.parent_id = page.id`,
			append(args, limit, offset)...)
		if err != nil {
			return err
		}
		if err := s.namesOf(ctx, q, all); err != nil {
			return err
		}
		var replies []quire.Comment
		for _, c := range all {
			if c.ParentID == "" {
				threads = append(threads, c)
			} else {
				replies = append(replies, c)
			}
		}
		slices.SortFunc(threads, threadCompare)
		at := make(map[string]int, len(threads))
		for i := range threads {
			at[threads[i].ID] = i
			threads[i].Replies = []quire.Comment{}
		}
		slices.SortFunc(replies, func(a, b quire.Comment) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		for _, r := range replies {
			if i, ok := at[r.ParentID]; ok {
				threads[i].Replies = append(threads[i].Replies, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, seq, s.E.Fail(ctx, "list comments", err)
	}
	if threads == nil {
		threads = []quire.Comment{}
	}
	return threads, total, seq, nil
}

// reactionsOf reads the reactions of comment id from threadColumns' last
// column, Mine for viewer ("" for no one), in the order of quire.Reactions,
// and adds who made each to reactors when it is not nil.
func reactionsOf(words, viewer, id string, reactors map[string]map[string][]string) []quire.Reaction {
	out := []quire.Reaction{}
	for _, w := range strings.Fields(words) {
		slash := strings.LastIndexByte(w, '/')
		if slash < 0 {
			continue
		}
		emoji, user := w[:slash], w[slash+1:]
		i := slices.IndexFunc(out, func(r quire.Reaction) bool { return r.Emoji == emoji })
		if i < 0 {
			out, i = append(out, quire.Reaction{Emoji: emoji}), len(out)
		}
		out[i].Count++
		out[i].Mine = out[i].Mine || (viewer != "" && user == viewer)
		if reactors != nil {
			if reactors[id] == nil {
				reactors[id] = map[string][]string{}
			}
			reactors[id][emoji] = append(reactors[id][emoji], user)
		}
	}
	slices.SortFunc(out, func(a, b quire.Reaction) int {
		return slices.Index(quire.Reactions, a.Emoji) - slices.Index(quire.Reactions, b.Emoji)
	})
	return out
}

// CommentNames returns the names of the users ids (of comments read
// before: authors and resolvers), "" for one who is gone; by batches of
// ids, a fixed number of statements for a page of threads.
func (s *CommentSQL) CommentNames(ctx context.Context, ids []string) (map[string]string, error) {
	names := make(map[string]string, len(ids))
	for _, id := range ids {
		if !sqlstore.HasNUL(id) {
			names[id] = ""
		}
	}
	if err := s.names(ctx, s.E.Read(), names); err != nil {
		return nil, s.E.Fail(ctx, "read names", err)
	}
	return names, nil
}

// names sets the values of names, a map of user ids, to their names.
func (s *CommentSQL) names(ctx context.Context, q sqlstore.Q, names map[string]string) error {
	return batches(slices.Sorted(maps.Keys(names)), func(batch []string) error {
		var p sqlstore.Params
		in := p.In(batch...)
		return sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
			var id, name string
			if err := scan(&id, &name); err != nil {
				return err
			}
			names[id] = name
			return nil
		}, `SELECT u.id, u.name FROM users u WHERE u.id IN `+in, p...)
	})
}

// namesOf sets the names of the authors and resolvers of cs.
func (s *CommentSQL) namesOf(ctx context.Context, q sqlstore.Q, cs []quire.Comment) error {
	names := map[string]string{}
	for i := range cs {
		names[cs[i].AuthorID] = ""
		if cs[i].ResolvedByID != "" {
			names[cs[i].ResolvedByID] = ""
		}
	}
	err := s.names(ctx, q, names)
	for i := range cs {
		cs[i].AuthorName, cs[i].ResolvedByName = names[cs[i].AuthorID], names[cs[i].ResolvedByID]
	}
	return err
}

// change runs fn on comment id (which vis sees) in a write transaction
// holding its document, then reads it again with its reactions, Mine for
// viewerID. fn reports whether it changed anything: when not, the events
// of the write are blanked.
func (s *CommentSQL) change(ctx context.Context, op string, vis quire.Visibility, id, viewerID string,
	fn func(q sqlstore.Q, c *quire.Comment) (bool, error)) (*quire.Comment, error) {
	return s.changeBumping(ctx, op, vis, id, viewerID, bump, fn)
}

// changeBumping is change, moving the comments version by bumped.
func (s *CommentSQL) changeBumping(ctx context.Context, op string, vis quire.Visibility, id, viewerID string,
	bumped func(ctx context.Context, q sqlstore.Q, id string) error,
	fn func(q sqlstore.Q, c *quire.Comment) (bool, error)) (*quire.Comment, error) {
	var out *quire.Comment
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		c, err := s.get(ctx, q, vis, id, true)
		if err != nil {
			return err
		}
		changed, err := fn(q, c)
		if err != nil {
			return err
		}
		if !changed {
			quire.Unchanged(s.E.Events())
		} else if err := bumped(ctx, q, c.DocumentID); err != nil {
			return err
		}
		out, err = s.withReactions(ctx, q, quire.Visibility{All: true}, viewerID, id)
		return err
	})
	if err != nil {
		return nil, s.E.Fail(ctx, op, err)
	}
	return out, nil
}

// EditComment changes nothing (and records no event) when body is the
// body already. A Deleted placeholder has no body to edit: ENOTFOUND.
// Another author's comment is FORBIDDEN.
func (s *CommentSQL) EditComment(ctx context.Context, vis quire.Visibility, id, authorID, body string, now time.Time) (*quire.Comment, error) {
	if err := sqlstore.NoNUL(map[string]string{"body": body}); err != nil {
		return nil, err
	}
	return s.change(ctx, "edit comment", vis, id, authorID, func(q sqlstore.Q, c *quire.Comment) (bool, error) {
		if c.Deleted {
			return false, sqlstore.NotFound("comment")
		}
		if c.AuthorID != authorID {
			return false, quire.Errorf(quire.EFORBIDDEN, "Only its author may edit a comment")
		}
		if c.Body == body {
			return false, nil
		}
		_, err := q.Exec(ctx, `UPDATE comments SET body = ?, edited = true, updated_at = ? WHERE id = ?`,
			body, s.D.Time(sqlstore.Micro(now)), id)
		return err == nil, err
	})
}

// ResolveComment keeps the first resolution of a resolved thread, and
// reopening an open one changes nothing (neither records an event). A
// Deleted placeholder is still a thread: it is resolved and reopened.
func (s *CommentSQL) ResolveComment(ctx context.Context, vis quire.Visibility, id, byUserID string, resolve bool, now time.Time) (*quire.Comment, error) {
	return s.change(ctx, "resolve comment", vis, id, byUserID, func(q sqlstore.Q, c *quire.Comment) (bool, error) {
		if c.ParentID != "" {
			return false, quire.Invalid(map[string]string{"id": "is a reply: only a thread is resolved or reopened"})
		}
		if resolve == !c.ResolvedAt.IsZero() {
			return false, nil
		}
		at, by := s.D.Time(sqlstore.Micro(now)), sqlstore.NullString(byUserID)
		if !resolve {
			at, by = s.D.Time(time.Time{}), nil
		} else if sqlstore.HasNUL(byUserID) {
			return false, quire.Invalid(map[string]string{"resolved_by": "does not exist"})
		}
		_, err := q.Exec(ctx, `UPDATE comments SET resolved_at = ?, resolved_by = ? WHERE id = ?`, at, by, id)
		return err == nil, err
	})
}

// React refuses an emoji outside quire.Reactions (VALIDATION_ERROR on
// emoji); a Deleted placeholder takes no reaction (ENOTFOUND). Adding a
// reaction twice, or taking back one never made, changes nothing.
func (s *CommentSQL) React(ctx context.Context, vis quire.Visibility, id, userID, emoji string, on bool) (*quire.Comment, error) {
	if !slices.Contains(quire.Reactions, emoji) {
		return nil, quire.Invalid(map[string]string{"emoji": "must be one of " + strings.Join(quire.Reactions, " ")})
	}
	return s.changeBumping(ctx, "react to comment", vis, id, userID, bumpReaction(id), func(q sqlstore.Q, c *quire.Comment) (bool, error) {
		if c.Deleted {
			return false, sqlstore.NotFound("comment")
		}
		if sqlstore.HasNUL(userID) {
			return false, quire.Invalid(map[string]string{"user_id": "does not exist"})
		}
		query, args := `DELETE FROM comment_reactions WHERE comment_id = ? AND user_id = ? AND emoji = ?`, []any{id, userID, emoji}
		if on {
			query = `INSERT INTO comment_reactions (comment_id, user_id, emoji, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
			args = append(args, s.D.Time(sqlstore.WallClock()))
		}
		n, err := q.Exec(ctx, query, args...)
		return n > 0, err
	})
}

// DeleteComment: a root with replies becomes a Deleted placeholder (empty
// body, no reactions, its anchor and resolution kept); a root without
// goes; a reply goes, and its Deleted root with it when it was the last.
// Reactions go with their comment (ON DELETE CASCADE). A Deleted
// placeholder itself is ENOTFOUND: it goes with its last reply.
func (s *CommentSQL) DeleteComment(ctx context.Context, vis quire.Visibility, id string, now time.Time) error {
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		c, err := s.get(ctx, q, vis, id, true)
		if err != nil {
			return err
		}
		if c.Deleted {
			return sqlstore.NotFound("comment")
		}
		if c.ParentID != "" {
			if _, err := q.Exec(ctx, `DELETE FROM comments WHERE id = ?`, id); err != nil {
				return err
			}
			gone, err := q.Exec(ctx, `DELETE FROM comments WHERE id = ? AND deleted = true
				AND NOT EXISTS (SELECT 1 FROM comments r WHERE r.parent_id = ?)`, c.ParentID, c.ParentID)
			if err != nil {
				return err
			}
			return bumpThreads(ctx, q, c.DocumentID, -gone)
		}
		n, err := q.Exec(ctx, `UPDATE comments SET body = '', deleted = true, updated_at = ?
			WHERE id = ? AND EXISTS (SELECT 1 FROM comments r WHERE r.parent_id = ?)`, s.D.Time(sqlstore.Micro(now)), id, id)
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err = q.Exec(ctx, `DELETE FROM comments WHERE id = ?`, id); err != nil {
				return err
			}
			return bumpThreads(ctx, q, c.DocumentID, -1)
		}
		if _, err = q.Exec(ctx, `DELETE FROM comment_reactions WHERE comment_id = ?`, id); err != nil {
			return err
		}
		return bump(ctx, q, c.DocumentID)
	})
	return s.E.Fail(ctx, "delete comment", err)
}

// openBatch is how many documents OpenThreads asks for in one statement:
// a shorter batch repeats its last id, so that the statement's text is
// always the same.
const openBatch = 100

// OpenThreads counts the roots not resolved; a Deleted placeholder, which
// stays only while it has replies, counts as the thread it still is.
func (s *CommentSQL) OpenThreads(ctx context.Context, ids []string) (map[string]int, error) {
	out := map[string]int{}
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return sqlstore.HasNUL(id) })
	for len(ids) > 0 {
		batch := ids[:min(openBatch, len(ids))]
		ids = ids[len(batch):]
		var p sqlstore.Params
		in := p.In(append(batch, slices.Repeat(batch[len(batch)-1:], openBatch-len(batch))...)...)
		err := sqlstore.Each(ctx, s.E.Read(), func(scan func(dest ...any) error) error {
			var (
				id string
				n  int
			)
			if err := scan(&id, &n); err != nil {
				return err
			}
			out[id] = n
			return nil
		}, `SELECT c.document_id, count(*) FROM comments c WHERE c.document_id IN `+in+`
			AND c.parent_id IS NULL AND `+s.D.None("c.resolved_at")+` GROUP BY c.document_id`, p...)
		if err != nil {
			return nil, s.E.Fail(ctx, "count open threads", err)
		}
	}
	return out, nil
}

// reanchorBatch is how many threads one statement of Reanchor moves; a
// shorter batch repeats its last row, so that the statement's text is
// always the same.
const reanchorBatch = 64

// Reanchor finds each anchored thread of document id again in the reading
// text of its new content (contentType, content), in q, the transaction
// that writes the content: attached at the quote's new place, or outdated
// (position -1, the quote kept) when it is gone. A document without
// anchored threads costs one indexed lookup. The text and its index are
// built once for all threads: linear work in the text and the quotes.
func (s *CommentSQL) Reanchor(ctx context.Context, q sqlstore.Q, id, contentType, content string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM comments WHERE document_id = ? AND anchor_state <> '' LIMIT 1`, id).Scan(&one)
	if errors.Is(err, sqlstore.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	type thread struct {
		id, quote, prefix, suffix, state string
		position                         int
	}
	threads, err := sqlstore.Collect(ctx, q, func(scan func(dest ...any) error) (t thread, err error) {
		err = scan(&t.id, &t.quote, &t.prefix, &t.suffix, &t.state, &t.position)
		return
	}, `SELECT id, quote, prefix, suffix, anchor_state, position FROM comments WHERE document_id = ? AND anchor_state <> ''`, id)
	if err != nil {
		return err
	}
	index := anchor.NewIndex(anchor.Text(contentType, content))
	var moved []any
	for _, t := range threads {
		state, position := quire.AnchorAttached, index.Find(t.quote, t.prefix, t.suffix)
		if position < 0 {
			state, position = quire.AnchorOutdated, -1
		}
		if state != t.state || position != t.position {
			moved = append(moved, t.id, state, position)
		}
	}
	if len(moved) > 0 {
		if err := bump(ctx, q, id); err != nil {
			return err
		}
	}
	const width = 3 // values of a row of moved
	row := `, (?, ?, CAST(? AS INTEGER))`
	values := strings.TrimPrefix(strings.Repeat(row, reanchorBatch), ", ")
	for len(moved) > 0 {
		batch := slices.Clone(moved[:min(reanchorBatch*width, len(moved))])
		moved = moved[len(batch):]
		for len(batch) < reanchorBatch*width {
			batch = append(batch, batch[len(batch)-width:]...)
		}
		if _, err := q.Exec(ctx, `UPDATE comments SET anchor_state = v.column2, position = v.column3
			FROM (VALUES `+values+`) AS v WHERE comments.id = v.column1`, batch...); err != nil {
			return err
		}
	}
	return nil
}
