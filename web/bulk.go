package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"quire"
	"quire/documents"
)

// The bulk change of the documents list (issue 26): a checkbox per row
// and a small form (status, visibility, folder) posted to /documents/bulk,
// which applies the change through documents.Service.Bulk, document by
// document, and sends the reader back to the same list with what it did.
// It is a plain form: the checkboxes belong to it through their form
// attribute, so it works without JavaScript (static/bulk.js only adds
// "select all" and a count).

// folderNone is the folder choice that takes documents out of their
// folder; "" keeps each one's.
const folderNone = "none"

// bulkForm is what the list page needs to show the form and the outcome
// of the last bulk change.
type bulkForm struct {
	Key  string // the form's idempotency key
	Back string // the list's query, to come back to
	// The outcome, read from the address the change redirected to.
	Done                       bool
	Updated, Unchanged, Failed int
	Refused                    string // a fixed text when the change was refused whole
	// Invalid are the documents (the reader can see) that could not take
	// the change.
	Invalid []*quire.Document
}

// bulkRefusals are the texts shown for a change refused whole: only these
// fixed texts are shown, nothing from the URL is echoed.
var bulkRefusals = map[string]string{
	"empty":   "Nothing was changed: select at least one document, and choose a status, a visibility or a folder to apply.",
	"invalid": "Nothing was changed: the change could not be applied to this selection (more than 100 documents, or a folder deleted meanwhile). Choose again.",
}

// newBulkForm reads the outcome of a bulk change from the list's address
// (q, as sent) and makes the form of the page, whose list query is keep.
func (s *server) newBulkForm(ctx context.Context, d *documents.Service, a quire.Actor, q, keep url.Values) bulkForm {
	f := bulkForm{Key: newFormKey(), Back: keep.Encode()}
	switch q.Get("m") {
	case "bulk":
		f.Done = true
		f.Updated, f.Unchanged, f.Failed = bulkCount(q.Get("updated")), bulkCount(q.Get("unchanged")), bulkCount(q.Get("failed"))
		for i, id := range strings.Split(q.Get("invalid"), ",") {
			if i >= documents.MaxBulk {
				break
			}
			if !isID(id) {
				continue
			}
			if doc, err := d.Get(ctx, a, id); err == nil {
				f.Invalid = append(f.Invalid, doc)
			}
		}
	case "bulk-refused":
		f.Refused = bulkRefusals[q.Get("why")]
	}
	return f
}

// bulkCount reads a count of the outcome: 0 to MaxBulk, else 0.
func bulkCount(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > documents.MaxBulk {
		return 0
	}
	return n
}

// handleDocumentBulk applies the list's bulk form and redirects back to
// the list it came from, with the outcome in the address.
func handleDocumentBulk(s *server, d *documents.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := writeForm(r, a); err != nil {
			return err
		}
		back := url.Values{}
		if q, err := url.ParseQuery(r.PostForm.Get("back")); err == nil {
			for _, k := range listParams {
				if v := q.Get(k); v != "" {
					back.Set(k, v)
				}
			}
		}
		to := func(extra url.Values) string {
			q := url.Values{}
			for k, v := range back {
				q[k] = v
			}
			for k, v := range extra {
				q[k] = v
			}
			return "/documents?" + q.Encode()
		}
		refused := func(why string) error {
			http.Redirect(w, r, to(url.Values{"m": {"bulk-refused"}, "why": {why}}), http.StatusSeeOther)
			return nil
		}

		in := documents.BulkInput{IDs: r.PostForm["ids"]}
		if v := r.PostForm.Get("status"); v != "" {
			in.Status = documents.Some(v)
		}
		if v := r.PostForm.Get("visibility"); v != "" {
			in.Visibility = documents.Some(v)
		}
		switch v := r.PostForm.Get("folder_id"); v {
		case "":
		case folderNone:
			in.FolderID = documents.Null[string]()
		default:
			in.FolderID = documents.Some(v)
		}
		if len(in.IDs) == 0 || !in.Status.Set && !in.Visibility.Set && !in.FolderID.Set {
			return refused("empty")
		}

		save, replayed, err := s.beginForm(w, r, a, quire.Reply{})
		if err != nil || replayed {
			return err
		}
		// The change is many saves: the answer is kept once they are all
		// done (save.saved), not with the first one's transaction, so
		// the services get the request's own context.
		results, err := d.Bulk(r.Context(), a, in)
		if quire.ErrorCode(err) == quire.EVALIDATION {
			save.failed()
			return refused("invalid")
		}
		if err != nil {
			save.failed()
			return err
		}
		var updated, unchanged, failed int
		var invalid []string
		for _, res := range results {
			switch res.Result {
			case documents.BulkUpdated:
				updated++
			case documents.BulkUnchanged:
				unchanged++
			case documents.BulkInvalid:
				invalid = append(invalid, res.ID)
				failed++
			default:
				failed++
			}
		}
		out := url.Values{"m": {"bulk"}, "updated": {strconv.Itoa(updated)}, "unchanged": {strconv.Itoa(unchanged)},
			"failed": {strconv.Itoa(failed)}}
		if len(invalid) > 0 {
			out.Set("invalid", strings.Join(invalid, ","))
		}
		loc := to(out)
		save.redirected(loc)
		http.Redirect(w, r, loc, http.StatusSeeOther)
		return nil
	}
}
