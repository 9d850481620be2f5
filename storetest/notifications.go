package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"quire"
)

func init() { register("notifications", testNotifications) }

// notifyWorld is a docWorld whose changes are recorded with their events,
// as the services make them, so that they are queued for the fan-out.
type notifyWorld struct{ *docWorld }

func newNotifyWorld(t *testing.T, open Opener) *notifyWorld {
	return &notifyWorld{newDocWorld(t, open)}
}

// ev is the event of action by u on document id.
func notifyEvent(action string, u *quire.User, id string, n int) *quire.Event {
	return quire.NewEvent(action, at(n), &quire.EventActor{ID: u.ID, Name: u.Name}, quire.RequestInfo{}).
		On(quire.TargetDocument, id, "")
}

// createDoc creates d as its owner does, at minute n, mentions queued.
func (w *notifyWorld) createDoc(t *testing.T, d *quire.Document, by *quire.User, n int) *quire.Document {
	t.Helper()
	d.ID = uuid.Must(uuid.NewV7()).String()
	ev := notifyEvent(quire.ActionDocumentCreated, by, d.ID, n)
	ev.Mentions, ev.MentionsIgnored = quire.Mentions(d.Content)
	if err := w.s.Recording(ev).CreateDocument(t.Context(), d, at(n)); err != nil {
		t.Fatalf("create document: %v", err)
	}
	return d
}

// saveDoc changes document id by by at minute n, with the mentions it adds.
func (w *notifyWorld) saveDoc(t *testing.T, id string, by *quire.User, n int, fn func(d *quire.Document)) {
	t.Helper()
	ev := notifyEvent(quire.ActionDocumentUpdated, by, id, n)
	_, err := w.s.Recording(ev).UpdateDocument(t.Context(), seeAll, id, time.Time{}, by.ID, at(n),
		func(d *quire.Document) (bool, error) {
			before := d.Content
			fn(d)
			ev.Mentions, ev.MentionsIgnored = quire.AddedMentions(before, d.Content)
			return true, nil
		})
	if err != nil {
		t.Fatalf("save document: %v", err)
	}
}

// commentOn adds a comment of by (a reply when parentID is set) at minute n.
func (w *notifyWorld) commentOn(t *testing.T, docID string, by *quire.User, parentID, body string, n int) *quire.Comment {
	t.Helper()
	c := &quire.Comment{ID: uuid.Must(uuid.NewV7()).String(), DocumentID: docID, ParentID: parentID, AuthorID: by.ID, Body: body}
	ev := notifyEvent(quire.ActionCommentCreated, by, docID, n).With("comment_id", c.ID)
	ev.Mentions, ev.MentionsIgnored = quire.Mentions(body)
	if err := w.s.Recording(ev).CreateComment(t.Context(), seeAll, c, at(n)); err != nil {
		t.Fatalf("create comment: %v", err)
	}
	return c
}

// fanOut runs the fan-out until the queue is empty.
func (w *notifyWorld) fanOut(t *testing.T) {
	t.Helper()
	for {
		n, _, err := w.s.FanOut(t.Context(), at(100), 50)
		if err != nil {
			t.Fatalf("FanOut: %v", err)
		}
		if n == 0 {
			return
		}
	}
}

// inbox returns "kind by actor-name" of u's notifications, newest first,
// and u's unread count, as u sees them.
func (w *notifyWorld) inbox(t *testing.T, u *quire.User) ([]string, int) {
	t.Helper()
	ns, unread, err := w.s.Notifications(t.Context(), quire.NotificationFilter{Visibility: sees(u), UserID: u.ID, Limit: 100})
	if err != nil {
		t.Fatalf("Notifications: %v", err)
	}
	out := []string{}
	for _, n := range ns {
		out = append(out, n.Kind+" by "+n.ActorName)
	}
	return out, unread
}

func mention(u *quire.User) string { return "[@" + u.Name + "](mention:" + u.ID + ")" }

