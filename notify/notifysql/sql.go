// Package notifysql is the store of watches, notifications and the queue of
// events to fan out, written once for SQLite and PostgreSQL on a
// sqlstore.Engine. Package notify holds the rules.
//
// Who sees a document is decided at read time by the reader's
// quire.Visibility (sqlstore's DocsVisible, the one filter of documents),
// and, where one query speaks of many people at once (the fan-out, the
// mention picker, the mails), by sees: the same rule over the users table.
package notifysql

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quire"
	"quire/sqlstore"
)

// NotifySQL is quire.NotificationStore written once for both engines, which
// embed it. The events to fan out are queued by sqlstore.InsertEvents.
type NotifySQL struct{ sqlstore.Base }

// NewSQL returns the notification store on e.
func NewSQL(e sqlstore.Engine) *NotifySQL { return &NotifySQL{sqlstore.NewBase(e)} }

var _ quire.NotificationStore = (*NotifySQL)(nil)

// sees is the condition that the user u (joined with its role r) sees the
// document d now: active, a role with view on documents, the document out
// of the trash, and documents.VisibilityOf's rule (an administrator's role
// sees all; else owner, public, department, project member), as
// sqlstore's DocsVisible writes it for one reader.
func (s *NotifySQL) sees() string {
	return `u.status = 'active' AND r.docs_level <> 'none' AND ` + s.D.None("d.deleted_at") + ` AND (r.admin
		OR d.owner_id = u.id OR d.visibility = 'public'
		OR (d.visibility = 'department' AND d.department_id = u.department_id)
		OR (d.visibility = 'project' AND EXISTS (SELECT 1 FROM project_members pm
			WHERE pm.project_id = d.project_id AND pm.user_id = u.id)))`
}

// visible is the condition that the reader vis sees the document d now.
func (s *NotifySQL) visible(vis quire.Visibility, p *sqlstore.Params) string {
	return s.D.None("d.deleted_at") + ` AND ` + s.D.DocsVisible(vis, p, false)
}

