package documents

import (
	"context"
	"errors"
	"strconv"
	"time"

	"quire"
)

// MaxBulk is the most ids one bulk change may name.
const MaxBulk = 100

// BulkInput is one change of visibility, status or folder (with the
// department or project a visibility needs) for a selection of documents.
// The fields read as in an update (DocumentInput): absent leaves the field
// as it is; null or "" moves a document out of its folder.
type BulkInput struct {
	IDs          []string
	Status       Field[string]
	Visibility   Field[string]
	FolderID     Field[string]
	DepartmentID Field[string]
	ProjectID    Field[string]

	// Invalid carries failures found while reading the input, as in
	// DocumentInput.
	Invalid map[string]string
}

// The results of one document of a bulk change.
const (
	BulkUpdated   = "updated"   // changed: a version and a document.updated event recorded
	BulkUnchanged = "unchanged" // it already had those values: nothing recorded
	BulkNotFound  = "not_found" // unknown, malformed, in the trash, or not visible to the caller
	BulkInvalid   = "invalid"   // the change does not fit this document (VALIDATION_ERROR)
	BulkForbidden = "forbidden" // visible to the caller but not writable by it
)

// BulkResult is what a bulk change did to one id: Document (the state
// after) when updated or unchanged, Err (the refusal, as a single update
// would answer it) otherwise.
type BulkResult struct {
	ID       string
	Result   string
	Document *quire.Document
	Err      *quire.Error
}

// Bulk applies in to each document it names, one after the other, each
// through Update exactly as a single update without a guard: the role's
// write level, the document's visibility, the same validation, a version
// and a document.updated event (and so its webhooks) per document changed,
// and nothing for a document already so.
//
// It is per document, not all-or-nothing: each document is saved in a
// transaction of its own and the results say, per id and in the order
// given (a repeated id counts once), what happened. What is wrong whatever
// the document (no change named, more than MaxBulk ids, a status or
// visibility that is not one, a folder that does not exist) refuses the
// whole call with VALIDATION_ERROR before anything is written. A document
// the caller may not see is not_found, exactly as an unknown id. An error
// that is not a refusal (the database) stops the call and is returned: the
// documents before it stay changed, and running the same change again
// completes it (a document already changed is unchanged).
func (s *Service) Bulk(ctx context.Context, a quire.Actor, in BulkInput) ([]BulkResult, error) {
	if err := require(a, quire.LevelWrite); err != nil {
		return nil, err
	}
	errs := fieldErrors{}
	for k, v := range in.Invalid {
		errs.add(k, v)
	}
	switch {
	case in.IDs == nil && errs["ids"] == "":
		errs.add("ids", "is required")
	case len(in.IDs) == 0 && errs["ids"] == "":
		errs.add("ids", "must hold at least one id")
	case len(in.IDs) > MaxBulk:
		errs.add("ids", "must hold at most "+strconv.Itoa(MaxBulk)+" ids")
	}
	if !in.Status.Set && !in.Visibility.Set && !in.FolderID.Set && !in.DepartmentID.Set && !in.ProjectID.Set &&
		len(in.Invalid) == 0 {
		errs.add("body", "must change at least one of status, visibility, folder_id, department_id, project_id")
	}
	for _, f := range []struct {
		name    string
		v       Field[string]
		allowed []string
	}{{"status", in.Status, quire.Statuses}, {"visibility", in.Visibility, quire.Visibilities}} {
		if f.v.Set && f.v.Null {
			errs.add(f.name, msgNotNull)
		} else if f.v.Set {
			oneOf(errs, f.name, f.v.Value, f.allowed)
		}
	}
	for _, f := range []struct {
		name string
		v    Field[string]
	}{{"department_id", in.DepartmentID}, {"project_id", in.ProjectID}} {
		if id, _ := idField(f.v); f.v.Set && id == "" {
			errs.add(f.name, msgNotNull)
		}
	}
	patch := DocumentInput{Status: in.Status, Visibility: in.Visibility, FolderID: in.FolderID,
		DepartmentID: in.DepartmentID, ProjectID: in.ProjectID}
	if id, ok := idField(in.FolderID); id != "" {
		r, err := s.checkRefs(ctx, a, DocumentInput{FolderID: in.FolderID})
		if err != nil {
			return nil, err
		}
		if !ok || !r.folderOK {
			errs.add("folder_id", msgNoFolder)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}

	seen := make(map[string]bool, len(in.IDs))
	out := make([]BulkResult, 0, len(in.IDs))
	for _, id := range in.IDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		res, err := s.bulkOne(ctx, a, id, patch)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// bulkOne applies patch to the document id for Bulk.
func (s *Service) bulkOne(ctx context.Context, a quire.Actor, id string, patch DocumentInput) (BulkResult, error) {
	if err := ctx.Err(); err != nil {
		return BulkResult{}, err
	}
	res := BulkResult{ID: id}
	if !validID(id) {
		res.Result, res.Err = BulkNotFound, bulkNotFound()
		return res, nil
	}
	// Read first to tell a save from a save that changes nothing: Update
	// answers both with the document.
	before, err := s.store.Document(ctx, visibility(a), id)
	if err == nil {
		var doc *quire.Document
		doc, err = Writer{s: s, a: a}.Update(ctx, id, patch, time.Time{}) // Bulk checked the level
		if err == nil {
			res.Result, res.Document = BulkUpdated, doc
			if doc.Version == before.Version {
				res.Result = BulkUnchanged
			}
			return res, nil
		}
	}
	var e *quire.Error
	ok := errors.As(err, &e)
	switch {
	case ok && e.Code == quire.ENOTFOUND:
		// The same answer for every document the caller cannot see.
		res.Result, res.Err = BulkNotFound, bulkNotFound()
	case ok && e.Code == quire.EVALIDATION:
		res.Result, res.Err = BulkInvalid, e
	case ok && e.Code == quire.EFORBIDDEN:
		res.Result, res.Err = BulkForbidden, e
	default:
		return BulkResult{}, err
	}
	return res, nil
}

// bulkNotFound is the one answer for an id whose document the caller
// cannot see, whatever the reason.
func bulkNotFound() *quire.Error {
	return &quire.Error{Code: quire.ENOTFOUND, Message: "Document not found"}
}
