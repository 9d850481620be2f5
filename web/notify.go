package web

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"quire"
	"quire/notify"
)

// Notifications in the pages (product.md section 19): the bell in the
// navigation with the number of unread notifications, rendered with every
// page and kept current by a stream of server-sent events
// (/notifications/stream, read by static/notify.js); the notifications
// page with its plain forms; Watch and Unwatch on documents and folders.

// StreamConfig bounds the stream of the bell's count. Each open tab holds
// one connection and one goroutine (its handler's) for at most Lifetime;
// the browser then reconnects, and the reconnection signs in again.
type StreamConfig struct {
	// Poll is how often a stream counts its reader's unread notifications
	// (one count query): a change is sent within Poll of the fan-out that
	// made it, on whichever node that ran. 2 s when 0.
	Poll time.Duration
	// Heartbeat is how often a stream sends a comment so that proxies keep
	// it open, and checks that its session is still valid (a signed-out
	// or revoked session ends it). 25 s when 0.
	Heartbeat time.Duration
	// Lifetime ends a stream, so that the browser reconnects with a fresh
	// check of its session. 10 min when 0.
	Lifetime time.Duration
	// PerUser and Total bound the open streams of one person and of this
	// process (20 and 5,000 when 0); beyond them a stream is refused (429
	// and 503) and the page keeps the count it was rendered with.
	PerUser, Total int
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Poll <= 0 {
		c.Poll = 2 * time.Second
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 25 * time.Second
	}
	if c.Lifetime <= 0 {
		c.Lifetime = 10 * time.Minute
	}
	if c.PerUser <= 0 {
		c.PerUser = 20
	}
	if c.Total <= 0 {
		c.Total = 5000
	}
	return c
}

// WatchStates tells whether a person watches a document (itself, or
// through one of its folders) or a folder (itself, or through one of its
// parents): notifysql.WatchState. The caller has checked that the person
// sees the document.
type WatchStates interface {
	WatchState(ctx context.Context, userID string, folder bool, id string) (watching bool, through quire.Named, err error)
}

// unread is a's number of unread notifications, with the visibility
// re-check of the notify service: those about documents a sees now.
func unread(ctx context.Context, ns *notify.Service, a quire.Actor) (int, error) {
	_, n, err := ns.List(ctx, a, notify.ListParams{UnreadOnly: true, Limit: 1})
	return n, err
}

// bell fills the bell of l for a: the count when notifications are on and
// a may read documents. A failed count leaves the bell without one rather
// than failing the page.
func (s *server) bell(r *http.Request, a *quire.Actor, l *layout) {
	ns := s.cfg.Notify
	if ns == nil || a == nil || !a.Can(quire.LevelView) || a.User.MustChangePassword {
		return
	}
	l.Bell = true
	n, err := unread(r.Context(), ns, *a)
	if err != nil {
		s.logger.Debug("web: count unread notifications", "err", err)
		return
	}
	l.Unread = n
}

// streams counts the open streams, by person and in all.
type streams struct {
	mu     sync.Mutex
	byUser map[string]int
	total  int
}

// acquire takes a place for a stream of userID; false when the person or
// the process has its most.
func (st *streams) acquire(userID string, c StreamConfig) (ok bool, perUser bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byUser[userID] >= c.PerUser {
		return false, true
	}
	if st.total >= c.Total {
		return false, false
	}
	if st.byUser == nil {
		st.byUser = map[string]int{}
	}
	st.byUser[userID]++
	st.total++
	return true, false
}

func (st *streams) release(userID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.total--
	if st.byUser[userID]--; st.byUser[userID] <= 0 {
		delete(st.byUser, userID)
	}
}

