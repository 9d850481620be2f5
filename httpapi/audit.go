package httpapi

import (
	"net/http"

	"quire"
	"quire/audit"
)

func handleAuditList(l *audit.Service) authedFunc {
	type response struct {
		Events     []audit.EventJSON `json:"events"`
		NextCursor *string           `json:"nextCursor"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q, err := strictQuery(r)
		if err != nil {
			return err
		}
		page, err := l.List(r.Context(), a, audit.Params{
			Action: q.Get("action"), ActorID: q.Get("actorId"), TargetID: q.Get("targetId"),
			Since: q.Get("since"), Until: q.Get("until"), Limit: q.Get("limit"), Cursor: q.Get("cursor"),
		})
		if err != nil {
			return err
		}
		out := response{Events: make([]audit.EventJSON, len(page.Events))}
		for i := range page.Events {
			out.Events[i] = audit.JSON(&page.Events[i])
		}
		if page.NextCursor != "" {
			out.NextCursor = &page.NextCursor
		}
		return writeJSON(w, http.StatusOK, out)
	}
}
