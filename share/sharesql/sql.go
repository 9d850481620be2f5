// Package sharesql is the store of share links, written once for SQLite
// and PostgreSQL on a sqlstore.Engine. Package share holds the rules.
package sharesql

import (
	"context"
	"errors"
	"sort"
	"time"

	"quire"
	"quire/sqlstore"
)

// shareColumns read a share (alias s) with its document's title and owner
// (alias doc) and its creator's name (alias cu).
const shareColumns = `s.id, s.document_id, doc.title, doc.owner_id, s.created_by, cu.name, s.token_hash, s.token_sealed,
	s.created_at, s.expires_at, s.views, s.last_viewed_at`

const shareFrom = ` FROM shares s JOIN documents doc ON doc.id = s.document_id JOIN users cu ON cu.id = s.created_by`

func scanShare(scan func(dest ...any) error, extra ...any) (quire.Share, error) {
	var sh quire.Share
	err := scan(append([]any{&sh.ID, &sh.DocumentID, &sh.DocumentTitle, &sh.OwnerID, &sh.CreatedByID, &sh.CreatedByName,
		&sh.TokenHash, &sh.TokenSealed, sqlstore.T(&sh.CreatedAt), sqlstore.T(&sh.ExpiresAt), &sh.Views,
		sqlstore.T(&sh.LastViewedAt)}, extra...)...)
	return sh, err
}

func (s *ShareSQL) CreateShare(ctx context.Context, vis quire.Visibility, sh *quire.Share, now time.Time) error {
	if sqlstore.HasNUL(sh.DocumentID, sh.CreatedByID, sh.ID, vis.UserID, vis.DepartmentID) {
		return sqlstore.NotFound("document")
	}
	id := sh.ID
	if id == "" {
		id = sqlstore.NewID()
	}
	now = sqlstore.Micro(now)
	quire.NameCreated(s.E.Events(), id)
	visible := sqlstore.Params{sh.DocumentID}
	live := `d.id = ? AND ` + s.D.None("d.deleted_at") + ` AND ` + s.D.DocsVisible(vis, &visible, false)
	p := sqlstore.Params{id, sh.DocumentID, sh.CreatedByID, sh.TokenHash, sh.TokenSealed, s.D.Time(now),
		s.D.Time(sqlstore.Micro(sh.ExpiresAt))}
	p = append(append(p, visible...), sh.DocumentID, quire.MaxSharesPerDocument, quire.MaxSharesPerDocument)
	// The document is checked in the insert itself: outside the trash,
	// visible, and with fewer than MaxSharesPerDocument shares (read by
	// their index, at most that many), or no row: NOT_FOUND, or
	// LIMIT_REACHED for a document the caller sees.
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		err := sqlstore.One(ctx, q, "document", `INSERT INTO shares (id, document_id, created_by, token_hash, token_sealed,
			created_at, expires_at) SELECT ?, ?, ?, ?, ?, ?, ? FROM documents d
			WHERE `+live+` AND (SELECT count(*) FROM (SELECT 1 FROM shares x WHERE x.document_id = ? LIMIT ?) x) < ?`, p...)
		if quire.ErrorCode(err) != quire.ENOTFOUND {
			return err
		}
		var one int
		switch err := q.QueryRow(ctx, `SELECT 1 FROM documents d WHERE `+live, visible...).Scan(&one); {
		case err == nil:
			return quire.Errorf(quire.ELIMITREACHED, "A document has at most %d share links: revoke one first", quire.MaxSharesPerDocument)
		case errors.Is(err, sqlstore.ErrNoRows):
			return sqlstore.NotFound("document")
		default:
			return err
		}
	})
	if err != nil {
		return s.E.Fail(ctx, "create share", err)
	}
	sh.ID, sh.CreatedAt, sh.ExpiresAt = id, now, sqlstore.Micro(sh.ExpiresAt)
	return nil
}

func (s *ShareSQL) DocumentShares(ctx context.Context, documentID, createdBy string) ([]quire.Share, error) {
	if sqlstore.HasNUL(documentID, createdBy) {
		return []quire.Share{}, nil
	}
	p := sqlstore.Params{documentID}
	where := ""
	if createdBy != "" {
		where = ` AND s.created_by = ` + p.Add(createdBy)
	}
	return sqlstore.List(ctx, s.E, "list shares", scanShareRow, `SELECT `+shareColumns+shareFrom+`
		WHERE s.document_id = ?`+where+` ORDER BY s.created_at, s.id`, p...)
}

func scanShareRow(scan func(dest ...any) error) (quire.Share, error) { return scanShare(scan) }

func (s *ShareSQL) ShareByID(ctx context.Context, id string) (*quire.Share, error) {
	if sqlstore.HasNUL(id) {
		return nil, sqlstore.NotFound("share")
	}
	sh, err := scanShare(s.E.Read().QueryRow(ctx, `SELECT `+shareColumns+shareFrom+` WHERE s.id = ?`, id).Scan)
	if err != nil {
		return nil, s.E.Fail(ctx, "read share", sqlstore.Found(err, "share"))
	}
	return &sh, nil
}

func (s *ShareSQL) DeleteShare(ctx context.Context, id string) error {
	return sqlstore.UpdateOne(ctx, s.E, "share", id, `DELETE FROM shares WHERE id = ?`, id)
}