// handleNotificationStream is the bell's stream: text/event-stream of
// "unread" events, each the count, sent at once and whenever it changes;
// a comment every heartbeat; an "end" event when the session is no longer
// valid, after which the page stops listening. It is no page: a request
// without a valid session is answered 401 in plain text, which stops the
// browser's EventSource.
func handleNotificationStream(s *server, ns *notify.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w)
		c := s.cfg.Stream
		a, err := s.actor(r)
		if err == nil && (a.User.MustChangePassword || !a.Can(quire.LevelView)) {
			err = errSignedOut
		}
		if err == nil {
			err = s.auth.MFA().SetupRequired(r.Context(), a)
		}
		if err != nil {
			if quire.ErrorCode(err) != quire.EUNAUTHORIZED {
				s.logger.Debug("web: notification stream refused", "err", err)
			}
			http.Error(w, "Sign in to see your notifications.", http.StatusUnauthorized)
			return
		}
		if ok, perUser := s.streams.acquire(a.User.ID, c); !ok {
			w.Header().Set("Retry-After", "60")
			if perUser {
				http.Error(w, "Too many open notification streams.", http.StatusTooManyRequests)
			} else {
				http.Error(w, "Too many open notification streams on this server.", http.StatusServiceUnavailable)
			}
			return
		}
		defer s.streams.release(a.User.ID)

		ctx := r.Context()
		end := time.Now().Add(c.Lifetime)
		rc := http.NewResponseController(w)
		// The server's write timeout (60 s in quire serve) would cut the
		// stream: it ends by itself at Lifetime.
		_ = rc.SetWriteDeadline(end.Add(time.Minute))
		h := w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("X-Accel-Buffering", "no") // nginx: pass the events on at once
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		// A browser reconnects 3 s after the stream ends.
		if _, err := fmt.Fprint(w, "retry: 3000\n\n"); err != nil {
			return
		}

		last := -1
		send := func() bool {
			n, err := unread(ctx, ns, a)
			if err != nil {
				if ctx.Err() == nil {
					s.logger.Warn("web: notification stream: count unread", "err", err)
				}
				return ctx.Err() == nil // try again at the next poll
			}
			if n == last {
				return true
			}
			last = n
			if _, err := fmt.Fprintf(w, "event: unread\ndata: %d\n\n", n); err != nil {
				return false
			}
			return rc.Flush() == nil
		}
		if !send() {
			return
		}
		poll := time.NewTicker(c.Poll)
		defer poll.Stop()
		beat := time.NewTicker(c.Heartbeat)
		defer beat.Stop()
		lifetime := time.NewTimer(c.Lifetime)
		defer lifetime.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.cfg.Shutdown:
				return
			case <-lifetime.C:
				return
			case <-poll.C:
				if !send() {
					return
				}
			case <-beat.C:
				fresh, err := s.actor(r)
				if quire.ErrorCode(err) == quire.EUNAUTHORIZED || err == nil && fresh.User.ID != a.User.ID {
					fmt.Fprint(w, "event: end\ndata: signed-out\n\n")
					rc.Flush()
					return
				}
				if err == nil {
					a = fresh // its role, department and projects as they are now
				}
				if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil || rc.Flush() != nil {
					return
				}
			}
		}
	})
}

// notificationsShown is how many notifications the page lists at once.
const notificationsShown = 50

// notificationsPage is /notifications.
type notificationsPage struct {
	layout
	Items      []notificationView
	UnreadOnly bool
	Count      int // unread, as the list counts them
	Next       string
	AllURL     string
	UnreadURL  string
}

// notificationView is one notification as the page shows it.
type notificationView struct {
	ID, Kind, What, Actor, Title, Excerpt, Link string
	At                                          time.Time
	Unread                                      bool
}

// what a notification's actor did, as the page says it before the title.
var notificationWhat = map[string]string{
	quire.NotifyMention:         "mentioned you in",
	quire.NotifyComment:         "commented on",
	quire.NotifyReply:           "replied in a thread on",
	quire.NotifyResolved:        "resolved your thread on",
	quire.NotifyDocumentUpdated: "changed",
}

// notificationLink is the place of n: its document, at its thread when it
// has a comment.
func notificationLink(n quire.Notification) string {
	link := "/documents/" + n.DocumentID
	if n.CommentID != "" {
		link += "#comment-" + n.CommentID
	}
	return link
}

