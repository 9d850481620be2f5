package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"quire"
	"quire/mail/mailtest"
	"quire/notify"
)

type notificationWire struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Document struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"document"`
	CommentID *string    `json:"comment_id"`
	Actor     personWire `json:"actor"`
	Excerpt   string     `json:"excerpt"`
	CreatedAt string     `json:"created_at"`
	ReadAt    *string    `json:"read_at"`
}

type inboxWire struct {
	Notifications []notificationWire `json:"notifications"`
	Unread        int                `json:"unread"`
}

// notifyFixture is an env with ada (editor) and bob (viewer), both signed in.
type notifyFixture struct {
	*env
	ada, bob           quire.User
	adaToken, bobToken string
}

func newNotifyFixture(t *testing.T) *notifyFixture {
	e := newEnv(t)
	f := &notifyFixture{env: e, ada: e.user("ada@example.com", "editor", ""), bob: e.user("bob@example.com", "viewer", "")}
	f.adaToken, f.bobToken = e.login("ada@example.com"), e.login("bob@example.com")
	return f
}

// doc creates a document of ada's with visibility and content.
func (f *notifyFixture) doc(visibility, content string) string {
	f.t.Helper()
	r := f.do("POST", "/api/documentation/documents", bearer(f.adaToken),
		jsonBody(map[string]any{"title": "Plan", "visibility": visibility, "content": content}))
	var out struct {
		Document struct {
			ID string `json:"id"`
		} `json:"document"`
	}
	f.wantJSONLoose(r, http.StatusCreated, &out)
	return out.Document.ID
}

func (f *notifyFixture) wantJSONLoose(r *resp, status int, v any) {
	f.t.Helper()
	if r.Status != status {
		f.t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	r.decode(f.t, v)
}

// fanOut runs the notifications worker's fan-out until the queue is empty.
func (f *notifyFixture) fanOut() {
	f.t.Helper()
	for {
		n, _, err := f.store.FanOut(context.Background(), f.clock.Now(), 100)
		if err != nil {
			f.t.Fatalf("FanOut: %v", err)
		}
		if n == 0 {
			return
		}
	}
}

func (f *notifyFixture) inbox(token, query string) inboxWire {
	f.t.Helper()
	var out inboxWire
	f.wantJSON(f.do("GET", "/api/documentation/notifications"+query, bearer(token)), http.StatusOK, &out)
	return out
}

func mentionOf(u quire.User) string { return "[@" + u.Name + "](mention:" + u.ID + ")" }

func TestNotificationsMentionInACommentIsListedAndMarkedRead(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	id := f.doc("public", "text")
	r := f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.bobToken),
		jsonBody(map[string]any{"body": "Look, " + mentionOf(f.ada)}))
	if r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	if got := f.inbox(f.adaToken, ""); len(got.Notifications) != 0 {
		t.Fatalf("before the fan-out: %+v", got)
	}
	f.fanOut()
	got := f.inbox(f.adaToken, "?unread=true")
	if len(got.Notifications) != 1 || got.Unread != 1 {
		t.Fatalf("ada's inbox: %s", mustJSON(got))
	}
	n := got.Notifications[0]
	if n.Kind != "mention" || n.Actor.ID != f.bob.ID || n.Document.ID != id || n.CommentID == nil || !strings.HasPrefix(n.Excerpt, "Look, ") || n.ReadAt != nil {
		t.Errorf("notification: %s", mustJSON(n))
	}
	if got := f.inbox(f.bobToken, ""); len(got.Notifications) != 0 {
		t.Errorf("bob hears of his own comment: %s", mustJSON(got))
	}
	var read struct {
		Unread int `json:"unread"`
	}
	f.wantJSON(f.do("POST", "/api/documentation/notifications/read", bearer(f.adaToken), jsonBody(map[string]any{"ids": []string{n.ID}})), http.StatusOK, &read)
	if read.Unread != 0 {
		t.Errorf("unread after read: %d", read.Unread)
	}
	if got := f.inbox(f.adaToken, ""); len(got.Notifications) != 1 || got.Notifications[0].ReadAt == nil {
		t.Errorf("after read: %s", mustJSON(got))
	}
	if got := f.inbox(f.adaToken, "?unread=true"); len(got.Notifications) != 0 {
		t.Errorf("unread after read: %s", mustJSON(got))
	}
}

func TestNotificationsRefusals(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	id := f.doc("private", "")
	unknown := uuid.Must(uuid.NewV7()).String()
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code, field        string
	}{
		{"an unknown id in read", "POST", "/api/documentation/notifications/read", map[string]any{"ids": []string{unknown}}, 400, "VALIDATION_ERROR", "ids"},
		{"a malformed id in read", "POST", "/api/documentation/notifications/read", map[string]any{"ids": []string{"x"}}, 400, "VALIDATION_ERROR", "ids"},
		{"neither ids nor all", "POST", "/api/documentation/notifications/read", map[string]any{}, 400, "VALIDATION_ERROR", "ids"},
		{"both ids and all", "POST", "/api/documentation/notifications/read", map[string]any{"ids": []string{unknown}, "all": true}, 400, "VALIDATION_ERROR", "ids"},
		{"limit 0", "GET", "/api/documentation/notifications?limit=0", nil, 400, "VALIDATION_ERROR", "limit"},
		{"limit 101", "GET", "/api/documentation/notifications?limit=101", nil, 400, "VALIDATION_ERROR", "limit"},
		{"limit not a number", "GET", "/api/documentation/notifications?limit=ten", nil, 400, "VALIDATION_ERROR", "limit"},
		{"unread not a boolean", "GET", "/api/documentation/notifications?unread=maybe", nil, 400, "VALIDATION_ERROR", "unread"},
		{"an unknown before", "GET", "/api/documentation/notifications?before=" + unknown, nil, 400, "VALIDATION_ERROR", "before"},
		{"a bad email setting", "PUT", "/api/auth/notification-settings", map[string]any{"email": "weekly"}, 400, "VALIDATION_ERROR", "email"},
		{"no email setting", "PUT", "/api/auth/notification-settings", map[string]any{}, 400, "VALIDATION_ERROR", "email"},
		{"watching a document bob cannot see", "PUT", "/api/documentation/documents/" + id + "/watch", nil, 404, "NOT_FOUND", ""},
		{"watching an unknown folder", "PUT", "/api/documentation/folders/" + unknown + "/watch", nil, 404, "NOT_FOUND", ""},
		{"the picker of a document bob cannot see", "GET", "/api/documentation/documents/" + id + "/mentionable?q=a", nil, 404, "NOT_FOUND", ""},
		{"a picker query over 100 characters", "GET", "/api/documentation/documents/" + id + "/mentionable?q=" + strings.Repeat("a", 101), nil, 400, "VALIDATION_ERROR", "q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []reqOpt{bearer(f.bobToken)}
			if c.body != nil {
				opts = append(opts, jsonBody(c.body))
			}
			body := f.withT(t).wantError(f.withT(t).do(c.method, c.path, opts...), c.status, c.code)
			if c.field != "" {
				if fields, _ := body["fields"].(map[string]any); fields[c.field] == nil {
					t.Errorf("fields do not name %s: %v", c.field, body)
				}
			}
		})
	}
}

func TestNotificationsSettingsDefaultToInstant(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	var got struct {
		Email string `json:"email"`
	}
	f.wantJSON(f.do("GET", "/api/auth/notification-settings", bearer(f.bobToken)), http.StatusOK, &got)
	if got.Email != "instant" {
		t.Errorf("default %q", got.Email)
	}
	f.wantJSON(f.do("PUT", "/api/auth/notification-settings", bearer(f.bobToken), jsonBody(map[string]string{"email": "digest"})), http.StatusOK, &got)
	f.wantJSON(f.do("GET", "/api/auth/notification-settings", bearer(f.bobToken)), http.StatusOK, &got)
	if got.Email != "digest" {
		t.Errorf("after PUT %q", got.Email)
	}
}

func TestNotificationsVanishWhenTheDocumentGoesPrivate(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	id := f.doc("public", "one")
	f.wantJSONLoose(f.do("PUT", "/api/documentation/documents/"+id+"/watch", bearer(f.bobToken)), http.StatusOK, &struct{}{})
	for _, content := range []string{"two", "three"} {
		if r := f.do("PUT", "/api/documentation/documents/"+id, bearer(f.adaToken), jsonBody(map[string]any{"content": content})); r.Status != http.StatusOK {
			t.Fatalf("save: %d %s", r.Status, r.Body)
		}
	}
	f.fanOut()
	got := f.inbox(f.bobToken, "")
	if len(got.Notifications) != 1 || got.Notifications[0].Kind != "document_updated" || got.Unread != 1 {
		t.Fatalf("two saves: %s, want one document_updated", mustJSON(got))
	}
	if r := f.do("PUT", "/api/documentation/documents/"+id, bearer(f.adaToken), jsonBody(map[string]any{"visibility": "private"})); r.Status != http.StatusOK {
		t.Fatalf("make private: %d %s", r.Status, r.Body)
	}
	f.fanOut()
	if got := f.inbox(f.bobToken, ""); len(got.Notifications) != 0 || got.Unread != 0 {
		t.Errorf("after private: %s, want none", mustJSON(got))
	}
	f.wantError(f.do("POST", "/api/documentation/notifications/read", bearer(f.bobToken),
		jsonBody(map[string]any{"ids": []string{got.Notifications[0].ID}})), 400, "VALIDATION_ERROR")
}

func TestNotificationsWatching(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	id := f.doc("public", "")
	var folder struct {
		Folder struct {
			ID string `json:"id"`
		} `json:"folder"`
	}
	f.wantJSONLoose(f.do("POST", "/api/documentation/folders", bearer(f.adaToken), jsonBody(map[string]string{"name": "Team"})), http.StatusCreated, &folder)
	var on struct {
		Watching bool `json:"watching"`
	}
	for _, p := range []string{"/api/documentation/documents/" + id + "/watch", "/api/documentation/folders/" + folder.Folder.ID + "/watch"} {
		for range 2 { // idempotent
			f.wantJSON(f.do("PUT", p, bearer(f.bobToken)), http.StatusOK, &on)
			if !on.Watching {
				t.Errorf("PUT %s: watching false", p)
			}
		}
	}
	type watchingWire struct {
		Documents []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"documents"`
		Folders []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"folders"`
		More bool `json:"more"`
	}
	var w watchingWire
	f.wantJSON(f.do("GET", "/api/documentation/watching", bearer(f.bobToken)), http.StatusOK, &w)
	if len(w.Documents) != 1 || w.Documents[0].Title != "Plan" || len(w.Folders) != 1 || w.Folders[0].Name != "Team" || w.More {
		t.Errorf("watching: %s", mustJSON(w))
	}
	f.wantJSON(f.do("DELETE", "/api/documentation/documents/"+id+"/watch", bearer(f.bobToken)), http.StatusOK, &on)
	f.wantJSON(f.do("DELETE", "/api/documentation/folders/"+folder.Folder.ID+"/watch", bearer(f.bobToken)), http.StatusOK, &on)
	f.wantJSON(f.do("GET", "/api/documentation/watching", bearer(f.bobToken)), http.StatusOK, &w)
	if len(w.Documents) != 0 || len(w.Folders) != 0 {
		t.Errorf("after DELETE: %s", mustJSON(w))
	}
}

func TestNotificationsMentionablePeople(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	f.user("carol@example.com", "guest", "") // no view on documents
	pub := f.doc("public", "")
	var got struct {
		Users []personWire `json:"users"`
	}
	f.wantJSON(f.do("GET", "/api/documentation/documents/"+pub+"/mentionable?q=", bearer(f.bobToken)), http.StatusOK, &got)
	if len(got.Users) != 2 || got.Users[0].Name != "Ada" || got.Users[1].Name != "Bob" {
		t.Errorf("public: %s, want Ada and Bob", mustJSON(got))
	}
	f.wantJSON(f.do("GET", "/api/documentation/documents/"+pub+"/mentionable?q=%40b", bearer(f.bobToken)), http.StatusOK, &got)
	if len(got.Users) != 1 || got.Users[0].ID != f.bob.ID {
		t.Errorf("q=@b: %s", mustJSON(got))
	}
	private := f.doc("private", "")
	f.wantJSON(f.do("GET", "/api/documentation/documents/"+private+"/mentionable", bearer(f.adaToken)), http.StatusOK, &got)
	if len(got.Users) != 1 || got.Users[0].ID != f.ada.ID {
		t.Errorf("private: %s, want Ada alone", mustJSON(got))
	}
}

// A save that mentions 500 people notifies the first 50 distinct ones who
// can see the document, and the worker says in the log that it ignored the
// rest.
func TestNotificationsMentionsAreBounded(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	ctx := context.Background()
	var people []quire.User
	var b strings.Builder
	for i := range 500 {
		if i < 51 {
			u := &quire.User{Email: fmt.Sprintf("p%02d@example.com", i), Name: fmt.Sprintf("P%02d", i), Role: quire.Role{Key: "viewer"},
				Status: quire.UserActive}
			if err := f.store.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			people = append(people, *u)
			b.WriteString(mentionOf(*u) + " ")
		} else {
			b.WriteString("[@X](mention:" + uuid.Must(uuid.NewV7()).String() + ") ")
		}
	}
	f.doc("public", b.String())
	var logs bytes.Buffer
	if _, err := notify.New(f.store, notify.Config{Now: f.clock.Now}).FanOut(ctx, 10, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "ignored=450") {
		t.Errorf("the log does not say 450 mentions were ignored: %s", logs.String())
	}
	notified := 0
	for _, u := range people {
		ns, _, err := f.store.Notifications(ctx, quire.NotificationFilter{Visibility: quire.Visibility{UserID: u.ID}, UserID: u.ID, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		notified += len(ns)
	}
	if notified != quire.MaxMentions {
		t.Errorf("%d people notified, want %d", notified, quire.MaxMentions)
	}
}

// notices is a notify.Service over the env's store, as the composition root
// builds it beside the API (the same key and public URL as the env's).
func (f *notifyFixture) notices() *notify.Service {
	return notify.New(f.store, notify.Config{Now: f.clock.Now, Key: []byte("test unsubscribe key"), PublicURL: "http://quire.test"})
}

// mailNow queues the notification mails due at the env's clock.
func (f *notifyFixture) mailNow() int {
	f.t.Helper()
	n, err := f.notices().Mail(context.Background())
	if err != nil {
		f.t.Fatalf("Mail: %v", err)
	}
	return n
}

func TestNotificationsMailOnceWithOneClickUnsubscribe(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	srv := mailtest.NewServer(t)
	startMailer(t, f.env, srv)
	id := f.doc("public", "text")
	for _, body := range []string{"First " + mentionOf(f.ada), "Second " + mentionOf(f.ada)} {
		if r := f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.bobToken), jsonBody(map[string]any{"body": body})); r.Status != http.StatusCreated {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
	}
	f.fanOut()
	if n := f.mailNow(); n != 0 {
		t.Fatalf("%d mails at once; the instant mail waits for the rest of a burst", n)
	}
	f.clock.Advance(time.Minute)
	if n := f.mailNow(); n != 1 {
		t.Fatalf("%d mails after a minute, want 1 (the burst in one)", n)
	}
	if n := f.mailNow(); n != 0 {
		t.Fatalf("%d mails again, want none", n)
	}
	msgs := srv.Wait(t, 1, 30*time.Second)
	data := string(msgs[0].Data)
	if len(msgs[0].To) != 1 || msgs[0].To[0] != "ada@example.com" {
		t.Errorf("to %v", msgs[0].To)
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	unsub := msg.Header.Get("List-Unsubscribe")
	if got := msg.Header.Get("List-Unsubscribe-Post"); got != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post %q", got)
	}
	if !strings.HasPrefix(unsub, "<http://quire.test/api/unsubscribe?token=") || !strings.HasSuffix(unsub, ">") {
		t.Fatalf("List-Unsubscribe %q", unsub)
	}
	// Quoted-printable bodies fold lines: compare without the soft breaks.
	flat := strings.ReplaceAll(data, "=\r\n", "")
	for _, want := range []string{"First", "Second", "http://quire.test/documents/" + id + "#comment-"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the mail lacks %q:\n%s", want, data)
		}
	}
	link := strings.TrimSuffix(strings.TrimPrefix(unsub, "<http://quire.test"), ">")
	last := link[len(link)-1]
	forged := link[:len(link)-1] + "A"
	if last == 'A' {
		forged = link[:len(link)-1] + "B"
	}
	f.wantError(f.do("POST", forged, rawBody("List-Unsubscribe=One-Click"), header("Content-Type", "application/x-www-form-urlencoded")), 400, "INVALID_TOKEN")
	f.wantError(f.do("POST", "/api/unsubscribe?token="+f.ada.ID+".99999999999.AAAA"), 400, "INVALID_TOKEN")
	var settings struct {
		Email string `json:"email"`
	}
	f.wantJSON(f.do("GET", "/api/auth/notification-settings", bearer(f.adaToken)), http.StatusOK, &settings)
	if settings.Email != "instant" {
		t.Fatalf("a forged link changed the setting to %q", settings.Email)
	}
	var answer struct {
		Message string `json:"message"`
	}
	f.wantJSON(f.do("POST", link, rawBody("List-Unsubscribe=One-Click"), header("Content-Type", "application/x-www-form-urlencoded")), http.StatusOK, &answer)
	f.wantJSON(f.do("GET", "/api/auth/notification-settings", bearer(f.adaToken)), http.StatusOK, &settings)
	if settings.Email != "off" {
		t.Errorf("after one-click unsubscribe: %q, want off", settings.Email)
	}
	// A mention now is listed but not mailed.
	f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.bobToken), jsonBody(map[string]any{"body": "Third " + mentionOf(f.ada)}))
	f.fanOut()
	f.clock.Advance(time.Minute)
	if n := f.mailNow(); n != 0 {
		t.Errorf("%d mails with mail off", n)
	}
	f.clock.Advance(notify.UnsubscribeTTL)
	f.wantError(f.do("POST", link), 400, "INVALID_TOKEN")
}

func TestNotificationsMailRechecksVisibilityAtSend(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	id := f.doc("public", "text")
	if r := f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.adaToken), jsonBody(map[string]any{"body": "Hi " + mentionOf(f.bob)})); r.Status != http.StatusCreated {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	f.fanOut()
	if r := f.do("PUT", "/api/documentation/documents/"+id, bearer(f.adaToken), jsonBody(map[string]any{"visibility": "private"})); r.Status != http.StatusOK {
		t.Fatalf("private: %d %s", r.Status, r.Body)
	}
	f.clock.Advance(time.Minute)
	if n := f.mailNow(); n != 0 {
		t.Errorf("%d mails about a document bob can no longer see", n)
	}
}

func TestNotificationsDigestAtEightInThePersonsZone(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	// The env's clock is 10:00 UTC: 19:00 in Tokyo, 05:00 in New York.
	for _, c := range []struct {
		tz   string
		want string
	}{{"Asia/Tokyo", "2026-11-24T23:00:00Z"}, {"America/New_York", "2026-11-24T13:00:00Z"}, {"", "2026-11-25T08:00:00Z"}} {
		if got := notify.DigestDue(f.clock.Now(), c.tz).Format(time.RFC3339); got != c.want {
			t.Errorf("DigestDue(%q) = %s, want %s", c.tz, got, c.want)
		}
	}
	f.wantJSON(f.do("PUT", "/api/auth/notification-settings", bearer(f.adaToken), jsonBody(map[string]string{"email": "digest"})), http.StatusOK, &struct {
		Email string `json:"email"`
	}{})
	id := f.doc("public", "text")
	f.do("POST", "/api/documentation/documents/"+id+"/comments", bearer(f.bobToken), jsonBody(map[string]any{"body": "Hi " + mentionOf(f.ada)}))
	f.fanOut()
	f.clock.Advance(time.Hour)
	if n := f.mailNow(); n != 0 {
		t.Fatalf("%d mails before the next 08:00", n)
	}
	f.clock.Advance(22 * time.Hour) // 09:00 UTC the next day
	if n := f.mailNow(); n != 1 {
		t.Fatalf("%d digests after 08:00, want 1", n)
	}
	if n := f.mailNow(); n != 0 {
		t.Fatalf("%d digests again the same day", n)
	}
}
