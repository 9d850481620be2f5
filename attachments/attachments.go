// Package attachments holds the rules of files attached to documents
// (product.md section 13): who may upload, list, read and delete them (a
// file is seen exactly as its document, through the same quire.Visibility
// in every query), how large one may be, what its type is (sniffed from
// its bytes, never believed from the client), what its name may hold, and
// how it is served (images inline, everything else as a download).
//
// A file is spooled to a temporary file while it is received, hashed and
// sniffed on the way, and written to the store in one short transaction
// afterwards, chunk by chunk; a download reads one chunk per query. So
// neither direction holds a whole file in memory, and a slow client never
// holds a database connection for the length of its transfer.
package attachments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"quire"
	"quire/documents"
	"quire/wire"
)

// DefaultMaxUpload is the largest file accepted when Config.MaxUpload is 0.
const DefaultMaxUpload = 25 << 20

// MaxNameBytes bounds a file's name (in bytes of UTF-8).
const MaxNameBytes = 255

// Store is what the Service needs from persistence.
type Store interface {
	quire.AttachmentStore
}

// Recorded is what the Service changes with an audit event, on the store
// Recording returns (quire.Recorder).
type Recorded interface {
	quire.AttachmentStore
	// Keeping is quire.IdempotencyStore's.
	Keeping(k *quire.Keep) quire.Store
}

// Config configures a Service.
type Config struct {
	MaxUpload int64            // bytes of one file; DefaultMaxUpload when 0
	TempDir   string           // where uploads are spooled; os.TempDir() when ""
	Now       func() time.Time // time.Now when nil
}

// Service applies the rules of files over a Store.
type Service struct {
	store     Store
	recording func(evs ...*quire.Event) Recorded
	cfg       Config
	// keep is the idempotency of the one change of a Service Keeping
	// returned; nil for every other.
	keep *quire.Keep
}

// New returns a Service over store; quire.Store is one, with S = quire.Store.
func New[S Recorded](store interface {
	Store
	quire.Recorder[S]
}, cfg Config) *Service {
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	recording := func(evs ...*quire.Event) Recorded { return store.Recording(evs...) }
	return &Service{store: store, recording: recording, cfg: cfg}
}

// Keeping returns the Service whose change keeps k's answer in the
// change's own transaction (quire.IdempotencyStore.Keeping): a request
// holding an idempotency key makes one change through it. A nil k: s.
func (s *Service) Keeping(k *quire.Keep) *Service {
	return quire.WithKeep(s, k, func(c *Service) **quire.Keep { return &c.keep })
}

// writes is the store a change is written to: recording evs, keeping the
// answer of s.keep when there is one.
func (s *Service) writes(evs ...*quire.Event) quire.AttachmentStore {
	return s.recording(evs...).Keeping(s.keep)
}

// MaxUpload is the largest file accepted, in bytes.
func (s *Service) MaxUpload() int64 { return s.cfg.MaxUpload }

func attachmentNotFound() error { return quire.Errorf(quire.ENOTFOUND, "Attachment not found") }
func documentNotFound() error   { return quire.Errorf(quire.ENOTFOUND, "Document not found") }

// List returns the files of a document the actor can see, oldest first.
func (s *Service) List(ctx context.Context, a quire.Actor, documentID string) ([]quire.Attachment, error) {
	if err := documents.Require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if !documents.ValidID(documentID) {
		return nil, documentNotFound()
	}
	return s.store.Attachments(ctx, documents.VisibilityOf(a), documentID)
}

// CheckUpload answers, before a byte of the file is read, what Create
// would answer the actor for the document: NOT_FOUND for a document it
// cannot see or that is in the trash, FORBIDDEN without write. Past it the
// Uploader stores files without checking the level again.
func (s *Service) CheckUpload(ctx context.Context, a quire.Actor, documentID string) (Uploader, error) {
	if _, err := s.List(ctx, a, documentID); err != nil {
		return Uploader{}, err
	}
	if err := documents.Require(a, quire.LevelWrite); err != nil {
		return Uploader{}, err
	}
	return Uploader{s: s, a: a, documentID: documentID}, nil
}

// Get returns one file of a document the actor can see.
func (s *Service) Get(ctx context.Context, a quire.Actor, id string) (*quire.Attachment, error) {
	if err := documents.Require(a, quire.LevelView); err != nil {
		return nil, err
	}
	if !documents.ValidID(id) {
		return nil, attachmentNotFound()
	}
	return s.store.Attachment(ctx, documents.VisibilityOf(a), id)
}

// Uploader stores files on one document for an actor whose write level
// was checked once (CheckUpload, CreateWithID). The store still checks
// that the actor sees the document and that it is outside the trash, in
// the write's transaction.
type Uploader struct {
	s          *Service
	a          quire.Actor
	documentID string
}

// Keeping is Service.Keeping for the uploader's change.
func (up Uploader) Keeping(k *quire.Keep) Uploader {
	return Uploader{s: up.s.Keeping(k), a: up.a, documentID: up.documentID}
}

// Create is Service.Create for the uploader's actor and document.
func (up Uploader) Create(ctx context.Context, u *Upload) (*quire.Attachment, error) {
	return up.create(ctx, uuid.Must(uuid.NewV7()).String(), u)
}

// Create stores the spooled file u as an attachment of the document,
// recording attachment.created with it.
func (s *Service) Create(ctx context.Context, a quire.Actor, documentID string, u *Upload) (*quire.Attachment, error) {
	return s.CreateWithID(ctx, a, documentID, uuid.Must(uuid.NewV7()).String(), u)
}