func handleNotificationList(s *server, ns *notify.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		q := r.URL.Query()
		p := notify.ListParams{UnreadOnly: q.Get("unread") == "1", Limit: notificationsShown}
		if b := q.Get("before"); isID(b) {
			p.Before = b
		}
		list, count, err := ns.List(r.Context(), a, p)
		if quire.ErrorCode(err) == quire.EVALIDATION && p.Before != "" {
			// A page that is gone (its notification's document hidden
			// since): start again from the newest.
			p.Before = ""
			list, count, err = ns.List(r.Context(), a, p)
		}
		if err != nil {
			return err
		}
		page := notificationsPage{layout: s.section(r, &a, "notifications", "Notifications"), UnreadOnly: p.UnreadOnly,
			Count: count, AllURL: "/notifications", UnreadURL: "/notifications?unread=1"}
		page.Unread = count
		for _, n := range list {
			actor := n.ActorName
			if actor == "" {
				actor = "Someone"
			}
			page.Items = append(page.Items, notificationView{ID: n.ID, Kind: n.Kind, What: notificationWhat[n.Kind], Actor: actor,
				Title: n.DocumentTitle, Excerpt: n.Excerpt, Link: notificationLink(n), At: n.CreatedAt, Unread: n.ReadAt.IsZero()})
		}
		if len(list) == notificationsShown {
			next := "/notifications?before=" + list[len(list)-1].ID
			if p.UnreadOnly {
				next += "&unread=1"
			}
			page.Next = next
		}
		return s.show(w, r, http.StatusOK, "notifications.html", page)
	}
}

// handleNotificationRead marks the notification of the path read (or,
// for "all", every one) and sends the browser back to the list.
func handleNotificationRead(ns *notify.Service, all bool) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		var ids []string
		if !all {
			id := r.PathValue("id")
			if !isID(id) {
				return quire.Errorf(quire.ENOTFOUND, "There is no such notification.")
			}
			ids = []string{id}
		}
		if _, err := ns.MarkRead(r.Context(), a, ids, all); err != nil {
			if quire.ErrorCode(err) == quire.EVALIDATION {
				return quire.Errorf(quire.ENOTFOUND, "There is no such notification.")
			}
			return err
		}
		back := "/notifications"
		if r.PostForm.Get("unread") == "1" {
			back += "?unread=1&m=marked-read"
		} else if all {
			back += "?m=marked-read"
		}
		http.Redirect(w, r, back, http.StatusSeeOther)
		return nil
	}
}

// handleWatch makes the reader watch (on) or stop watching the document
// or folder of the path, and sends it back to its page.
func handleWatch(ns *notify.Service, folder, on bool) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if err := parseForm(r); err != nil {
			return err
		}
		id := r.PathValue("id")
		if err := ns.Watch(r.Context(), a, folder, id, on); err != nil {
			return err
		}
		back, m := "/documents/", "unwatched"
		if folder {
			back = "/folders/"
		}
		if on {
			m = "watching"
		}
		http.Redirect(w, r, back+id+"?m="+m, http.StatusSeeOther)
		return nil
	}
}

// watchView is the Watch or Unwatch button of a document or folder page.
type watchView struct {
	Action   string // the form's address, without /watch or /unwatch
	Watching bool   // the page's own record is watched
	// Through is the folder whose watch covers the record, when it is not
	// watched itself.
	Through *quire.Named
}

// watchOf is the watch button of the document (or folder) id for a; nil
// when notifications are off or a cannot change anything.
func (s *server) watchOf(ctx context.Context, a quire.Actor, folder bool, id string) (*watchView, error) {
	if s.cfg.Notify == nil || s.cfg.Watches == nil || !a.Can(quire.LevelView) || a.ViaToken() {
		return nil, nil
	}
	watching, through, err := s.cfg.Watches.WatchState(ctx, a.User.ID, folder, id)
	if err != nil {
		return nil, err
	}
	v := &watchView{Action: "/documents/" + id, Watching: watching}
	if folder {
		v.Action = "/folders/" + id
	}
	if !watching && through.ID != "" {
		v.Through = &through
	}
	return v, nil
}
