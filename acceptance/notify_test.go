package acceptance

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"quire"
	"quire/comments"
	"quire/documents"
	"quire/httpapi"
	"quire/notify"
	"quire/web"
)

// fanOut runs the notifications worker's fan-out of everything queued.
func (e *env) fanOut() {
	e.t.Helper()
	for {
		n, err := e.notify.FanOut(context.Background(), 100, nil)
		if err != nil {
			e.t.Fatalf("fan out: %v", err)
		}
		if n == 0 {
			return
		}
	}
}

// mention makes from mention to in a new comment on doc, fanned out, and
// returns the comment.
func (e *env) mention(from, to quire.User, doc *quire.Document) *quire.Comment {
	e.t.Helper()
	c, err := e.comments.Create(context.Background(), e.actor(from), doc.ID,
		comments.Input{Body: "Could you check this, [@" + to.Name + "](mention:" + to.ID + ")?"})
	if err != nil {
		e.t.Fatalf("comment: %v", err)
	}
	e.fanOut()
	return c
}

// bell is the bell of p: its count as shown ("" when hidden) and its label.
func bell(t *testing.T, p *page) (count, label string) {
	t.Helper()
	b := p.byID("bell")
	if b == nil {
		t.Fatalf("no bell on the page (status %d)", p.Status)
	}
	c := p.byID("bell-count")
	if c != nil && !hasAttr(c, "hidden") {
		count = textOf(c)
	}
	return count, attr(b, "aria-label")
}

func notifyPeople(t *testing.T) (*env, quire.User, quire.User, *quire.Document) {
	e := newEnv(t, withHTTP(func(_ *httpapi.Config, wc *web.Config) {
		wc.Stream = web.StreamConfig{Poll: 20 * time.Millisecond, Heartbeat: 20 * time.Millisecond}
	}))
	ada := e.user("ada@example.com", "editor", "Engineering")
	bob := e.user("bob@example.com", "editor", "Engineering")
	doc := e.document(ada, documents.DocumentInput{Title: documents.Some("Runbook"), Content: documents.Some("# Runbook\n\nPage the on-call."),
		Visibility: documents.Some("department")})
	return e, ada, bob, doc
}

