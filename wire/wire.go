// Package wire renders what a change answers on success: the JSON shapes
// of contract section 5 (DOCUMENT, a folder, an attachment, the message of
// a delete) with the headers that belong to them (ETag, Location). It is
// data to bytes, with no HTTP: package httpapi writes its live answers
// with it, and a store writes the kept answer of an idempotency key with
// it in the change's transaction (quire.Keep), so that a replay is the
// same bytes as the first answer.
package wire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"quire"
)

// timeLayout is RFC 3339 in UTC with exactly six fractional digits.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// Time renders a timestamp as the contract's wire form.
func Time(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(timeLayout) }

// Nullable is s, or null when s is "".
func Nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Person is {id, name}: a document's owner, a version's author.
type Person struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Document is DOCUMENT of contract section 5. Content is a pointer so that
// a list without includeContent leaves the key out.
type Document struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Content      *string  `json:"content,omitempty"`
	ContentType  string   `json:"content_type"`
	Summary      string   `json:"summary"`
	Status       string   `json:"status"`
	Visibility   string   `json:"visibility"`
	FolderID     *string  `json:"folder_id"`
	Tags         []string `json:"tags"`
	DepartmentID *string  `json:"department_id"`
	ProjectID    *string  `json:"project_id"`
	Owner        Person   `json:"owner"`
	Version      int      `json:"version"`
	CreatedAt    string   `json:"created_at"`
	UpdatedAt    string   `json:"updated_at"`
}

// DocumentOf renders d as DOCUMENT, with its content when withContent is
// set.
func DocumentOf(d *quire.Document, withContent bool) Document {
	out := Document{
		ID:           d.ID,
		Title:        d.Title,
		ContentType:  d.ContentType,
		Summary:      d.Summary,
		Status:       d.Status,
		Visibility:   d.Visibility,
		FolderID:     Nullable(d.FolderID),
		Tags:         d.Tags,
		DepartmentID: Nullable(d.DepartmentID),
		ProjectID:    Nullable(d.ProjectID),
		Owner:        Person{ID: d.OwnerID, Name: d.OwnerName},
		Version:      d.Version,
		CreatedAt:    Time(d.CreatedAt),
		UpdatedAt:    Time(d.UpdatedAt),
	}
	if withContent {
		content := d.Content
		out.Content = &content
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	return out
}

// ETag is the strong validator of a document's current state: its version
// and its updated_at in microseconds. updated_at alone decides a match,
// since it strictly increases with every save. Every answer that carries
// one document's current state (read, create, update, restore) sends it,
// so that a client can chain guarded saves without reading again.
func ETag(d *quire.Document) string {
	return `"` + strconv.Itoa(d.Version) + "-" + strconv.FormatInt(d.UpdatedAt.UnixMicro(), 10) + `"`
}

// DocumentPath is where the document id is read.
func DocumentPath(id string) string { return "/api/documentation/documents/" + id }

// Folder is a folder; parent_id is null at the top.
type Folder struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	ParentID  *string `json:"parent_id"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt string  `json:"updated_at"`
}

// FolderOf renders f.
func FolderOf(f *quire.Folder) Folder {
	return Folder{
		ID:        f.ID,
		Name:      f.Name,
		ParentID:  Nullable(f.ParentID),
		CreatedAt: Time(f.CreatedAt),
		UpdatedAt: Time(f.UpdatedAt),
	}
}

// AttachmentURL is where the bytes of the attachment id are served.
func AttachmentURL(id string) string { return "/api/documentation/attachments/" + id + "/content" }

// Attachment is ATTACHMENT of product.md section 13.
type Attachment struct {
	ID          string `json:"id"`
	DocumentID  string `json:"documentId"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	CreatedAt   string `json:"createdAt"`
	CreatedBy   Person `json:"createdBy"`
	URL         string `json:"url"`
}

// AttachmentOf renders at.
func AttachmentOf(at *quire.Attachment) Attachment {
	return Attachment{
		ID: at.ID, DocumentID: at.DocumentID, Name: at.Name, ContentType: at.ContentType, Size: at.Size,
		SHA256: at.SHA256, CreatedAt: Time(at.CreatedAt),
		CreatedBy: Person{ID: at.CreatedByID, Name: at.CreatedByName}, URL: AttachmentURL(at.ID),
	}
}

// Answer renders the success answer r of a change from its result: the
// *quire.Document, *quire.Folder or *quire.Attachment written, nil for a
// delete. The body is JSON followed by a newline, as every answer of the
// API; a redirect of the pages has none.
func Answer(r quire.Reply, result any) (quire.IdempotentAnswer, error) {
	a := quire.IdempotentAnswer{Status: 200, Header: map[string]string{}}
	var body any
	switch kind := r.Kind; kind {
	case quire.ReplyCreatedDocument, quire.ReplySavedDocument:
		d, ok := result.(*quire.Document)
		if !ok || d == nil {
			return a, fmt.Errorf("answer of a document: result is %T", result)
		}
		if kind == quire.ReplyCreatedDocument {
			a.Status, a.Header["Location"] = 201, DocumentPath(d.ID)
		}
		a.Header["ETag"] = ETag(d)
		body = map[string]any{"document": DocumentOf(d, true)}
	case quire.ReplyCreatedFolder, quire.ReplySavedFolder:
		f, ok := result.(*quire.Folder)
		if !ok || f == nil {
			return a, fmt.Errorf("answer of a folder: result is %T", result)
		}
		if kind == quire.ReplyCreatedFolder {
			a.Status = 201
		}
		body = map[string]any{"folder": FolderOf(f)}
	case quire.ReplyCreatedAttachment:
		at, ok := result.(*quire.Attachment)
		if !ok || at == nil {
			return a, fmt.Errorf("answer of an attachment: result is %T", result)
		}
		a.Status, a.Header["Location"] = 201, AttachmentURL(at.ID)
		body = map[string]any{"attachment": AttachmentOf(at)}
	case quire.ReplyMessage:
		body = map[string]string{"message": r.Message}
	case quire.ReplySeeCreatedPage, quire.ReplySeeSavedPage:
		d, ok := result.(*quire.Document)
		if !ok || d == nil {
			return a, fmt.Errorf("answer of a page: result is %T", result)
		}
		m := "created"
		if kind == quire.ReplySeeSavedPage {
			m = "saved"
			if d.Version == r.Version {
				m = "unchanged"
			}
		}
		a.Status, a.Header["Location"] = 303, "/documents/"+d.ID+"?m="+m
		return a, nil
	default:
		return a, fmt.Errorf("answer of kind %d: unknown", kind)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return a, fmt.Errorf("encode answer: %w", err)
	}
	a.Body = append(b, '\n')
	return a, nil
}
