package sqlstore

import (
	"context"
	"fmt"
	"io"

	"quire"
)

var _ quire.AttachmentStore = (*Store)(nil)

// attachmentColumns read an attachment (alias a) and its creator's name.
const attachmentColumns = `a.id, a.document_id, a.name, a.content_type, a.size, a.sha256, a.created_at, a.created_by,
	COALESCE((SELECT u.name FROM users u WHERE u.id = a.created_by), '')`

func scanAttachment(scan func(dest ...any) error) (quire.Attachment, error) {
	var a quire.Attachment
	err := scan(&a.ID, &a.DocumentID, &a.Name, &a.ContentType, &a.Size, &a.SHA256, T(&a.CreatedAt), &a.CreatedByID,
		&a.CreatedByName)
	return a, err
}

// liveDocument checks, in q, that vis sees the document id outside the
// trash (ENOTFOUND); lock is appended to the query.
func (s *Store) liveDocument(ctx context.Context, q Q, vis quire.Visibility, id, lock string) error {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return NotFound("document")
	}
	p := Params{id}
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM documents d WHERE d.id = ? AND `+s.d.None("d.deleted_at")+` AND `+
		s.d.DocsVisible(vis, &p, false)+lock, p...).Scan(&one)
	return Found(err, "document")
}

// CreateAttachment writes the file in one transaction, one statement per
// chunk, reading r (a file the caller spooled, so never a slow client):
// the transaction lasts as long as writing the bytes takes, and in SQLite
// the other writes wait for it. In PostgreSQL the document's key-share
// lock keeps a purge from deleting it before the transaction ends.
func (s *Store) CreateAttachment(ctx context.Context, vis quire.Visibility, a *quire.Attachment, r io.Reader) error {
	if a.ID == "" {
		a.ID = NewID()
	}
	a.CreatedAt = Micro(a.CreatedAt)
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		if err := s.liveDocument(ctx, q, vis, a.DocumentID, s.d.Locked(` FOR KEY SHARE OF d`)); err != nil {
			return err
		}
		if err := q.QueryRow(ctx, `SELECT name FROM users WHERE id = ?`, a.CreatedByID).Scan(&a.CreatedByName); err != nil {
			return fmt.Errorf("creator: %w", err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO attachments
			(id, document_id, name, content_type, size, sha256, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.DocumentID, a.Name, a.ContentType, a.Size, a.SHA256, s.d.Time(a.CreatedAt), a.CreatedByID); err != nil {
			return err
		}
		err := quire.EachChunk(r, a.Size, func(n int, chunk []byte) error {
			_, err := q.Exec(ctx, `INSERT INTO attachment_chunks (attachment_id, n, data) VALUES (?, ?, ?)`, a.ID, n, chunk)
			return err
		})
		if err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, a)
	})
	return s.e.Fail(ctx, "create attachment", err)
}

// Attachments reads the document's check and its list in one snapshot, so
// that they agree.
func (s *Store) Attachments(ctx context.Context, vis quire.Visibility, documentID string) ([]quire.Attachment, error) {
	var out []quire.Attachment
	err := s.e.Snapshot(ctx, func(q Q) error {
		if err := s.liveDocument(ctx, q, vis, documentID, ""); err != nil {
			return err
		}
		var err error
		out, err = Collect(ctx, q, scanAttachment, `SELECT `+attachmentColumns+` FROM attachments a
			WHERE a.document_id = ? ORDER BY a.created_at, a.id`, documentID)
		return err
	})
	if err != nil {
		return nil, s.e.Fail(ctx, "list attachments", err)
	}
	if out == nil {
		out = []quire.Attachment{}
	}
	return out, nil
}

func (s *Store) Attachment(ctx context.Context, vis quire.Visibility, id string) (*quire.Attachment, error) {
	a, err := s.getAttachment(ctx, s.e.Read(), vis, id, "")
	return a, s.e.Fail(ctx, "read attachment", err)
}

// getAttachment reads one attachment of a live document vis sees; lock is
// appended to the query.
func (s *Store) getAttachment(ctx context.Context, q Q, vis quire.Visibility, id, lock string) (*quire.Attachment, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("attachment")
	}
	p := Params{id}
	a, err := scanAttachment(q.QueryRow(ctx, `SELECT `+attachmentColumns+` FROM attachments a
		JOIN documents d ON d.id = a.document_id WHERE a.id = ? AND `+s.d.None("d.deleted_at")+` AND `+
		s.d.DocsVisible(vis, &p, false)+lock, p...).Scan)
	if err != nil {
		return nil, Found(err, "attachment")
	}
	return &a, nil
}

// AttachmentChunk appends the chunk's bytes to buf[:0] straight from the
// driver's memory (chunkDest): a download of many chunks allocates none.
func (s *Store) AttachmentChunk(ctx context.Context, vis quire.Visibility, id string, n int, buf []byte) ([]byte, error) {
	if HasNUL(id, vis.UserID, vis.DepartmentID) {
		return nil, NotFound("attachment")
	}
	p := Params{id, n}
	dest := chunkDest{buf: buf[:0]}
	err := s.e.Read().QueryRow(ctx, `SELECT c.data FROM attachment_chunks c
		JOIN attachments a ON a.id = c.attachment_id JOIN documents d ON d.id = a.document_id
		WHERE c.attachment_id = ? AND c.n = ? AND `+s.d.None("d.deleted_at")+` AND `+s.d.DocsVisible(vis, &p, false), p...).Scan(&dest)
	if err != nil {
		return nil, s.e.Fail(ctx, "read attachment chunk", Found(err, "attachment"))
	}
	return dest.buf, nil
}

// chunkDest is a scan destination that copies a column's bytes into buf
// during the scan, while the driver's memory is valid: database/sql calls
// Scan, pgx ScanBytes.
type chunkDest struct{ buf []byte }

func (c *chunkDest) ScanBytes(b []byte) error {
	c.buf = append(c.buf, b...)
	return nil
}

func (c *chunkDest) Scan(v any) error {
	if b, ok := v.([]byte); ok || v == nil {
		return c.ScanBytes(b)
	}
	return fmt.Errorf("attachment chunk: unexpected %T", v)
}

// DeleteAttachment reads the attachment under its row lock (PostgreSQL)
// and deletes it with its chunks (ON DELETE CASCADE).
func (s *Store) DeleteAttachment(ctx context.Context, vis quire.Visibility, id string) (*quire.Attachment, error) {
	var a *quire.Attachment
	err := s.e.Write(ctx, func(ctx context.Context, q Q) error {
		var err error
		if a, err = s.getAttachment(ctx, q, vis, id, s.d.Locked(` FOR UPDATE OF a`)); err != nil {
			return err
		}
		if err := One(ctx, q, "attachment", `DELETE FROM attachments WHERE id = ?`, id); err != nil {
			return err
		}
		return s.keepAnswer(ctx, q, nil)
	})
	if err != nil {
		return nil, s.e.Fail(ctx, "delete attachment", err)
	}
	return a, nil
}
