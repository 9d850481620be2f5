package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"quire"
)

var _ quire.AttachmentStore = (*DB)(nil)

// attachmentColumns read an attachment (alias a) and its creator's name.
const attachmentColumns = `a.id, a.document_id, a.name, a.content_type, a.size, a.sha256, a.created_at, a.created_by,
	COALESCE((SELECT u.name FROM users u WHERE u.id = a.created_by), '')`

func scanAttachment(scan func(dest ...any) error) (*quire.Attachment, error) {
	var (
		a  quire.Attachment
		at int64
	)
	if err := scan(&a.ID, &a.DocumentID, &a.Name, &a.ContentType, &a.Size, &a.SHA256, &at, &a.CreatedByID,
		&a.CreatedByName); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMicros(at)
	return &a, nil
}

// CreateAttachment writes the file in one transaction of the committer,
// reading r (a file the caller spooled, so never a slow client) chunk by
// chunk: the other writes wait for it, as long as writing its bytes takes.
func (db *DB) CreateAttachment(ctx context.Context, vis quire.Visibility, a *quire.Attachment, r io.Reader) error {
	if a.ID == "" {
		a.ID = newID()
	}
	return db.tx(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := cachedQuerier{c: db.writes, tx: sqlTx}
		cond, args := visible(vis)
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM documents d WHERE d.id = ? AND `+live+` AND `+cond,
			append([]any{a.DocumentID}, args...)...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("document")
		}
		if err != nil {
			return fmt.Errorf("create attachment: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, a.CreatedByID).Scan(&a.CreatedByName); err != nil {
			return fmt.Errorf("create attachment: creator: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO attachments
			(id, document_id, name, content_type, size, sha256, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.DocumentID, a.Name, a.ContentType, a.Size, a.SHA256, toMicros(a.CreatedAt), a.CreatedByID); err != nil {
			return fmt.Errorf("create attachment: %w", err)
		}
		err = quire.EachChunk(r, a.Size, func(n int, chunk []byte) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO attachment_chunks (attachment_id, n, data) VALUES (?, ?, ?)`, a.ID, n, chunk)
			return err
		})
		if err != nil {
			return fmt.Errorf("create attachment: %w", err)
		}
		return db.keepAnswer(ctx, tx, a)
	})
}

func (db *DB) Attachments(ctx context.Context, vis quire.Visibility, documentID string) ([]quire.Attachment, error) {
	q := cachedQuerier{c: db.reads}
	cond, args := visible(vis)
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM documents d WHERE d.id = ? AND `+live+` AND `+cond,
		append([]any{documentID}, args...)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("document")
	}
	if err != nil {
		return nil, fmt.Errorf("list attachments: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+attachmentColumns+` FROM attachments a
		WHERE a.document_id = ? ORDER BY a.created_at, a.id`, documentID)
	if err != nil {
		return nil, fmt.Errorf("list attachments: %w", err)
	}
	defer rows.Close()
	out := []quire.Attachment{}
	for rows.Next() {
		a, err := scanAttachment(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("list attachments: %w", err)
		}
		out = append(out, *a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list attachments: %w", err)
	}
	return out, nil
}

func (db *DB) Attachment(ctx context.Context, vis quire.Visibility, id string) (*quire.Attachment, error) {
	return getAttachment(ctx, cachedQuerier{c: db.reads}, vis, id)
}

// getAttachment reads one attachment of a live document vis sees.
func getAttachment(ctx context.Context, q docQuerier, vis quire.Visibility, id string) (*quire.Attachment, error) {
	cond, args := visible(vis)
	a, err := scanAttachment(q.QueryRowContext(ctx, `SELECT `+attachmentColumns+` FROM attachments a
		JOIN documents d ON d.id = a.document_id WHERE a.id = ? AND `+live+` AND `+cond,
		append([]any{id}, args...)...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("attachment")
	}
	if err != nil {
		return nil, fmt.Errorf("read attachment %s: %w", id, err)
	}
	return a, nil
}

func (db *DB) AttachmentChunk(ctx context.Context, vis quire.Visibility, id string, n int, buf []byte) ([]byte, error) {
	cond, args := visible(vis)
	rows, err := cachedQuerier{c: db.reads}.QueryContext(ctx, `SELECT c.data FROM attachment_chunks c
		JOIN attachments a ON a.id = c.attachment_id JOIN documents d ON d.id = a.document_id
		WHERE c.attachment_id = ? AND c.n = ? AND `+live+` AND `+cond, append([]any{id, n}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read attachment %s chunk %d: %w", id, n, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read attachment %s chunk %d: %w", id, n, err)
		}
		return nil, notFound("attachment")
	}
	var data sql.RawBytes
	if err := rows.Scan(&data); err != nil {
		return nil, fmt.Errorf("read attachment %s chunk %d: %w", id, n, err)
	}
	return append(buf[:0], data...), nil
}

func (db *DB) DeleteAttachment(ctx context.Context, vis quire.Visibility, id string) (*quire.Attachment, error) {
	var a *quire.Attachment
	err := db.tx(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := cachedQuerier{c: db.writes, tx: sqlTx}
		var err error
		if a, err = getAttachment(ctx, tx, vis, id); err != nil {
			return err
		}
		if err := updateOne(ctx, tx, "attachment", `DELETE FROM attachments WHERE id = ?`, id); err != nil {
			return err
		}
		return db.keepAnswer(ctx, tx, nil)
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}