func TestNotificationPages(t *testing.T) {
	e, ada, bob, doc := notifyPeople(t)
	b := e.browser()
	b.login("bob@example.com", testPassword)

	t.Run("the bell shows no count before anything happens", func(t *testing.T) {
		count, label := bell(t, b.get("/documents"))
		if diff := cmp.Diff([]string{"", "Notifications"}, []string{count, label}); diff != "" {
			t.Errorf("bell (-want +got):\n%s", diff)
		}
	})

	c := e.mention(ada, bob, doc)
	t.Run("a mention shows in the bell of every page, rendered by the server", func(t *testing.T) {
		count, label := bell(t, b.get("/documents"))
		if diff := cmp.Diff([]string{"1", "Notifications, 1 unread"}, []string{count, label}); diff != "" {
			t.Errorf("bell (-want +got):\n%s", diff)
		}
	})

	t.Run("the notifications page lists it unread, linking to the thread", func(t *testing.T) {
		p := b.get("/notifications")
		if p.Status != http.StatusOK {
			t.Fatalf("status %d", p.Status)
		}
		items := findAll(p.byID("notifications"), func(n *html.Node) bool { return n.Data == "li" })
		if len(items) != 1 {
			t.Fatalf("%d notifications listed, want 1", len(items))
		}
		got := []string{attr(items[0], "class"), textOf(find(items[0], func(n *html.Node) bool { return attr(n, "class") == "notification-what" })),
			p.links("notifications")[0], p.text("unread-count")}
		want := []string{"notification unread", "Unread Ada mentioned you in Runbook", "/documents/" + doc.ID + "#comment-" + c.ID, "1 unread"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the notification (-want +got):\n%s", diff)
		}
	})

	t.Run("the mention shows as the name in the thread", func(t *testing.T) {
		p := b.get("/documents/" + doc.ID)
		m := find(p.byID("comment-"+c.ID), func(n *html.Node) bool { return n.Data == "span" && attr(n, "class") == "mention" })
		if m == nil || textOf(m) != "@Bob" {
			t.Fatalf("no mention of @Bob in the comment: %v", m)
		}
	})

	t.Run("Mark read marks that one and sends the browser back", func(t *testing.T) {
		list, _, err := e.notify.List(context.Background(), e.actor(bob), notifyListAll())
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %v, %d", err, len(list))
		}
		p := b.post("/notifications/"+list[0].ID+"/read", url.Values{})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/notifications" {
			t.Fatalf("status %d to %q", p.Status, p.Header.Get("Location"))
		}
		p = b.get("/notifications")
		count, _ := bell(t, p)
		item := p.byID("notification-" + list[0].ID)
		if item == nil || attr(item, "class") != "notification" || count != "" || p.text("unread-count") != "0 unread" {
			t.Errorf("after Mark read: item %v, bell %q, %q", item, count, p.text("unread-count"))
		}
	})

	t.Run("Mark all read marks every one", func(t *testing.T) {
		e.mention(ada, bob, doc)
		e.mention(ada, bob, doc)
		if count, _ := bell(t, b.get("/notifications")); count != "2" {
			t.Fatalf("bell %q, want 2", count)
		}
		p := b.post("/notifications/read", url.Values{})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/notifications?m=marked-read" {
			t.Fatalf("status %d to %q", p.Status, p.Header.Get("Location"))
		}
		p = b.get("/notifications?unread=1")
		if p.byID("no-notifications") == nil || p.text("unread-count") != "0 unread" {
			t.Errorf("unread after Mark all read: %q", p.text("unread-count"))
		}
	})

	t.Run("a notification about a document gone private is neither listed nor counted", func(t *testing.T) {
		e.mention(ada, bob, doc)
		if _, err := e.docs.Update(context.Background(), e.actor(ada), doc.ID, documents.DocumentInput{Visibility: documents.Some("private")}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		p := b.get("/notifications")
		count, _ := bell(t, p)
		if count != "" || p.byID("notifications") != nil {
			t.Errorf("bell %q and list %v after the document went private", count, p.byID("notifications"))
		}
	})

	t.Run("marking someone else's notification read is not found", func(t *testing.T) {
		p := b.post("/notifications/"+doc.ID+"/read", url.Values{})
		if p.Status != http.StatusNotFound {
			t.Errorf("status %d, want 404", p.Status)
		}
		p = b.post("/notifications/not-an-id/read", url.Values{})
		if p.Status != http.StatusNotFound {
			t.Errorf("status %d, want 404", p.Status)
		}
	})

	t.Run("a quote across a mention in a document anchors, as the browser reads it", func(t *testing.T) {
		d := e.document(ada, documents.DocumentInput{Title: documents.Some("Rota"),
			Content: documents.Some("Ask [@Bob](mention:" + bob.ID + ") first, then the lead."), Visibility: documents.Some("department")})
		if _, err := e.comments.Create(context.Background(), e.actor(ada), d.ID, comments.Input{Body: "Why?",
			Anchor: &comments.AnchorInput{Quote: "Ask @Bob first"}}); err != nil {
			t.Fatalf("anchor a quote across the mention: %v", err)
		}
		p := b.get("/documents/" + d.ID)
		m := find(p.byID("doc-body"), func(n *html.Node) bool { return n.Data == "span" && attr(n, "class") == "mention" })
		if m == nil || textOf(p.byID("doc-body")) != "Ask @Bob first, then the lead." {
			t.Errorf("the document shows %q", textOf(p.byID("doc-body")))
		}
	})

	t.Run("signed out, the page is the sign-in page", func(t *testing.T) {
		p := e.browser().get("/notifications")
		if p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Header.Get("Location"), "/login") {
			t.Errorf("status %d to %q", p.Status, p.Header.Get("Location"))
		}
	})
}

func notifyListAll() notify.ListParams { return notify.ListParams{Limit: 100} }

