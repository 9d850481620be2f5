package postgres

import (
	"context"
	"errors"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"quire"
)

var _ quire.AttachmentStore = (*DB)(nil)

// attachmentColumns read an attachment (alias a) and its creator's name.
const attachmentColumns = `a.id, a.document_id, a.name, a.content_type, a.size, a.sha256, a.created_at, a.created_by,
	COALESCE((SELECT u.name FROM users u WHERE u.id = a.created_by), '')`

func scanAttachment(scan func(dest ...any) error) (*quire.Attachment, error) {
	var a quire.Attachment
	if err := scan(&a.ID, &a.DocumentID, &a.Name, &a.ContentType, &a.Size, &a.SHA256, &a.CreatedAt, &a.CreatedByID,
		&a.CreatedByName); err != nil {
		return nil, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return &a, nil
}

// liveDocument checks, in q, that vis sees the document id outside the
// trash (ENOTFOUND). In a transaction it holds the row's key-share lock,
// so a purge cannot delete it before the transaction ends.
func liveDocument(ctx context.Context, q querier, vis quire.Visibility, id string, lock string) error {
	p := params{id}
	cond := visible(vis, &p)
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM documents d WHERE d.id = $1 AND `+live+` AND `+cond+lock, p...).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("document")
	}
	return err
}

// CreateAttachment writes the file in one transaction, one statement per
// chunk, reading r (a file the caller spooled, so never a slow client):
// the transaction lasts as long as writing the bytes takes.
func (db *DB) CreateAttachment(ctx context.Context, vis quire.Visibility, a *quire.Attachment, r io.Reader) error {
	if hasNUL(a.DocumentID, vis.UserID, vis.DepartmentID) {
		return notFound("document")
	}
	if a.ID == "" {
		a.ID = newID()
	}
	a.CreatedAt = micro(a.CreatedAt)
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := liveDocument(ctx, tx, vis, a.DocumentID, ` FOR KEY SHARE OF d`); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT name FROM users WHERE id = $1`, a.CreatedByID).Scan(&a.CreatedByName); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO attachments
			(id, document_id, name, content_type, size, sha256, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			a.ID, a.DocumentID, a.Name, a.ContentType, a.Size, a.SHA256, a.CreatedAt, a.CreatedByID); err != nil {
			return err
		}
		err := quire.EachChunk(r, a.Size, func(n int, chunk []byte) error {
			_, err := tx.Exec(ctx, `INSERT INTO attachment_chunks (attachment_id, n, data) VALUES ($1, $2, $3)`, a.ID, n, chunk)
			return err
		})
		if err != nil {
			return err
		}
		return keepAnswer(ctx, tx, a)
	})
	return db.fail(ctx, "create attachment", err)
}

func (db *DB) Attachments(ctx context.Context, vis quire.Visibility, documentID string) ([]quire.Attachment, error) {
	if hasNUL(documentID, vis.UserID, vis.DepartmentID) {
		return nil, notFound("document")
	}
	out := []quire.Attachment{}
	// One snapshot: the document's check and its list agree.
	err := db.snapshot(ctx, func(tx pgx.Tx) error {
		if err := liveDocument(ctx, tx, vis, documentID, ""); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+attachmentColumns+` FROM attachments a
			WHERE a.document_id = $1 ORDER BY a.created_at, a.id`, documentID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanAttachment(rows.Scan)
			if err != nil {
				return err
			}
			out = append(out, *a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, db.fail(ctx, "list attachments", err)
	}
	return out, nil
}

func (db *DB) Attachment(ctx context.Context, vis quire.Visibility, id string) (*quire.Attachment, error) {
	a, err := getAttachment(ctx, db.pool, vis, id, "")
	return a, db.fail(ctx, "read attachment", err)
}

// getAttachment reads one attachment of a live document vis sees; lock is
// appended to the query.
func getAttachment(ctx context.Context, q querier, vis quire.Visibility, id, lock string) (*quire.Attachment, error) {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, notFound("attachment")
	}
	p := params{id}
	cond := visible(vis, &p)
	a, err := scanAttachment(q.QueryRow(ctx, `SELECT `+attachmentColumns+` FROM attachments a
		JOIN documents d ON d.id = a.document_id WHERE a.id = $1 AND `+live+` AND `+cond+lock, p...).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("attachment")
	}
	return a, err
}

func (db *DB) AttachmentChunk(ctx context.Context, vis quire.Visibility, id string, n int, buf []byte) ([]byte, error) {
	if hasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, notFound("attachment")
	}
	p := params{id, n}
	cond := visible(vis, &p)
	rows, err := db.pool.Query(ctx, `SELECT c.data FROM attachment_chunks c
		JOIN attachments a ON a.id = c.attachment_id JOIN documents d ON d.id = a.document_id
		WHERE c.attachment_id = $1 AND c.n = $2 AND `+live+` AND `+cond, p...)
	if err != nil {
		return nil, db.fail(ctx, "read attachment chunk", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, db.fail(ctx, "read attachment chunk", err)
		}
		return nil, notFound("attachment")
	}
	// DriverBytes are pgx's buffer, valid until the rows end: copied into
	// the caller's.
	var data pgtype.DriverBytes
	if err := rows.Scan(&data); err != nil {
		return nil, db.fail(ctx, "read attachment chunk", err)
	}
	buf = append(buf[:0], data...)
	rows.Close()
	return buf, db.fail(ctx, "read attachment chunk", rows.Err())
}

func (db *DB) DeleteAttachment(ctx context.Context, vis quire.Visibility, id string) (*quire.Attachment, error) {
	var a *quire.Attachment
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if a, err = getAttachment(ctx, tx, vis, id, ` FOR UPDATE OF a`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM attachments WHERE id = $1`, id); err != nil {
			return err
		}
		return keepAnswer(ctx, tx, nil)
	})
	if err != nil {
		return nil, db.fail(ctx, "delete attachment", err)
	}
	return a, nil
}