func testNotifications(t *testing.T, open Opener) {
	ctx := t.Context()
	t.Run("saves notify the watchers but not who saved, one unread per document, refreshed", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Plan")
		d.Visibility = "public"
		w.createDoc(t, d, w.owner, 1)
		w.fanOut(t) // the creator watches
		if err := w.s.Watch(ctx, w.colleague.ID, false, d.ID, true, at(2)); err != nil {
			t.Fatal(err)
		}
		w.saveDoc(t, d.ID, w.outsider, 3, func(d *quire.Document) { d.Content = "one" })
		w.saveDoc(t, d.ID, w.outsider, 4, func(d *quire.Document) { d.Content = "two" })
		w.saveDoc(t, d.ID, w.colleague, 5, func(d *quire.Document) { d.Content = "three" })
		w.fanOut(t)
		for _, c := range []struct {
			u      *quire.User
			want   []string
			unread int
		}{
			{w.owner, []string{"document_updated by " + w.colleague.Name}, 1},
			{w.colleague, []string{"document_updated by " + w.outsider.Name}, 1},
			{w.outsider, []string{}, 0},
		} {
			got, unread := w.inbox(t, c.u)
			if diff := cmp.Diff(c.want, got); diff != "" || unread != c.unread {
				t.Errorf("%s: unread %d, want %d; (-want +got):\n%s", c.u.Email, unread, c.unread, diff)
			}
		}
	})

	t.Run("a notification vanishes when its document goes private, and comes back", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Plan")
		d.Visibility = "public"
		w.createDoc(t, d, w.owner, 1)
		if err := w.s.Watch(ctx, w.colleague.ID, false, d.ID, true, at(2)); err != nil {
			t.Fatal(err)
		}
		w.saveDoc(t, d.ID, w.owner, 3, func(d *quire.Document) { d.Content = "news" })
		w.fanOut(t)
		if got, unread := w.inbox(t, w.colleague); len(got) != 1 || unread != 1 {
			t.Fatalf("before: %v, %d unread", got, unread)
		}
		w.update(t, d.ID, at(4), func(d *quire.Document) { d.Visibility = "private" })
		if got, unread := w.inbox(t, w.colleague); len(got) != 0 || unread != 0 {
			t.Errorf("private: %v, %d unread; want none", got, unread)
		}
		if _, err := w.s.MarkRead(ctx, sees(w.colleague), w.colleague.ID, []string{uuid.Must(uuid.NewV7()).String()}, false, at(5)); quire.ErrorCode(err) != quire.EVALIDATION {
			t.Errorf("MarkRead of an unknown id: %v, want VALIDATION_ERROR", err)
		}
		w.update(t, d.ID, at(6), func(d *quire.Document) { d.Visibility = "public" })
		if got, unread := w.inbox(t, w.colleague); len(got) != 1 || unread != 1 {
			t.Errorf("public again: %v, %d unread", got, unread)
		}
	})

	t.Run("mentions notify once, only those who see the document, and make them watch", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Eng")
		d.Visibility, d.DepartmentID = "department", w.eng.ID
		w.createDoc(t, d, w.owner, 1)
		w.saveDoc(t, d.ID, w.owner, 2, func(d *quire.Document) { d.Content = "hi " + mention(w.colleague) + " " + mention(w.loner) })
		w.saveDoc(t, d.ID, w.owner, 3, func(d *quire.Document) { d.Content += " more" })
		w.fanOut(t)
		// The later save notifies a watcher (the mention made one); the
		// mention is not repeated.
		want := []string{"document_updated by " + w.owner.Name, "mention by " + w.owner.Name}
		if got, _ := w.inbox(t, w.colleague); !cmp.Equal(got, want) {
			t.Errorf("colleague: %v, want %v", got, want)
		}
		if got, _ := w.inbox(t, w.loner); len(got) != 0 {
			t.Errorf("loner, who cannot see it: %v", got)
		}
		watched, err := w.s.Watching(ctx, sees(w.colleague), w.colleague.ID)
		if err != nil || len(watched.Documents) != 1 || watched.Documents[0].ID != d.ID {
			t.Errorf("colleague watches %+v, %v; want the document", watched, err)
		}
	})

	t.Run("what a person watches is listed by title, the first MaxWatched, and says when there are more", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		var ids []string
		for i := range quire.MaxWatched + 1 {
			d := draft(w.owner, fmt.Sprintf("doc %04d", quire.MaxWatched-i)) // created in the reverse of their order
			d.Visibility = "public"
			d = w.create(t, d, baseTime)
			if err := w.s.Watch(ctx, w.colleague.ID, false, d.ID, true, at(2)); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
		slices.Reverse(ids)
		watched, err := w.s.Watching(ctx, sees(w.colleague), w.colleague.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := pluck(watched.Documents, func(n quire.Named) string { return n.ID }); !slices.Equal(got, ids[:quire.MaxWatched]) || !watched.More {
			t.Fatalf("%d documents (more %v), want the first %d by title and more", len(got), watched.More, quire.MaxWatched)
		}
		if err := w.s.Watch(ctx, w.colleague.ID, false, ids[0], false, at(3)); err != nil {
			t.Fatal(err)
		}
		watched, err = w.s.Watching(ctx, sees(w.colleague), w.colleague.ID)
		if err != nil || len(watched.Documents) != quire.MaxWatched || watched.More {
			t.Fatalf("after one unwatched: %d documents, more %v, %v", len(watched.Documents), watched.More, err)
		}
	})

	t.Run("comments, replies and resolves notify their kinds", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Plan")
		d.Visibility = "public"
		w.createDoc(t, d, w.owner, 1)
		root := w.commentOn(t, d.ID, w.colleague, "", "a question", 2)
		w.commentOn(t, d.ID, w.outsider, root.ID, "an answer "+mention(w.owner), 3)
		ev := notifyEvent(quire.ActionCommentResolved, w.owner, d.ID, 4).With("comment_id", root.ID)
		if _, err := w.s.Recording(ev).ResolveComment(ctx, seeAll, root.ID, w.owner.ID, true, at(4)); err != nil {
			t.Fatal(err)
		}
		w.fanOut(t)
		for _, c := range []struct {
			u    *quire.User
			want []string
		}{
			{w.owner, []string{"mention by " + w.outsider.Name, "comment by " + w.colleague.Name}},
			{w.colleague, []string{"resolved by " + w.owner.Name, "reply by " + w.outsider.Name}},
			{w.outsider, []string{}},
		} {
			if got, _ := w.inbox(t, c.u); !cmp.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.u.Email, got, c.want)
			}
		}
	})

	t.Run("a folder watch covers the documents of its subfolders, created later", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		top := &quire.Folder{Name: "Top"}
		if err := w.s.CreateFolder(ctx, top, at(1)); err != nil {
			t.Fatal(err)
		}
		sub := &quire.Folder{Name: "Sub", ParentID: top.ID}
		if err := w.s.CreateFolder(ctx, sub, at(1)); err != nil {
			t.Fatal(err)
		}
		if err := w.s.Watch(ctx, w.colleague.ID, true, top.ID, true, at(2)); err != nil {
			t.Fatal(err)
		}
		d := draft(w.owner, "Deep")
		d.Visibility, d.FolderID = "public", sub.ID
		w.createDoc(t, d, w.owner, 3)
		w.saveDoc(t, d.ID, w.owner, 4, func(d *quire.Document) { d.Content = "x" })
		w.fanOut(t)
		if got, _ := w.inbox(t, w.colleague); len(got) != 1 {
			t.Errorf("colleague: %v, want one document_updated", got)
		}
		if err := w.s.Watch(ctx, w.colleague.ID, true, uuid.Must(uuid.NewV7()).String(), true, at(5)); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("watch an unknown folder: %v, want NOT_FOUND", err)
		}
	})

	t.Run("mark read: ids, all, and a stranger's id refused with nothing marked", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Plan")
		d.Visibility = "public"
		w.createDoc(t, d, w.owner, 1)
		w.commentOn(t, d.ID, w.colleague, "", "one", 2)
		w.commentOn(t, d.ID, w.outsider, "", "two", 3)
		w.fanOut(t)
		ns, unread, err := w.s.Notifications(ctx, quire.NotificationFilter{Visibility: sees(w.owner), UserID: w.owner.ID, Limit: 10})
		if err != nil || len(ns) != 2 || unread != 2 {
			t.Fatalf("owner: %d notifications, %d unread, %v", len(ns), unread, err)
		}
		if _, err := w.s.MarkRead(ctx, sees(w.colleague), w.colleague.ID, []string{ns[0].ID}, false, at(4)); quire.ErrorCode(err) != quire.EVALIDATION {
			t.Errorf("marking another's: %v, want VALIDATION_ERROR", err)
		}
		if n, err := w.s.MarkRead(ctx, sees(w.owner), w.owner.ID, []string{ns[0].ID}, false, at(4)); err != nil || n != 1 {
			t.Errorf("mark one: %d unread, %v", n, err)
		}
		page, _, err := w.s.Notifications(ctx, quire.NotificationFilter{Visibility: sees(w.owner), UserID: w.owner.ID, Limit: 10, Before: ns[0].ID})
		if err != nil || len(page) != 1 || page[0].ID != ns[1].ID {
			t.Errorf("page before the newest: %v, %v", page, err)
		}
		if n, err := w.s.MarkRead(ctx, sees(w.owner), w.owner.ID, nil, true, at(5)); err != nil || n != 0 {
			t.Errorf("mark all: %d unread, %v", n, err)
		}
		ns, _, _ = w.s.Notifications(ctx, quire.NotificationFilter{Visibility: sees(w.owner), UserID: w.owner.ID, Limit: 10, UnreadOnly: true})
		if len(ns) != 0 {
			t.Errorf("unread after all read: %d", len(ns))
		}
	})

	t.Run("the picker lists active people who see the document, by name, without others", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Eng")
		d.Visibility, d.DepartmentID = "department", w.eng.ID
		w.createDoc(t, d, w.owner, 1)
		got, err := w.s.Mentionable(ctx, d.ID, "user", 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{w.colleague.Name, w.owner.Name}
		if diff := cmp.Diff(want, pluck(got, func(n quire.Named) string { return n.Name })); diff != "" {
			t.Errorf("mentionable (-want +got):\n%s", diff)
		}
		if got, _ := w.s.Mentionable(ctx, d.ID, "%", 10); len(got) != 0 {
			t.Errorf("a wildcard matched %v", got)
		}
		if got, _ := w.s.Mentionable(ctx, d.ID, "", 1); len(got) != 1 {
			t.Errorf("limit 1 gave %d", len(got))
		}
	})

	t.Run("the mail setting is instant until set", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		if got, err := w.s.NotificationEmail(ctx, w.owner.ID); err != nil || got != quire.NotifyEmailInstant {
			t.Errorf("default: %q, %v", got, err)
		}
		if err := w.s.SetNotificationEmail(ctx, w.owner.ID, quire.NotifyEmailDigest, at(1)); err != nil {
			t.Fatal(err)
		}
		if got, _ := w.s.NotificationEmail(ctx, w.owner.ID); got != quire.NotifyEmailDigest {
			t.Errorf("after set: %q", got)
		}
		if err := w.s.SetNotificationEmail(ctx, uuid.Must(uuid.NewV7()).String(), quire.NotifyEmailOff, at(1)); quire.ErrorCode(err) != quire.ENOTFOUND {
			t.Errorf("unknown user: %v, want NOT_FOUND", err)
		}
	})

	t.Run("concurrent fan-outs give each event to one of them", func(t *testing.T) {
		w := newNotifyWorld(t, open)
		d := draft(w.owner, "Plan")
		d.Visibility = "public"
		w.createDoc(t, d, w.owner, 1)
		w.fanOut(t) // the owner watches
		for i := range 20 {
			w.commentOn(t, d.ID, w.colleague, "", "c", 2+i)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n, _, err := w.s.FanOut(ctx, at(50), 3)
					if err != nil || n == 0 {
						if err != nil {
							t.Error(err)
						}
						return
					}
				}
			}()
		}
		wg.Wait()
		if got, unread := w.inbox(t, w.owner); len(got) != 20 || unread != 20 {
			t.Errorf("owner: %d notifications, %d unread; want 20", len(got), unread)
		}
	})
}