func (s *ShareSQL) Shares(ctx context.Context, offset, limit int) ([]quire.Share, int, error) {
	var (
		out   []quire.Share
		total int
	)
	err := s.E.Snapshot(ctx, func(q sqlstore.Q) error {
		if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM shares`).Scan(&total); err != nil {
			return err
		}
		var err error
		out, err = sqlstore.Collect(ctx, q, scanShareRow, `SELECT `+shareColumns+shareFrom+`
			ORDER BY s.created_at DESC, s.id DESC LIMIT ? OFFSET ?`, limit, offset)
		return err
	})
	if err != nil {
		return nil, 0, s.E.Fail(ctx, "list shares", err)
	}
	if out == nil {
		out = []quire.Share{}
	}
	return out, total, nil
}

// working is the condition that a share (alias s, document doc, creator
// u) works at the time bound to its one placeholder.
func (s *ShareSQL) working() string {
	return s.D.None("doc.deleted_at") + ` AND (` + s.D.None("s.expires_at") + ` OR s.expires_at > ?)
		AND u.status = 'active'
		AND NOT EXISTS (SELECT 1 FROM settings st WHERE st.key = '` + quire.SettingSharing + `' AND st.value = 'off')`
}

// workingSelect reads a share and then its creator (alias u, whose joins
// name its department d).
const workingSelect = `SELECT ` + shareColumns + `, ` + sqlstore.UserColumns + shareFrom + `
	JOIN users u ON u.id = s.created_by ` + sqlstore.UserJoins

func (s *ShareSQL) WorkingShare(ctx context.Context, hash []byte, now time.Time) (*quire.Share, *quire.User, error) {
	var sh quire.Share
	u, err := sqlstore.ScanUser(func(dest ...any) error {
		var err error
		sh, err = scanShare(s.E.Read().QueryRow(ctx, workingSelect+` WHERE s.token_hash = ? AND `+s.working(),
			hash, s.D.Time(now)).Scan, dest...)
		return err
	})
	if err != nil {
		return nil, nil, s.E.Fail(ctx, "read share", sqlstore.Found(err, "share"))
	}
	return &sh, u, nil
}

func (s *ShareSQL) WorkingSharesOf(ctx context.Context, vis quire.Visibility, ids []string, now time.Time) ([]quire.Share, []quire.User, error) {
	var (
		shares []quire.Share
		users  []quire.User
	)
	if len(ids) == 0 || sqlstore.HasNUL(ids...) || sqlstore.HasNUL(vis.UserID, vis.DepartmentID) {
		return shares, users, nil
	}
	var p sqlstore.Params
	in := p.In(ids...)
	visible := s.D.DocsVisible(vis, &p, false)
	p = append(p, s.D.Time(now))
	// The first MaxSharesOf working shares of each document, numbered in
	// a subquery of the shares alone, so that a document with thousands
	// of them costs the few rows read past its index entries.
	first := `SELECT s.id FROM (SELECT s.id, ROW_NUMBER() OVER (PARTITION BY s.document_id ORDER BY s.created_at, s.id) AS n` +
		shareFrom + ` JOIN users u ON u.id = s.created_by
		WHERE s.document_id IN ` + in + ` AND EXISTS (SELECT 1 FROM documents d WHERE d.id = s.document_id AND ` + visible + `)
		AND ` + s.working() + `) s WHERE s.n <= ` + p.Add(quire.MaxSharesOf)
	err := sqlstore.Each(ctx, s.E.Read(), func(scan func(dest ...any) error) error {
		var sh quire.Share
		u, err := sqlstore.ScanUser(func(dest ...any) error {
			var err error
			sh, err = scanShare(scan, dest...)
			return err
		})
		if err != nil {
			return err
		}
		shares, users = append(shares, sh), append(users, *u)
		return nil
	}, workingSelect+` WHERE s.id IN (`+first+`) ORDER BY s.created_at, s.id`, p...)
	if err != nil {
		return nil, nil, s.E.Fail(ctx, "read shares", err)
	}
	return shares, users, nil
}

func (s *ShareSQL) AddShareViews(ctx context.Context, views map[string]quire.ShareViews) error {
	if len(views) == 0 {
		return nil
	}
	ids := make([]string, 0, len(views))
	for id := range views {
		if !sqlstore.HasNUL(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // one order of row locks for every node
	err := s.E.Write(ctx, func(ctx context.Context, q sqlstore.Q) error {
		for _, id := range ids {
			v := views[id]
			last := s.D.Time(sqlstore.Micro(v.Last))
			if _, err := q.Exec(ctx, `UPDATE shares SET views = views + ?,
				last_viewed_at = CASE WHEN `+s.D.None("last_viewed_at")+` OR last_viewed_at < ? THEN ? ELSE last_viewed_at END
				WHERE id = ?`, v.Count, last, last, id); err != nil {
				return err
			}
		}
		return nil
	})
	return s.E.Fail(ctx, "count share views", err)
}

// ShareSQL is quire.ShareStore written once for both engines, which embed
// it.
type ShareSQL struct{ sqlstore.Base }

// NewSQL returns the share store on e.
func NewSQL(e sqlstore.Engine) *ShareSQL { return &ShareSQL{sqlstore.NewBase(e)} }

var _ quire.ShareStore = (*ShareSQL)(nil)