// CreateWithID is Create under a given new attachment ID: an import links
// its documents to their files before it stores them.
func (s *Service) CreateWithID(ctx context.Context, a quire.Actor, documentID, id string, u *Upload) (*quire.Attachment, error) {
	if err := documents.Require(a, quire.LevelWrite); err != nil {
		return nil, err
	}
	return Uploader{s: s, a: a, documentID: documentID}.create(ctx, id, u)
}

// create stores u under id.
func (up Uploader) create(ctx context.Context, id string, u *Upload) (*quire.Attachment, error) {
	s, a, documentID := up.s, up.a, up.documentID
	if !documents.ValidID(documentID) {
		return nil, documentNotFound()
	}
	if _, err := u.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("create attachment: %w", err)
	}
	at := &quire.Attachment{
		ID: id, DocumentID: documentID, Name: u.Name, ContentType: u.ContentType,
		Size: u.Size, SHA256: u.SHA256, CreatedAt: s.now(), CreatedByID: a.User.ID,
	}
	ev := quire.NewEvent(quire.ActionAttachmentCreated, at.CreatedAt, quire.EventActorOf(a), a.Request).
		On(quire.TargetAttachment, at.ID, at.Name).
		With("documentId", documentID).With("size", at.Size).With("contentType", at.ContentType)
	if err := s.writes(ev).CreateAttachment(ctx, documents.VisibilityOf(a), at, u.file); err != nil {
		return nil, err
	}
	return at, nil
}

// Delete deletes a file of a document the actor can see; any writer who
// sees the document may, as any may delete the document.
func (s *Service) Delete(ctx context.Context, a quire.Actor, id string) error {
	if err := documents.Require(a, quire.LevelWrite); err != nil {
		return err
	}
	if !documents.ValidID(id) {
		return attachmentNotFound()
	}
	vis := documents.VisibilityOf(a)
	at, err := s.store.Attachment(ctx, vis, id)
	if err != nil {
		return err
	}
	ev := quire.NewEvent(quire.ActionAttachmentDeleted, s.now(), quire.EventActorOf(a), a.Request).
		On(quire.TargetAttachment, id, at.Name).With("documentId", at.DocumentID)
	_, err = s.writes(ev).DeleteAttachment(ctx, vis, id)
	return err
}

// Open returns the bytes of at (from Get) for the actor, read one chunk
// per query as they are read: a reader that seeks, for ranges. A file
// deleted, or a document trashed or hidden from the actor, while it is
// read ends the reading with NOT_FOUND.
func (s *Service) Open(ctx context.Context, a quire.Actor, at *quire.Attachment) io.ReadSeeker {
	return &chunkReader{ctx: ctx, store: s.store, vis: documents.VisibilityOf(a), id: at.ID, size: at.Size, n: -1}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// URL is where the bytes of the attachment id are served (the API's
// download route).
func URL(id string) string { return wire.AttachmentURL(id) }

// Upload is a file received and spooled to a temporary file: its name as
// cleaned, its sniffed type, size and SHA-256. Close removes it.
type Upload struct {
	Name        string
	ContentType string
	Size        int64
	SHA256      string
	file        *os.File
}

// Close removes the spooled file.
func (u *Upload) Close() error {
	return errors.Join(u.file.Close(), os.Remove(u.file.Name()))
}

// ErrTooLarge is the refusal of a file larger than the limit.
func (s *Service) ErrTooLarge() error {
	return quire.Errorf(quire.EPAYLOADTOOLARGE, "The file is larger than the limit of %s", FormatSize(s.cfg.MaxUpload))
}

// Spool reads the file from r to its end into a temporary file, hashing
// and sniffing it on the way, and refuses with PAYLOAD_TOO_LARGE a file of
// more than MaxUpload bytes (having read no more than one byte past it).
// name is the client's file name, cleaned by CleanName. The caller closes
// the Upload.
func (s *Service) Spool(r io.Reader, name string) (*Upload, error) {
	f, err := os.CreateTemp(s.cfg.TempDir, "quire-upload-*")
	if err != nil {
		return nil, fmt.Errorf("spool upload: %w", err)
	}
	u := &Upload{Name: CleanName(name), file: f}
	h := sha256.New()
	head := &headBuffer{max: sniffLen}
	n, err := io.Copy(io.MultiWriter(f, h, head), io.LimitReader(r, s.cfg.MaxUpload+1))
	if err == nil && n > s.cfg.MaxUpload {
		err = s.ErrTooLarge()
	}
	if err != nil {
		u.Close()
		return nil, err
	}
	u.Size, u.SHA256, u.ContentType = n, hex.EncodeToString(h.Sum(nil)), Sniff(head.b)
	return u, nil
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	b   []byte
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// CleanName makes a client's file name safe to keep and show: the last
// element of a path (either slash), without control or bidirectional
// formatting characters, invalid UTF-8 replaced, spaces trimmed, at most
// MaxNameBytes; "file" when nothing is left.
func CleanName(name string) string {
	name = strings.ToValidUTF8(name, "\uFFFD")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if len(name) > MaxNameBytes {
		cut := MaxNameBytes
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = strings.TrimSpace(name[:cut])
	}
	if name == "" || name == "." || name == ".." {
		return "file"
	}
	return name
}

// FormatSize writes a size in bytes for people: 512 B, 1.5 KiB, 25 MiB.
func FormatSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KiB"
	case n < 1<<30:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MiB"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<30))) + " GiB"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
