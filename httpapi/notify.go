package httpapi

import (
	"net/http"
	"strconv"

	"quire"
	"quire/notify"
	"quire/wire"
)

// notificationOut is a notification of product.md section 19.
type notificationOut struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Document  namedOut   `json:"document"`
	CommentID *string    `json:"comment_id"`
	Actor     personJSON `json:"actor"`
	Excerpt   string     `json:"excerpt"`
	CreatedAt string     `json:"created_at"`
	ReadAt    *string    `json:"read_at"`
}

// namedOut is a document ({"id", "title"}) in a notification or the
// watching list.
type namedOut struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// folderNamedOut is a folder of the watching list.
type folderNamedOut struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// handleWatch makes the caller watch (on) or stop watching the document or
// folder of the path's id, and answers {"watching": on}.
func handleWatch(ns *notify.Service, folder, on bool) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := ns.Watch(r.Context(), a, folder, r.PathValue("id"), on); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]bool{"watching": on})
	}
}

func handleWatching(ns *notify.Service) authedFunc {
	type response struct {
		Documents []namedOut       `json:"documents"`
		Folders   []folderNamedOut `json:"folders"`
		More      bool             `json:"more"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		got, err := ns.Watching(r.Context(), a)
		if err != nil {
			return err
		}
		out := response{Documents: make([]namedOut, 0, len(got.Documents)), Folders: make([]folderNamedOut, 0, len(got.Folders)),
			More: got.More}
		for _, d := range got.Documents {
			out.Documents = append(out.Documents, namedOut{ID: d.ID, Title: d.Name})
		}
		for _, f := range got.Folders {
			out.Folders = append(out.Folders, folderNamedOut{ID: f.ID, Name: f.Name})
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

// handleNotificationList answers a page of the caller's notifications:
// unread=true|false (default false: all), limit 1 to 100 (default 20),
// before the id of the last one of the previous page.
func handleNotificationList(ns *notify.Service) authedFunc {
	type response struct {
		Notifications []notificationOut `json:"notifications"`
		Unread        int               `json:"unread"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q := r.URL.Query()
		var p notify.ListParams
		switch q.Get("unread") {
		case "", "false", "0":
		case "true", "1":
			p.UnreadOnly = true
		default:
			return quire.Invalid(map[string]string{"unread": "must be true or false"})
		}
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > notify.MaxLimit {
				return quire.Invalid(map[string]string{"limit": "must be an integer from 1 to 100"})
			}
			p.Limit = n
		}
		p.Before = q.Get("before")
		list, unread, err := ns.List(r.Context(), a, p)
		if err != nil {
			return err
		}
		out := response{Notifications: make([]notificationOut, 0, len(list)), Unread: unread}
		for _, n := range list {
			o := notificationOut{ID: n.ID, Kind: n.Kind, Document: namedOut{ID: n.DocumentID, Title: n.DocumentTitle},
				CommentID: wire.Nullable(n.CommentID), Actor: personJSON{ID: n.ActorID, Name: n.ActorName},
				Excerpt: n.Excerpt, CreatedAt: wire.Time(n.CreatedAt)}
			if !n.ReadAt.IsZero() {
				at := wire.Time(n.ReadAt)
				o.ReadAt = &at
			}
			out.Notifications = append(out.Notifications, o)
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

func handleNotificationRead(ns *notify.Service) authedFunc {
	type request struct {
		IDs []string `json:"ids"`
		All *bool    `json:"all"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		body, err := decode[request](w, r)
		if err != nil {
			return err
		}
		unread, err := ns.MarkRead(r.Context(), a, body.IDs, body.All != nil && *body.All)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]int{"unread": unread})
	}
}

func handleMentionable(ns *notify.Service) authedFunc {
	type response struct {
		Users []personJSON `json:"users"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		users, err := ns.Mentionable(r.Context(), a, r.PathValue("id"), r.URL.Query().Get("q"))
		if err != nil {
			return err
		}
		out := response{Users: make([]personJSON, 0, len(users))}
		for _, u := range users {
			out.Users = append(out.Users, personJSON{ID: u.ID, Name: u.Name})
		}
		return writeJSON(w, http.StatusOK, out)
	}
}

func handleNotificationSettingsGet(ns *notify.Service) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		email, err := ns.Email(r.Context(), a)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"email": email})
	}
}

func handleNotificationSettingsPut(ns *notify.Service) authedFunc {
	type request struct {
		Email *string `json:"email"`
	}
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		body, err := decode[request](w, r)
		if err != nil {
			return err
		}
		if body.Email == nil {
			return quire.Invalid(map[string]string{"email": "is required"})
		}
		if err := ns.SetEmail(r.Context(), a, *body.Email); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"email": *body.Email})
	}
}

// handleUnsubscribe switches the notification mail of the person the
// token names off (RFC 8058). The body, "List-Unsubscribe=One-Click" as a
// form, is not read: the token in the query says everything.
func handleUnsubscribe(ns *notify.Service) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := ns.Unsubscribe(r.Context(), r.URL.Query().Get("token")); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]string{"message": "Notification mail switched off"})
	}
}
