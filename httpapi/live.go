package httpapi

import (
	"net/http"

	"quire"
	"quire/live"
)

// handlePresence is GET /api/documentation/documents/{id}/presence: who has
// the document open live and who edits it, on the node that answers
// (package live keeps presence in memory per node), 404 for a document the
// caller cannot see.
func handlePresence(lv *live.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		p, err := lv.Presence(r.Context(), a, r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, p)
	}
}
