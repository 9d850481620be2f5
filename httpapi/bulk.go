package httpapi

import (
	"encoding/json"
	"net/http"

	"quire"
	"quire/documents"
)

// bulkPath changes the visibility, status or folder of a selection of
// documents (documents.Service.Bulk).
const bulkPath = "/api/documentation/documents/bulk"

// handleDocumentBulk applies one change to up to documents.MaxBulk documents,
// each as a single update would, and answers 200 with a result per id:
//
//	{"results": [{"id", "result", "document"?, "error"?}], "updated", "unchanged", "failed"}
//
// result is updated, unchanged (it already had those values), not_found
// (unknown, in the trash, or not visible: one answer for all), invalid
// (the change does not fit that document) or forbidden; document is the
// state after, without content (a list's DOCUMENT); error is in the
// contract's error shape. What is wrong whatever the document is one 400
// for the whole request, and nothing is changed.
func handleDocumentBulk(d *documents.Service) authedFunc {
	type request struct {
		IDs          json.RawMessage `json:"ids"`
		Status       json.RawMessage `json:"status"`
		Visibility   json.RawMessage `json:"visibility"`
		FolderID     json.RawMessage `json:"folder_id"`
		DepartmentID json.RawMessage `json:"department_id"`
		ProjectID    json.RawMessage `json:"project_id"`
		// The spellings of the list's query parameters: a body that
		// uses them would otherwise see its change silently ignored.
		FolderIDQuery     json.RawMessage `json:"folderId"`
		DepartmentIDQuery json.RawMessage `json:"departmentId"`
		ProjectIDQuery    json.RawMessage `json:"projectId"`
	}
	type result struct {
		ID       string     `json:"id"`
		Result   string     `json:"result"`
		Document any        `json:"document,omitempty"`
		Error    *errorBody `json:"error,omitempty"`
	}
	type response struct {
		Results   []result `json:"results"`
		Updated   int      `json:"updated"`
		Unchanged int      `json:"unchanged"`
		Failed    int      `json:"failed"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := documents.Require(a, quire.LevelWrite); err != nil {
			return err
		}
		body, err := decode[request](w, r)
		if err != nil {
			return err
		}
		errs := map[string]string{}
		const str = "a string"
		in := documents.BulkInput{
			Status:       field[string](body.Status, "status", str, errs),
			Visibility:   field[string](body.Visibility, "visibility", str, errs),
			FolderID:     field[string](body.FolderID, "folder_id", str, errs),
			DepartmentID: field[string](body.DepartmentID, "department_id", str, errs),
			ProjectID:    field[string](body.ProjectID, "project_id", str, errs),
			Invalid:      errs,
		}
		for _, m := range []struct {
			raw        json.RawMessage
			name, want string
		}{{body.FolderIDQuery, "folderId", "folder_id"}, {body.DepartmentIDQuery, "departmentId", "department_id"},
			{body.ProjectIDQuery, "projectId", "project_id"}} {
			if m.raw != nil {
				errs[m.name] = "is spelled " + m.want + " in a body, as in a document's"
			}
		}
		ids := field[[]*string](body.IDs, "ids", "an array of strings", errs)
		if ids.Null {
			errs["ids"] = "must be an array of strings"
		}
		if ids.Set && !ids.Null {
			in.IDs = make([]string, 0, len(ids.Value))
			for _, id := range ids.Value {
				if id == nil {
					errs["ids"] = "must be an array of strings"
					in.IDs = nil
					break
				}
				in.IDs = append(in.IDs, *id)
			}
		}
		results, err := d.Bulk(r.Context(), a, in)
		if err != nil {
			return err
		}
		out := response{Results: make([]result, len(results))}
		for i, res := range results {
			out.Results[i] = result{ID: res.ID, Result: res.Result}
			switch {
			case res.Document != nil:
				out.Results[i].Document = documentJSON(res.Document, false)
			case res.Err != nil:
				out.Results[i].Error = &errorBody{Code: res.Err.Code, Message: res.Err.Message, Fields: res.Err.Fields}
			}
			switch res.Result {
			case documents.BulkUpdated:
				out.Updated++
			case documents.BulkUnchanged:
				out.Unchanged++
			default:
				out.Failed++
			}
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

// handleOnlyPost answers the methods of a POST-only path that a wider
// pattern would otherwise take (GET .../documents/{id} would answer
// GET .../documents/bulk with 404): 405 with Allow, as the mux answers.
func handleOnlyPost() apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", "POST")
		return quire.Errorf(quire.EMETHODNOTALLOWED, "Method %s is not allowed here", r.Method)
	}
}
