package quire

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Audit actions and target of files (product.md section 13).
const (
	ActionAttachmentCreated = "attachment.created"
	ActionAttachmentDeleted = "attachment.deleted"
	TargetAttachment        = "attachment"
)

// AttachmentChunkSize is the size of the rows a file is stored in: every
// chunk of a file but its last holds exactly this many bytes, so that byte
// n of a file is in chunk n / AttachmentChunkSize. A download reads one
// chunk per query, an upload writes one per statement: neither holds more
// of a file in memory.
const AttachmentChunkSize = 256 << 10

// Attachment is a file attached to a document. Its bytes never change:
// a file is uploaded once and deleted, never replaced.
type Attachment struct {
	ID          string
	DocumentID  string
	Name        string // as uploaded, cleaned (package attachments)
	ContentType string // sniffed from the bytes
	Size        int64
	SHA256      string // lower-case hex of the bytes
	CreatedAt   time.Time
	CreatedByID string
	// CreatedByName is filled by the store.
	CreatedByName string
}

// AttachmentStore keeps files in the database, in chunks of
// AttachmentChunkSize. An attachment is seen exactly as its document is:
// every method applies the Visibility it is given to the document in its
// queries, and an attachment of a document in the trash is ENOTFOUND
// everywhere (it comes back with a restore; a purge of the document
// deletes it).
type AttachmentStore interface {
	// CreateAttachment stores a (ID filled when "", CreatedByName filled)
	// with its a.Size bytes read from r, chunk by chunk, in one
	// transaction. ENOTFOUND when vis sees no document a.DocumentID
	// outside the trash; an error when r holds fewer or more bytes than
	// a.Size (nothing is written then).
	CreateAttachment(ctx context.Context, vis Visibility, a *Attachment, r io.Reader) error
	// Attachments lists the attachments of a document, oldest first (ties
	// by id). ENOTFOUND when vis sees no document id outside the trash.
	Attachments(ctx context.Context, vis Visibility, documentID string) ([]Attachment, error)
	// Attachment returns one attachment (ENOTFOUND).
	Attachment(ctx context.Context, vis Visibility, id string) (*Attachment, error)
	// AttachmentChunk appends chunk n (from 0) of the attachment id to
	// buf[:0] and returns it. ENOTFOUND when the attachment is gone or its
	// document is out of vis or in the trash, so a download stops there.
	AttachmentChunk(ctx context.Context, vis Visibility, id string, n int, buf []byte) ([]byte, error)
	// DeleteAttachment deletes one attachment with its bytes and returns
	// it as it was (ENOTFOUND).
	DeleteAttachment(ctx context.Context, vis Visibility, id string) (*Attachment, error)
}

// EachChunk reads r to its end in chunks of AttachmentChunkSize and calls
// fn with each (numbered from 0; the slice is reused), refusing r when it
// does not hold exactly size bytes. Both stores write a file through it.
func EachChunk(r io.Reader, size int64, fn func(n int, chunk []byte) error) error {
	buf := make([]byte, AttachmentChunkSize)
	var total int64
	for n := 0; ; n++ {
		k, err := io.ReadFull(r, buf)
		if k > 0 {
			total += int64(k)
			if total > size {
				return fmt.Errorf("attachment: more than the %d bytes announced", size)
			}
			if err := fn(n, buf[:k]); err != nil {
				return err
			}
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			if total != size {
				return fmt.Errorf("attachment: %d bytes, %d announced", total, size)
			}
			return nil
		case err != nil:
			return fmt.Errorf("attachment: read: %w", err)
		}
	}
}