func TestWatchButtons(t *testing.T) {
	e, ada, bob, doc := notifyPeople(t)
	_ = ada
	b := e.browser()
	b.login("bob@example.com", testPassword)
	button := func(path string) (string, string) {
		p := b.get(path)
		return p.text("watch-button"), p.text("watch-through")
	}

	t.Run("a document offers Watch, then Unwatch", func(t *testing.T) {
		if got, _ := button("/documents/" + doc.ID); got != "Watch" {
			t.Fatalf("button %q", got)
		}
		p := b.post("/documents/"+doc.ID+"/watch", url.Values{})
		if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/documents/"+doc.ID+"?m=watching" {
			t.Fatalf("status %d to %q", p.Status, p.Header.Get("Location"))
		}
		if got, _ := button("/documents/" + doc.ID); got != "Unwatch" {
			t.Fatalf("button %q after Watch", got)
		}
		w, err := e.notify.Watching(context.Background(), e.actor(bob))
		if err != nil || len(w.Documents) != 1 || w.Documents[0].ID != doc.ID {
			t.Fatalf("watching %+v, %v", w, err)
		}
		if p := b.post("/documents/"+doc.ID+"/unwatch", url.Values{}); p.Status != http.StatusSeeOther {
			t.Fatalf("unwatch: status %d", p.Status)
		}
		if got, _ := button("/documents/" + doc.ID); got != "Watch" {
			t.Fatalf("button %q after Unwatch", got)
		}
	})

	t.Run("a folder's watch covers the documents below it, and the page says so", func(t *testing.T) {
		top, err := e.docs.CreateFolder(context.Background(), e.actor(ada), documents.FolderInput{Name: documents.Some("Operations")})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := e.docs.CreateFolder(context.Background(), e.actor(ada), documents.FolderInput{Name: documents.Some("Runbooks"), ParentID: documents.Some(top.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.docs.Update(context.Background(), e.actor(ada), doc.ID, documents.DocumentInput{FolderID: documents.Some(sub.ID)}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if got, _ := button("/folders/" + top.ID); got != "Watch" {
			t.Fatalf("folder button %q", got)
		}
		if p := b.post("/folders/"+top.ID+"/watch", url.Values{}); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/folders/"+top.ID+"?m=watching" {
			t.Fatalf("watch the folder: status %d to %q", p.Status, p.Header.Get("Location"))
		}
		var got []string
		for _, path := range []string{"/folders/" + top.ID, "/folders/" + sub.ID, "/documents/" + doc.ID} {
			btn, through := button(path)
			got = append(got, btn+" | "+through)
		}
		want := []string{"Unwatch | ", "Watch | Watched through the folder Operations", "Watch | Watched through the folder Operations"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("buttons (-want +got):\n%s", diff)
		}
	})

	t.Run("an unknown or hidden document cannot be watched", func(t *testing.T) {
		private := e.document(ada, documents.DocumentInput{Title: documents.Some("Private"), Visibility: documents.Some("private")})
		for _, path := range []string{"/documents/" + private.ID + "/watch", "/documents/nope/watch", "/folders/nope/watch"} {
			if p := b.post(path, url.Values{}); p.Status != http.StatusNotFound {
				t.Errorf("POST %s: status %d, want 404", path, p.Status)
			}
		}
	})

	t.Run("a form from another site is refused", func(t *testing.T) {
		p := b.do("POST", "/documents/"+doc.ID+"/watch", url.Values{}, http.Header{"Sec-Fetch-Site": {"cross-site"}})
		if p.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", p.Status)
		}
	})
}

func TestMentionPickerPlaces(t *testing.T) {
	e, _, _, doc := notifyPeople(t)
	b := e.browser()
	b.login("bob@example.com", testPassword)
	mentionDoc := func(p *page, id string) string {
		n := p.byID(id)
		if n == nil {
			t.Fatalf("no element %s", id)
		}
		return attr(n, "data-mention-doc")
	}
	got := []string{mentionDoc(b.get("/documents/"+doc.ID+"/edit"), "content"), mentionDoc(b.get("/documents/"+doc.ID), "comments"),
		mentionDoc(b.get("/documents/new"), "content")}
	if diff := cmp.Diff([]string{doc.ID, doc.ID, ""}, got); diff != "" {
		t.Errorf("the document the picker asks about: editor, comments, new document (-want +got):\n%s", diff)
	}
}

// stream is an open notification stream, read event by event.
type stream struct {
	resp *http.Response
	r    *bufio.Reader
}

func (b *browser) stream(t *testing.T) (*stream, *http.Response) {
	t.Helper()
	req, err := http.NewRequest("GET", b.e.server.URL+"/notifications/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &stream{resp: resp, r: bufio.NewReader(resp.Body)}, resp
}

// next returns the next event's name and data, skipping comments and the
// retry field; "" and io.EOF when the stream ended.
func (s *stream) next(t *testing.T) (event, data string) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err == io.EOF && line == "" {
			return "", "EOF"
		}
		if err != nil {
			t.Fatalf("read the stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if event != "" || data != "" {
				return event, data
			}
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// nextUnread returns the count of the next "unread" event.
func (s *stream) nextUnread(t *testing.T) string {
	t.Helper()
	for {
		ev, data := s.next(t)
		switch ev {
		case "unread":
			return data
		case "":
			t.Fatalf("the stream ended (%s) before an unread event", data)
		}
	}
}

func TestNotificationStream(t *testing.T) {
	e, ada, bob, doc := notifyPeople(t)
	b := e.browser()
	b.login("bob@example.com", testPassword)

	t.Run("it sends the count at once, then each change", func(t *testing.T) {
		s, resp := b.stream(t)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" ||
			resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("status %d, %q, %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
		}
		if got := s.nextUnread(t); got != "0" {
			t.Fatalf("first count %s", got)
		}
		e.mention(ada, bob, doc)
		if got := s.nextUnread(t); got != "1" {
			t.Fatalf("count %s after a mention", got)
		}
		if _, err := e.notify.MarkRead(context.Background(), e.actor(bob), nil, true); err != nil {
			t.Fatal(err)
		}
		if got := s.nextUnread(t); got != "0" {
			t.Fatalf("count %s after marking all read", got)
		}
	})

	t.Run("it sends a heartbeat comment", func(t *testing.T) {
		s, _ := b.stream(t)
		for {
			line, err := s.r.ReadString('\n')
			if err != nil {
				t.Fatalf("no heartbeat before %v", err)
			}
			if line == ": heartbeat\n" {
				return
			}
		}
	})

	t.Run("without a session it is refused, in plain text", func(t *testing.T) {
		_, resp := e.browser().stream(t)
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("status %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	})

	t.Run("it ends with an end event when its session is signed out", func(t *testing.T) {
		other := e.browser()
		other.login("bob@example.com", testPassword)
		s, _ := other.stream(t)
		s.nextUnread(t)
		if p := other.post("/logout", url.Values{}); p.Status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", p.Status)
		}
		for {
			ev, data := s.next(t)
			if ev == "end" {
				if data != "signed-out" {
					t.Errorf("end %q", data)
				}
				if _, data := s.next(t); data != "EOF" {
					t.Errorf("the stream went on after its end: %q", data)
				}
				return
			}
			if ev == "" {
				t.Fatalf("the stream ended without an end event")
			}
		}
	})
}

func TestNotificationStreamBounds(t *testing.T) {
	e := newEnv(t, withHTTP(func(_ *httpapi.Config, wc *web.Config) {
		wc.Stream = web.StreamConfig{Poll: 20 * time.Millisecond, Lifetime: 200 * time.Millisecond, PerUser: 1}
	}))
	e.user("bob@example.com", "editor", "Engineering")
	b := e.browser()
	b.login("bob@example.com", testPassword)

	s, _ := b.stream(t)
	s.nextUnread(t)
	t.Run("a second stream of the same person beyond the bound is refused", func(t *testing.T) {
		_, resp := b.stream(t)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
			t.Errorf("status %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		resp.Body.Close()
	})
	t.Run("a stream ends after its lifetime, and its place is free again", func(t *testing.T) {
		for {
			if ev, data := s.next(t); ev == "" {
				if data != "EOF" {
					t.Fatalf("ended with %q", data)
				}
				break
			}
		}
		s.resp.Body.Close()
		// The handler gives its place back as it returns, just after the
		// end of the body: ask until it has (no time is asserted).
		for i := 0; ; i++ {
			again, resp := b.stream(t)
			if resp.StatusCode == http.StatusOK {
				again.nextUnread(t)
				return
			}
			resp.Body.Close()
			if i == 1000 {
				t.Fatalf("status %d after the first stream ended", resp.StatusCode)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func TestNotificationStreamOutlivesServerTimeouts(t *testing.T) {
	// quire serve's server cuts a request that reads or writes past its
	// timeouts (60 s); here 100 ms, and a heartbeat every 20 ms: ten
	// heartbeats take at least twice the timeouts. (It fails without the
	// stream's own write deadline.)
	e := newEnv(t, withHTTP(func(_ *httpapi.Config, wc *web.Config) {
		wc.Stream = web.StreamConfig{Heartbeat: 20 * time.Millisecond}
	}), func(c *envConfig) {
		c.server = func(s *http.Server) { s.ReadTimeout, s.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond }
	})
	e.user("bob@example.com", "editor", "Engineering")
	// Signed in through the service, not the form: under the 100 ms
	// timeouts, a busy machine cut the form's answer short.
	sess, err := e.auth.Login(context.Background(), quire.RequestInfo{IP: "127.0.0.1"}, "bob@example.com", testPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	u, _ := url.Parse(e.server.URL)
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: "auth_token", Value: sess.Token, Path: "/"}})
	s, _ := b.stream(t)
	s.nextUnread(t)
	for beats := 0; beats < 10; {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %d heartbeats: %v", beats, err)
		}
		if line == ": heartbeat\n" {
			beats++
		}
	}
}
