package httpapi

import (
	"net/http"

	"quire"
	"quire/audit"
)

// eventOut is EVENT (product.md section 8).
type eventOut struct {
	ID        string             `json:"id"`
	At        string             `json:"at"`
	Action    string             `json:"action"`
	Actor     *quire.EventActor  `json:"actor"`
	Target    *quire.EventTarget `json:"target"`
	IP        string             `json:"ip"`
	RequestID string             `json:"requestId"`
	Details   map[string]any     `json:"details"`
}

func eventJSON(e *quire.Event) eventOut {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return eventOut{ID: e.ID, At: formatTime(e.At), Action: e.Action, Actor: e.Actor, Target: e.Target,
		IP: e.IP, RequestID: e.RequestID, Details: details}
}

func handleAuditList(l *audit.Service) authedFunc {
	type response struct {
		Events     []eventOut `json:"events"`
		NextCursor *string    `json:"nextCursor"`
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
		out := response{Events: make([]eventOut, len(page.Events))}
		for i := range page.Events {
			out.Events[i] = eventJSON(&page.Events[i])
		}
		if page.NextCursor != "" {
			out.NextCursor = &page.NextCursor
		}
		return writeJSON(w, http.StatusOK, out)
	}
}