func (s *NotifySQL) Watch(ctx context.Context, userID string, folder bool, id string, on bool, now time.Time) error {
	table, col, what, exists := "document_watches", "document_id", "document", `SELECT 1 FROM documents WHERE id = ?`
	if folder {
		table, col, what, exists = "folder_watches", "folder_id", "folder", `SELECT 1 FROM folders WHERE id = ?`
	}
	if sqlstore.HasNUL(userID, id) {
		return sqlstore.NotFound(what)
	}
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		var one int
		if err := q.QueryRow(ctx, exists, id).Scan(&one); err != nil {
			return sqlstore.Found(err, what)
		}
		if !on {
			_, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE `+col+` = ? AND user_id = ?`, id, userID)
			return err
		}
		_, err := q.Exec(ctx, `INSERT INTO `+table+` (`+col+`, user_id, created_at) VALUES (?, ?, ?)
			ON CONFLICT DO NOTHING`, id, userID, s.D.Time(sqlstore.Micro(now)))
		return err
	})
	return s.E.Fail(ctx, "watch", err)
}

func scanNamed(scan func(dest ...any) error) (quire.Named, error) {
	var n quire.Named
	err := scan(&n.ID, &n.Name)
	return n, err
}

func (s *NotifySQL) Watching(ctx context.Context, vis quire.Visibility, userID string) (*quire.Watched, error) {
	out := &quire.Watched{Documents: []quire.Named{}, Folders: []quire.Named{}}
	if sqlstore.HasNUL(userID, vis.UserID, vis.DepartmentID) {
		return out, nil
	}
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		p := sqlstore.Params{userID}
		cond := s.visible(vis, &p)
		docs, err := sqlstore.Collect(ctx, q, scanNamed, `SELECT d.id, d.title FROM document_watches w
			JOIN documents d ON d.id = w.document_id WHERE w.user_id = ? AND `+cond+`
			ORDER BY d.title, d.id LIMIT `+p.Add(quire.MaxWatched+1), p...)
		if err != nil {
			return err
		}
		folders, err := sqlstore.Collect(ctx, q, scanNamed, `SELECT f.id, f.name FROM folder_watches w
			JOIN folders f ON f.id = w.folder_id WHERE w.user_id = ? ORDER BY f.name, f.id LIMIT ?`, userID, quire.MaxWatched+1)
		if err != nil {
			return err
		}
		out.More = len(docs) > quire.MaxWatched || len(folders) > quire.MaxWatched
		out.Documents = append(out.Documents, docs[:min(len(docs), quire.MaxWatched)]...)
		out.Folders = append(out.Folders, folders[:min(len(folders), quire.MaxWatched)]...)
		return nil
	})
	if err != nil {
		return nil, s.E.Fail(ctx, "read watches", err)
	}
	return out, nil
}

// queued is one event of notify_queue.
type queued struct {
	seq                                    int64
	action, documentID, commentID, actorID string
	mentions                               []string
	ignored                                int
	at                                     time.Time
}

func scanQueued(scan func(dest ...any) error) (queued, error) {
	var (
		e        queued
		mentions string
	)
	if err := scan(&e.seq, &e.action, &e.documentID, &e.commentID, &e.actorID, &mentions, &e.ignored, sqlstore.T(&e.at)); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(mentions), &e.mentions); err != nil {
		return e, err
	}
	return e, nil
}

// FanOut deletes the claimed events from the queue in the transaction
// that writes their notifications: on PostgreSQL the rows another node's
// claim holds are skipped (SKIP LOCKED), on SQLite the writer is alone. A
// notification carries the time of its event, not now.
func (s *NotifySQL) FanOut(ctx context.Context, now time.Time, n int) (events, ignored int, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	// Every node polls: an empty queue is seen with a read, without a
	// write transaction.
	var one int
	switch err := s.E.Read().QueryRow(ctx, `SELECT 1 FROM notify_queue LIMIT 1`).Scan(&one); {
	case errors.Is(err, sqlstore.ErrNoRows):
		return 0, 0, nil
	case err != nil:
		return 0, 0, s.E.Fail(ctx, "fan out notifications", err)
	}
	err = s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		events, ignored = 0, 0
		evs, err := sqlstore.Collect(ctx, q, scanQueued, `SELECT seq, action, document_id, comment_id, actor_id, mentions, ignored, at
			FROM notify_queue ORDER BY seq LIMIT ?`+s.D.Locked(" FOR UPDATE SKIP LOCKED"), n)
		if err != nil || len(evs) == 0 {
			return err
		}
		if evs, err = s.inOrder(ctx, q, evs); err != nil || len(evs) == 0 {
			return err
		}
		p := sqlstore.Params{}
		seqs := make([]string, len(evs))
		for i, e := range evs {
			seqs[i] = strconv.FormatInt(e.seq, 10)
		}
		del := `DELETE FROM notify_queue WHERE seq IN ` + p.In(seqs...)
		if _, err := q.Exec(ctx, del, p...); err != nil {
			return err
		}
		for _, e := range collapse(evs) {
			if err := s.fan(ctx, q, e); err != nil {
				return err
			}
			ignored += e.ignored
		}
		events = len(evs)
		return nil
	})
	if err != nil {
		return 0, 0, s.E.Fail(ctx, "fan out notifications", err)
	}
	return events, ignored, nil
}

// inOrder keeps, of the claimed events evs (in queue order), those whose
// document has no earlier event in the queue: an earlier one that is not
// claimed here is held by another node's claim (SKIP LOCKED passed it), and
// a document's events fan out in the order they were queued, across nodes
// too (a comment made just after its document was created must find the
// creator's automatic watch). The others wait for a later round; their
// rows stay, released at the end of this transaction.
func (s *NotifySQL) inOrder(ctx context.Context, q sqlstore.Q, evs []queued) ([]queued, error) {
	first := map[string]int64{}
	for _, e := range evs {
		if _, ok := first[e.documentID]; !ok {
			first[e.documentID] = e.seq
		}
	}
	ids := slices.Collect(maps.Keys(first))
	p := sqlstore.Params{}
	held := map[string]bool{}
	query := `SELECT document_id, min(seq) FROM notify_queue WHERE document_id IN ` + p.In(ids...) + ` GROUP BY document_id`
	err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
		var id string
		var earliest int64
		if err := scan(&id, &earliest); err != nil {
			return err
		}
		held[id] = earliest < first[id]
		return nil
	}, query, p...)
	if err != nil || len(held) == 0 {
		return evs, err
	}
	return slices.DeleteFunc(evs, func(e queued) bool { return held[e.documentID] }), nil
}

// collapse drops, of a batch of events in queue order, each change of a
// document's fields without new mentions that a later one by the same
// actor on the same document follows: its document_updated would be
// refreshed by the later one anyway (a burst of saves fans out once).
// Applied in order, what is left writes the same notifications.
func collapse(evs []queued) []queued {
	type key struct{ document, actor string }
	last := map[key]int{}
	plain := func(e queued) bool {
		return (e.action == quire.ActionDocumentUpdated || e.action == quire.ActionVersionRestored) && len(e.mentions) == 0
	}
	for i, e := range evs {
		if plain(e) {
			last[key{e.documentID, e.actorID}] = i
		}
	}
	out := evs[:0:0]
	for i, e := range evs {
		if !plain(e) || last[key{e.documentID, e.actorID}] == i {
			out = append(out, e)
		}
	}
	return out
}

// recipient is who hears of an event, and how: the first kind given to a
// person wins (a mention before a reply before the rest).
type recipients struct {
	order []string
	kind  map[string]string
	actor string
}

func (r *recipients) add(kind string, ids ...string) {
	for _, id := range ids {
		if id == "" || id == r.actor {
			continue
		}
		if _, ok := r.kind[id]; ok {
			continue
		}
		r.kind[id] = kind
		r.order = append(r.order, id)
	}
}

// fan writes the notifications and automatic watches of one event.
func (s *NotifySQL) fan(ctx context.Context, q sqlstore.Q, e queued) error {
	var ownerID string
	err := q.QueryRow(ctx, `SELECT d.owner_id FROM documents d WHERE d.id = ? AND `+s.D.None("d.deleted_at"),
		e.documentID).Scan(&ownerID)
	if errors.Is(err, sqlstore.ErrNoRows) {
		return nil // purged or in the trash since: nobody hears of it
	} else if err != nil {
		return err
	}
	r := &recipients{kind: map[string]string{}, actor: e.actorID}
	// A mention of someone who cannot see the document notifies nobody.
	mentioned, err := s.seeing(ctx, q, e.documentID, e.mentions)
	if err != nil {
		return err
	}
	r.add(quire.NotifyMention, mentioned...)
	watchers := append([]string{}, mentioned...)
	excerpt := ""
	switch e.action {
	case quire.ActionDocumentCreated:
		watchers = append(watchers, ownerID)
	case quire.ActionDocumentUpdated, quire.ActionVersionRestored:
		w, err := s.watchers(ctx, q, e.documentID)
		if err != nil {
			return err
		}
		r.add(quire.NotifyDocumentUpdated, w...)
	case quire.ActionCommentCreated, quire.ActionCommentResolved:
		var parentID, authorID, body string
		err := q.QueryRow(ctx, `SELECT COALESCE(parent_id, ''), author_id, body FROM comments WHERE id = ? AND document_id = ?`,
			e.commentID, e.documentID).Scan(&parentID, &authorID, &body)
		if errors.Is(err, sqlstore.ErrNoRows) {
			return nil // deleted since
		} else if err != nil {
			return err
		}
		excerpt = cut(body, quire.MaxExcerpt)
		switch {
		case e.action == quire.ActionCommentResolved:
			if parentID == "" {
				ids, err := s.seeing(ctx, q, e.documentID, []string{authorID})
				if err != nil {
					return err
				}
				r.add(quire.NotifyResolved, ids...)
			}
		case parentID == "":
			w, err := s.watchers(ctx, q, e.documentID)
			if err != nil {
				return err
			}
			r.add(quire.NotifyComment, w...)
			watchers = append(watchers, e.actorID)
		default:
			var thread []string
			err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
				var id string
				if err := scan(&id); err != nil {
					return err
				}
				thread = append(thread, id)
				return nil
			}, `SELECT author_id FROM comments WHERE id = ? UNION SELECT author_id FROM comments WHERE parent_id = ?`,
				parentID, parentID)
			if err != nil {
				return err
			}
			ids, err := s.seeing(ctx, q, e.documentID, thread)
			if err != nil {
				return err
			}
			r.add(quire.NotifyReply, ids...)
			watchers = append(watchers, e.actorID)
		}
	}
	for _, id := range watchers {
		if id == "" {
			continue
		}
		if _, err := q.Exec(ctx, `INSERT INTO document_watches (document_id, user_id, created_at)
			SELECT ?, id, ? FROM users WHERE id = ? ON CONFLICT DO NOTHING`, e.documentID, s.D.Time(e.at), id); err != nil {
			return err
		}
	}
	return s.insert(ctx, q, e, r, excerpt)
}

// insertBatch is how many notifications one INSERT writes.
const insertBatch = 100

// insert writes the notifications of r, in batches; an unread
// document_updated of the same person and document is refreshed instead.
// A mention or a reply to a person whose mail is instant is marked to mail.
func (s *NotifySQL) insert(ctx context.Context, q sqlstore.Q, e queued, r *recipients, excerpt string) error {
	for start := 0; start < len(r.order); start += insertBatch {
		ids := r.order[start:min(start+insertBatch, len(r.order))]
		sp := sqlstore.Params{}
		quiet, err := s.ids(ctx, q, `SELECT user_id FROM notification_settings WHERE email <> 'instant' AND user_id IN `+
			sp.In(ids...), sp...)
		if err != nil {
			return err
		}
		var (
			b strings.Builder
			p sqlstore.Params
		)
		b.WriteString(`INSERT INTO notifications (id, user_id, kind, document_id, comment_id, actor_id, excerpt, created_at, mail)
			VALUES `)
		for i, id := range ids {
			if i > 0 {
				b.WriteString(`, `)
			}
			kind, mail := r.kind[id], ""
			if (kind == quire.NotifyMention || kind == quire.NotifyReply) && !slices.Contains(quiet, id) {
				mail = quire.NotifyEmailInstant
			}
			b.WriteString(`(` + p.Add(sqlstore.NewID()) + `, ` + p.Add(id) + `, ` + p.Add(kind) + `, ` + p.Add(e.documentID) +
				`, ` + p.Add(e.commentID) + `, ` + p.Add(e.actorID) + `, ` + p.Add(excerpt) + `, ` + p.Add(s.D.Time(e.at)) +
				`, ` + p.Add(mail) + `)`)
		}
		b.WriteString(` ON CONFLICT (user_id, document_id) WHERE kind = 'document_updated' AND ` + s.D.None("read_at") +
			` DO UPDATE SET created_at = excluded.created_at, actor_id = excluded.actor_id`)
		if _, err := q.Exec(ctx, b.String(), p...); err != nil {
			return err
		}
	}
	return nil
}

// watchers are the people who watch document id, or one of the folders
// it is in, and see it now.
func (s *NotifySQL) watchers(ctx context.Context, q sqlstore.Q, id string) ([]string, error) {
	return s.ids(ctx, q, `WITH RECURSIVE up (id) AS (
			SELECT folder_id FROM documents WHERE id = ? AND folder_id IS NOT NULL
			UNION SELECT f.parent_id FROM folders f JOIN up ON f.id = up.id WHERE f.parent_id IS NOT NULL)
		SELECT u.id FROM users u JOIN roles r ON r.key = u.role_key JOIN documents d ON d.id = ?
		WHERE (u.id IN (SELECT w.user_id FROM document_watches w WHERE w.document_id = d.id)
			OR u.id IN (SELECT w.user_id FROM folder_watches w WHERE w.folder_id IN (SELECT id FROM up)))
		AND `+s.sees()+` ORDER BY u.id`, id, id)
}

// seeing keeps of ids those who see document id now, in their order.
func (s *NotifySQL) seeing(ctx context.Context, q sqlstore.Q, id string, ids []string) ([]string, error) {
	ids = slices.DeleteFunc(slices.Clone(ids), func(u string) bool { return !quire.ValidID(u) })
	if len(ids) == 0 {
		return nil, nil
	}
	p := sqlstore.Params{id}
	ok, err := s.ids(ctx, q, `SELECT u.id FROM users u JOIN roles r ON r.key = u.role_key JOIN documents d ON d.id = ?
		WHERE u.id IN `+p.In(ids...)+` AND `+s.sees(), p...)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(u string) bool { return !slices.Contains(ok, u) }), nil
}

func (s *NotifySQL) ids(ctx context.Context, q sqlstore.Q, query string, args ...any) ([]string, error) {
	var out []string
	err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
		var id string
		if err := scan(&id); err != nil {
			return err
		}
		out = append(out, id)
		return nil
	}, query, args...)
	return out, err
}

// cut is s cut to its first n characters, with an ellipsis when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	for i := range s {
		if n == 0 {
			return strings.TrimSpace(s[:i]) + "…"
		}
		n--
	}
	return s
}

// notificationColumns read a notification (alias n, its document d). The
// excerpt of a comment's notification is the comment's text as it is when
// read, not as it was when the notification was made: an edited comment
// shows its new text, a deleted one none (its row gone, or a placeholder
// with no body), in the list and in a mail made after the deletion alike.
var notificationColumns = `n.id, n.user_id, n.kind, n.document_id, d.title, n.comment_id, n.actor_id,
	COALESCE((SELECT u.name FROM users u WHERE u.id = n.actor_id), ''),
	CASE WHEN n.comment_id = '' THEN n.excerpt ELSE COALESCE((SELECT substr(c.body, 1, ` + excerptRead + `) FROM comments c WHERE c.id = n.comment_id), '') END,
	n.created_at, n.read_at`

// excerptRead is how many characters of a comment an excerpt reads: one
// more than it shows, for cut to know whether it cuts.
var excerptRead = strconv.Itoa(quire.MaxExcerpt + 1)

func scanNotification(scan func(dest ...any) error) (quire.Notification, error) {
	var n quire.Notification
	err := scan(&n.ID, &n.UserID, &n.Kind, &n.DocumentID, &n.DocumentTitle, &n.CommentID, &n.ActorID, &n.ActorName,
		&n.Excerpt, sqlstore.T(&n.CreatedAt), sqlstore.T(&n.ReadAt))
	n.Excerpt = cut(n.Excerpt, quire.MaxExcerpt)
	return n, err
}

func errBefore() error {
	return quire.Invalid(map[string]string{"before": "must be the id of one of your notifications"})
}

func (s *NotifySQL) Notifications(ctx context.Context, f quire.NotificationFilter) ([]quire.Notification, int, error) {
	out, unread := []quire.Notification{}, 0
	if sqlstore.HasNUL(f.UserID, f.Visibility.UserID, f.Visibility.DepartmentID) {
		return out, 0, nil
	}
	if sqlstore.HasNUL(f.Before) {
		return nil, 0, errBefore()
	}
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		p := sqlstore.Params{f.UserID}
		where := `n.user_id = ? AND ` + s.visible(f.Visibility, &p)
		if f.UnreadOnly {
			where += ` AND ` + s.D.None("n.read_at")
		}
		if f.Before != "" {
			var at time.Time
			bp := append(sqlstore.Params{f.Before}, p...)
			err := q.QueryRow(ctx, `SELECT n.created_at FROM notifications n JOIN documents d ON d.id = n.document_id
				WHERE n.id = ? AND `+where, bp...).Scan(sqlstore.T(&at))
			if errors.Is(err, sqlstore.ErrNoRows) {
				return errBefore()
			} else if err != nil {
				return err
			}
			where += ` AND (n.created_at < ` + p.Add(s.D.Time(at)) + ` OR (n.created_at = ` + p.Add(s.D.Time(at)) +
				` AND n.id < ` + p.Add(f.Before) + `))`
		}
		page, err := sqlstore.Collect(ctx, q, scanNotification, `SELECT `+notificationColumns+`
			FROM notifications n JOIN documents d ON d.id = n.document_id WHERE `+where+`
			ORDER BY n.created_at DESC, n.id DESC LIMIT `+p.Add(f.Limit), p...)
		if err != nil {
			return err
		}
		out = append(out, page...)
		unread, err = s.unread(ctx, q, f.Visibility, f.UserID)
		return err
	})
	if err != nil {
		return nil, 0, s.E.Fail(ctx, "read notifications", err)
	}
	return out, unread, nil
}

// unread counts userID's unread notifications about documents vis sees.
func (s *NotifySQL) unread(ctx context.Context, q sqlstore.Q, vis quire.Visibility, userID string) (int, error) {
	p := sqlstore.Params{userID}
	n := 0
	err := q.QueryRow(ctx, `SELECT count(*) FROM notifications n JOIN documents d ON d.id = n.document_id
		WHERE n.user_id = ? AND `+s.D.None("n.read_at")+` AND `+s.visible(vis, &p), p...).Scan(&n)
	return n, err
}

func (s *NotifySQL) MarkRead(ctx context.Context, vis quire.Visibility, userID string, ids []string, all bool, now time.Time) (int, error) {
	if sqlstore.HasNUL(userID, vis.UserID, vis.DepartmentID) {
		return 0, sqlstore.NotFound("user")
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	unknown := quire.Invalid(map[string]string{"ids": "must each be the id of one of your notifications"})
	if !all && sqlstore.HasNUL(ids...) {
		return 0, unknown
	}
	at := s.D.Time(sqlstore.Micro(now))
	unread := 0
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		if all {
			if _, err := q.Exec(ctx, `UPDATE notifications SET read_at = ? WHERE user_id = ? AND `+s.D.None("read_at"),
				at, userID); err != nil {
				return err
			}
		} else if len(ids) > 0 {
			p := sqlstore.Params{userID}
			in := p.In(ids...)
			n := 0
			if err := q.QueryRow(ctx, `SELECT count(*) FROM notifications n JOIN documents d ON d.id = n.document_id
				WHERE n.user_id = ? AND n.id IN `+in+` AND `+s.visible(vis, &p), p...).Scan(&n); err != nil {
				return err
			}
			if n != len(ids) {
				return unknown
			}
			up := sqlstore.Params{at, userID}
			if _, err := q.Exec(ctx, `UPDATE notifications SET read_at = ? WHERE user_id = ? AND id IN `+up.In(ids...)+
				` AND `+s.D.None("read_at"), up...); err != nil {
				return err
			}
		}
		var err error
		unread, err = s.unread(ctx, q, vis, userID)
		return err
	})
	if err != nil {
		return 0, s.E.Fail(ctx, "mark notifications read", err)
	}
	return unread, nil
}

// likeEscape escapes the wildcards of LIKE (with ESCAPE '\').
var likeEscape = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (s *NotifySQL) Mentionable(ctx context.Context, documentID, q string, limit int) ([]quire.Named, error) {
	if sqlstore.HasNUL(documentID, q) || limit <= 0 {
		return []quire.Named{}, nil
	}
	q = likeEscape.Replace(strings.ToLower(strings.TrimSpace(q)))
	return sqlstore.List(ctx, s.E, "mentionable users", scanNamed, `SELECT u.id, u.name
		FROM users u JOIN roles r ON r.key = u.role_key JOIN documents d ON d.id = ?
		WHERE `+s.sees()+` AND (lower(u.name) LIKE ? ESCAPE '\' OR lower(u.name) LIKE ? ESCAPE '\')
		ORDER BY u.name, u.id LIMIT ?`, documentID, q+"%", "% "+q+"%", limit)
}

func (s *NotifySQL) NotificationEmail(ctx context.Context, userID string) (string, error) {
	email := quire.NotifyEmailInstant
	if sqlstore.HasNUL(userID) {
		return email, nil
	}
	err := s.E.Read().QueryRow(ctx, `SELECT email FROM notification_settings WHERE user_id = ?`, userID).Scan(&email)
	if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
		return "", s.E.Fail(ctx, "read notification settings", err)
	}
	return email, nil
}

func (s *NotifySQL) SetNotificationEmail(ctx context.Context, userID, email string, now time.Time) error {
	if sqlstore.HasNUL(userID) {
		return sqlstore.NotFound("user")
	}
	now = sqlstore.Micro(now)
	// Switching to digest starts the days of digests now; staying keeps them.
	_, err := s.E.ExecOne(ctx, "user", `INSERT INTO notification_settings (user_id, email, digest_sent_at, updated_at)
		SELECT id, ?, ?, ? FROM users WHERE id = ?
		ON CONFLICT (user_id) DO UPDATE SET email = excluded.email, updated_at = excluded.updated_at,
			digest_sent_at = CASE WHEN notification_settings.email = 'digest' THEN notification_settings.digest_sent_at
				ELSE excluded.digest_sent_at END`,
		email, s.D.Time(now), s.D.Time(now), userID)
	return s.E.Fail(ctx, "set notification settings", err)
}

// mailable reads, of userID's notifications that where (binding args)
// selects, those unread about documents the person sees now, newest first,
// at most limit.
func (s *NotifySQL) mailable(ctx context.Context, q sqlstore.Q, userID, where string, limit int, args ...any) ([]quire.Notification, error) {
	return sqlstore.Collect(ctx, q, scanNotification, `SELECT `+notificationColumns+`
		FROM notifications n JOIN documents d ON d.id = n.document_id JOIN users u ON u.id = n.user_id
		JOIN roles r ON r.key = u.role_key
		WHERE n.user_id = ? AND `+s.D.None("n.read_at")+` AND `+where+` AND `+s.sees()+`
		ORDER BY n.created_at DESC, n.id DESC LIMIT ?`, append(append([]any{userID}, args...), limit)...)
}

// send renders the mail of ns to userID and queues it in q.
func (s *NotifySQL) send(ctx context.Context, q sqlstore.Q, m quire.NotificationMailer, userID string, digest bool, ns []quire.Notification) error {
	u, err := sqlstore.GetUser(ctx, q, "u.id = ?", userID)
	if err != nil {
		return err
	}
	mail, err := m.Render(u, digest, ns)
	if err != nil {
		return err
	}
	_, err = sqlstore.InsertMail(ctx, q, s.D, mail, "")
	return err
}

// digester is a person whose digest may be due.
type digester struct {
	userID, timezone string
	sentAt           time.Time
}

// digestsDue reads the people whose digest time has come since their last
// digest, at most m.Limit of them; each is claimed in the write.
func (s *NotifySQL) digestsDue(ctx context.Context, q sqlstore.Q, m quire.NotificationMailer) ([]digester, error) {
	var due []digester
	err := sqlstore.Each(ctx, q, func(scan func(dest ...any) error) error {
		var d digester
		if err := scan(&d.userID, &d.timezone, sqlstore.T(&d.sentAt)); err != nil {
			return err
		}
		if d.sentAt.Before(m.DigestDue(d.timezone)) && len(due) < m.Limit {
			due = append(due, d)
		}
		return nil
	}, `SELECT st.user_id, u.timezone, st.digest_sent_at FROM notification_settings st JOIN users u ON u.id = st.user_id
		WHERE st.email = 'digest' AND u.status = 'active' ORDER BY st.user_id`)
	return due, err
}

// MailNotifications claims an instant mail by clearing the mark of its
// notifications (on PostgreSQL a second node's UPDATE waits for the first
// and then finds nothing left to clear), and a digest by moving its
// person's digest_sent_at past the digest time, under the same condition.
func (s *NotifySQL) MailNotifications(ctx context.Context, now time.Time, m quire.NotificationMailer) (int, error) {
	now = sqlstore.Micro(now)
	sent := 0
	// Every node polls: nothing due is seen with reads, without a write
	// transaction.
	var one int
	err := s.E.Read().QueryRow(ctx, `SELECT 1 FROM notifications WHERE mail = 'instant' AND created_at <= ? LIMIT 1`,
		s.D.Time(sqlstore.Micro(m.InstantBefore))).Scan(&one)
	instant := err == nil
	if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
		return 0, s.E.Fail(ctx, "mail notifications", err)
	}
	digests, err := s.digestsDue(ctx, s.E.Read(), m)
	if err != nil {
		return 0, s.E.Fail(ctx, "mail digests", err)
	}
	if !instant && len(digests) == 0 {
		return 0, nil
	}
	err = s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		sent = 0
		if !instant {
			return nil
		}
		users, err := s.ids(ctx, q, `SELECT DISTINCT user_id FROM notifications WHERE mail = 'instant' AND created_at <= ?
			ORDER BY user_id LIMIT ?`, s.D.Time(sqlstore.Micro(m.InstantBefore)), m.Limit)
		if err != nil {
			return err
		}
		for _, userID := range users {
			// One mail lists at most MaxDigest notifications, the newest,
			// like a digest: they are claimed by id (mail = 'instant' checked
			// again on the row, so that a second node waiting on them finds
			// them taken), and the older rest, which no mail lists, only
			// lose their mark. A person with tens of thousands pending (a
			// flood of mentions) costs one mail, not a list of ids past
			// the database's limit of parameters, which failed every
			// mail of every person.
			claimed, err := s.ids(ctx, q, `UPDATE notifications SET mail = '' WHERE mail = 'instant' AND id IN (
				SELECT id FROM notifications WHERE user_id = ? AND mail = 'instant' ORDER BY created_at DESC, id DESC LIMIT ?)
				RETURNING id`, userID, quire.MaxDigest)
			if err != nil {
				return err
			}
			if len(claimed) == 0 {
				continue // another node mailed them
			}
			if _, err := q.Exec(ctx, `UPDATE notifications SET mail = '' WHERE user_id = ? AND mail = 'instant'`, userID); err != nil {
				return err
			}
			var email string
			err = q.QueryRow(ctx, `SELECT email FROM notification_settings WHERE user_id = ?`, userID).Scan(&email)
			if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
				return err
			}
			if email != "" && email != quire.NotifyEmailInstant {
				continue
			}
			p := sqlstore.Params{}
			ns, err := s.mailable(ctx, q, userID, `n.id IN `+p.In(claimed...), len(claimed), p...)
			if err != nil {
				return err
			}
			if len(ns) > 0 {
				if err := s.send(ctx, q, m, userID, false, ns); err != nil {
					return err
				}
				sent++
			}
		}
		return nil
	})
	if err != nil {
		return 0, s.E.Fail(ctx, "mail notifications", err)
	}
	if len(digests) == 0 {
		return sent, nil
	}
	err = s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		for _, d := range digests {
			at := m.DigestDue(d.timezone)
			n, err := q.Exec(ctx, `UPDATE notification_settings SET digest_sent_at = ? WHERE user_id = ? AND email = 'digest'
				AND (`+s.D.None("digest_sent_at")+` OR digest_sent_at < ?)`, s.D.Time(now), d.userID, s.D.Time(at))
			if err != nil {
				return err
			}
			if n == 0 {
				continue // another node sent it
			}
			ns, err := s.mailable(ctx, q, d.userID, `1 = 1`, quire.MaxDigest)
			if err != nil {
				return err
			}
			if len(ns) > 0 {
				if err := s.send(ctx, q, m, d.userID, true, ns); err != nil {
					return err
				}
				sent++
			}
		}
		return nil
	})
	if err != nil {
		return sent, s.E.Fail(ctx, "mail digests", err)
	}
	return sent, nil
}
