package documents

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"quire"
)

// event returns the audit event of a change by a to a document or folder
// (typ), to be written in the change's transaction (quire.AuditLog).
func event(action string, a quire.Actor, at time.Time, typ, id, name string) *quire.Event {
	return quire.NewEvent(action, at, quire.EventActorOf(a), a.Request).On(typ, id, name)
}

// newID is the id of a record the service creates, known before the write
// so that its event names it.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// changedFields names the fields of a document that differ between a and
// b, in the API's spelling, for document.updated (never their values).
func changedFields(a, b *quire.Document) []string {
	fields := []string{}
	add := func(name string, differ bool) {
		if differ {
			fields = append(fields, name)
		}
	}
	add("title", a.Title != b.Title)
	add("content", a.Content != b.Content)
	add("content_type", a.ContentType != b.ContentType)
	add("summary", a.Summary != b.Summary)
	add("status", a.Status != b.Status)
	add("visibility", a.Visibility != b.Visibility)
	add("tags", !slices.Equal(a.Tags, b.Tags))
	add("folder_id", a.FolderID != b.FolderID)
	add("department_id", a.DepartmentID != b.DepartmentID)
	add("project_id", a.ProjectID != b.ProjectID)
	return fields
}

// CLIUserID is the user id of the actor the admin CLI reads as (quire
// export sees every document as an administrator): no user has it, and
// what it does is recorded as the CLI's.
const CLIUserID = "cli"

// RecordExport records document.exported: a exported n documents, of
// folder and its subfolders when it is set. Never which documents nor
// what they say. The actor CLIUserID is the admin CLI's (no actor, "via":
// "cli"). complete is false when the export was cut midway.
func (s *Service) RecordExport(ctx context.Context, a quire.Actor, folder *quire.Folder, n int, complete bool) error {
	var ev *quire.Event
	if a.User.ID == CLIUserID {
		ev = quire.CLIEvent(quire.ActionDocumentExported, s.clock())
	} else {
		ev = quire.NewEvent(quire.ActionDocumentExported, s.clock(), quire.EventActorOf(a), a.Request)
	}
	ev.With("count", n)
	if folder != nil {
		ev.On(quire.TargetFolder, folder.ID, folder.Name).With("folderId", folder.ID)
	}
	if !complete {
		ev.With("complete", false)
	}
	return s.store.RecordEvent(ctx, ev)
}
