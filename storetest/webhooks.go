package storetest

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire"
)

func init() { register("webhooks", testWebhooks) }

// hookEvent is an event of action on target (a document id, "" for none).
func hookEvent(action, target string, at time.Time) *quire.Event {
	ev := quire.NewEvent(action, at, nil, quire.RequestInfo{})
	if target != "" {
		ev.On(quire.TargetDocument, target, "Doc "+target)
	}
	return ev
}

func newHook(t *testing.T, s quire.Store, url string, events ...string) *quire.Webhook {
	t.Helper()
	w := &quire.Webhook{URL: url, Secret: "s3cret-s3cret-s3cret", Events: events, Active: true}
	if err := s.CreateWebhook(t.Context(), w, baseTime); err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	return w
}

func claim(t *testing.T, s quire.Store, hookID string, now time.Time, n int) []quire.WebhookDelivery {
	t.Helper()
	ds, err := s.ClaimDeliveries(t.Context(), hookID, now, time.Minute, n)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return ds
}

func deliveryActions(ds []quire.WebhookDelivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Action + "@" + d.Event.Target.ID
	}
	return out
}

func testWebhooks(t *testing.T, open Opener) {
	t.Run("a webhook reads back whole, changes and goes", func(t *testing.T) {
		s := open(t)
		w := newHook(t, s, "https://hooks.example.com/quire?k=1", "document.*", "user.created")
		if w.ID == "" || !w.CreatedAt.Equal(baseTime) {
			t.Fatalf("created %+v", w)
		}
		got := must(s.WebhookByID(t.Context(), w.ID))(t)
		if got.URL != w.URL || got.Secret != w.Secret || !slices.Equal(got.Events, w.Events) || !got.Active {
			t.Fatalf("read back %+v, want %+v", got, w)
		}
		got.Events, got.Active, got.URL = []string{"*"}, false, "https://hooks.example.com/other"
		if err := s.UpdateWebhook(t.Context(), got, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		list := must(s.Webhooks(t.Context()))(t)
		if len(list) != 1 || list[0].URL != got.URL || list[0].Active || !slices.Equal(list[0].Events, []string{"*"}) ||
			!list[0].UpdatedAt.Equal(baseTime.Add(time.Minute)) {
			t.Fatalf("list %+v", list)
		}
		if err := s.DeleteWebhook(t.Context(), w.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.WebhookByID(t.Context(), w.ID)
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, s.DeleteWebhook(t.Context(), w.ID), quire.ENOTFOUND)
		wantCode(t, s.UpdateWebhook(t.Context(), &quire.Webhook{ID: unknownID, Events: []string{"*"}}, baseTime), quire.ENOTFOUND)
	})

	t.Run("at most MaxWebhooks are registered, however many creates come at once", func(t *testing.T) {
		s := open(t)
		for range quire.MaxWebhooks - 3 {
			newHook(t, s, "https://hooks.example.com/x", "*")
		}
		var wg sync.WaitGroup
		var refused atomic.Int32
		for range 12 {
			wg.Go(func() {
				w := &quire.Webhook{URL: "https://hooks.example.com/y", Secret: "s3cret-s3cret-s3cret", Events: []string{"*"}, Active: true}
				switch err := s.CreateWebhook(t.Context(), w, baseTime); {
				case err == nil:
				case quire.ErrorCode(err) == quire.EVALIDATION:
					refused.Add(1)
				default:
					t.Errorf("create webhook: %v", err)
				}
			})
		}
		wg.Wait()
		hooks, err := s.Webhooks(t.Context())
		if err != nil || len(hooks) != quire.MaxWebhooks || refused.Load() != 9 {
			t.Errorf("%d webhooks (%v), %d creates refused; want %d and 9", len(hooks), err, refused.Load(), quire.MaxWebhooks)
		}
	})

	t.Run("a NUL in a webhook is a VALIDATION_ERROR; an id with one is not found", func(t *testing.T) {
		s := open(t)
		for _, w := range []quire.Webhook{
			{URL: "https://hooks.example.com/\x00", Secret: "s", Events: []string{"*"}},
			{URL: "https://hooks.example.com/", Secret: "s\x00", Events: []string{"*"}},
			{URL: "https://hooks.example.com/", Secret: "s", Events: []string{"document.\x00"}},
		} {
			wantCode(t, s.CreateWebhook(t.Context(), &w, baseTime), quire.EVALIDATION)
		}
		if list, err := s.Webhooks(t.Context()); err != nil || len(list) != 0 {
			t.Fatalf("webhooks %v, %v; want none", list, err)
		}
		_, err := s.WebhookByID(t.Context(), "a\x00")
		wantCode(t, err, quire.ENOTFOUND)
		wantCode(t, s.DeleteWebhook(t.Context(), "a\x00"), quire.ENOTFOUND)
		if ds, err := s.Deliveries(t.Context(), "a\x00", "", 10); err != nil || len(ds) != 0 {
			t.Fatalf("deliveries %v, %v; want none", ds, err)
		}
	})

	t.Run("an event queues a delivery for each active webhook whose pattern matches", func(t *testing.T) {
		s := open(t)
		all := newHook(t, s, "https://a.example.com/", "*")
		docs := newHook(t, s, "https://b.example.com/", "document.*")
		exact := newHook(t, s, "https://c.example.com/", "document.deleted", "folder.created")
		off := newHook(t, s, "https://d.example.com/", "*")
		off.Active = false
		if err := s.UpdateWebhook(t.Context(), off, baseTime); err != nil {
			t.Fatal(err)
		}
		// "documents.x" shares a prefix with "document." only as text
		// without the dot: it must not match "document.*".
		record(t, s, hookEvent(quire.ActionDocumentUpdated, "d1", baseTime),
			hookEvent(quire.ActionDocumentDeleted, "d1", baseTime),
			hookEvent("documents.other", "d2", baseTime),
			hookEvent(quire.ActionFolderCreated, "", baseTime))
		later := baseTime.Add(time.Second)
		want := map[string][]string{
			all.ID:   {"document.updated", "document.deleted", "documents.other", "folder.created"},
			docs.ID:  {"document.updated", "document.deleted"},
			exact.ID: {"document.deleted", "folder.created"},
			off.ID:   nil,
		}
		for id, actions := range want {
			var got []string
			for _, d := range claim(t, s, id, later, 100) {
				got = append(got, d.Action)
				if d.Event == nil || d.Event.ID != d.EventID || d.Event.Action != d.Action {
					t.Errorf("delivery %+v does not carry its event", d)
				}
				if d.Attempts != 1 || d.State != quire.DeliveryPending {
					t.Errorf("claimed delivery %+v: want attempt 1, pending", d)
				}
			}
			// The two events of d1 are one key: only the first is claimed
			// while it is pending.
			if id == all.ID || id == docs.ID {
				actions = slices.DeleteFunc(slices.Clone(actions), func(a string) bool { return a == "document.deleted" })
			}
			if !slices.Equal(got, actions) {
				t.Errorf("webhook %s claimed %v, want %v", id, got, actions)
			}
		}
	})

	t.Run("a refused change queues nothing", func(t *testing.T) {
		s := open(t)
		h := newHook(t, s, "https://a.example.com/", "*")
		ev := hookEvent(quire.ActionFolderCreated, "", baseTime)
		// A folder under a parent that does not exist is refused.
		err := s.Recording(ev).CreateFolder(t.Context(), &quire.Folder{Name: "x", ParentID: unknownID}, baseTime)
		if err == nil {
			t.Fatal("the folder was created")
		}
		if ds := claim(t, s, h.ID, baseTime.Add(time.Hour), 10); len(ds) != 0 {
			t.Fatalf("claimed %v after a refused change", ds)
		}
	})

	t.Run("deliveries of one target go in order, of others at once", func(t *testing.T) {
		s := open(t)
		h := newHook(t, s, "https://a.example.com/", "document.*")
		for i, target := range []string{"a", "b", "a", "c", "b", "a"} {
			record(t, s, hookEvent(quire.ActionDocumentUpdated, target, baseTime.Add(time.Duration(i)*time.Millisecond)))
		}
		now := baseTime.Add(time.Second)
		first := claim(t, s, h.ID, now, 10)
		if got := deliveryActions(first); !slices.Equal(got, []string{"document.updated@a", "document.updated@b", "document.updated@c"}) {
			t.Fatalf("first claim %v", got)
		}
		// Leased: nothing more is due for a, b or c.
		if again := claim(t, s, h.ID, now, 10); len(again) != 0 {
			t.Fatalf("claimed again while leased: %v", deliveryActions(again))
		}
		// a fails and waits; b succeeds, so b's next comes; c is done.
		if err := s.DeliveryFailed(t.Context(), first[0].ID, 500, "answered 500", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeliverySucceeded(t.Context(), first[1].ID, now, 204); err != nil {
			t.Fatal(err)
		}
		if err := s.DeliverySucceeded(t.Context(), first[2].ID, now, 200); err != nil {
			t.Fatal(err)
		}
		second := claim(t, s, h.ID, now.Add(time.Minute), 10)
		if len(second) != 1 || second[0].Event.Target.ID != "b" || second[0].ID == first[1].ID {
			t.Fatalf("second claim %v, want b's second event only", deliveryActions(second))
		}
		if err := s.DeliverySucceeded(t.Context(), second[0].ID, now, 200); err != nil {
			t.Fatal(err)
		}
		// When a's retry falls due it is a's first event again.
		third := claim(t, s, h.ID, now.Add(2*time.Hour), 10)
		if len(third) != 1 || third[0].ID != first[0].ID || third[0].Attempts != 2 {
			t.Fatalf("third claim %+v, want a's first event, attempt 2", third)
		}
		// Given up, it no longer holds a's later events back.
		if err := s.DeliveryFailed(t.Context(), third[0].ID, 0, "could not connect", time.Time{}); err != nil {
			t.Fatal(err)
		}
		fourth := claim(t, s, h.ID, now.Add(3*time.Hour), 10)
		if got := deliveryActions(fourth); !slices.Equal(got, []string{"document.updated@a"}) || fourth[0].ID == first[0].ID {
			t.Fatalf("fourth claim %v", got)
		}

		log := must(s.Deliveries(t.Context(), h.ID, "", 100))(t)
		if len(log) != 6 {
			t.Fatalf("log has %d deliveries, want 6", len(log))
		}
		for i := 1; i < len(log); i++ {
			if seq(t, log[i].ID) >= seq(t, log[i-1].ID) {
				t.Fatalf("log not newest first: %s after %s", log[i].ID, log[i-1].ID)
			}
		}
		byID := map[string]quire.WebhookDelivery{}
		for _, d := range log {
			byID[d.ID] = d
		}
		if d := byID[first[0].ID]; d.State != quire.DeliveryFailed || d.Attempts != 2 || d.LastError != "could not connect" ||
			!d.NextTryAt.IsZero() {
			t.Errorf("given-up delivery %+v", d)
		}
		if d := byID[first[1].ID]; d.State != quire.DeliveryDelivered || d.LastStatus != 204 || !d.DeliveredAt.Equal(now) {
			t.Errorf("delivered delivery %+v", d)
		}
		page := must(s.Deliveries(t.Context(), h.ID, log[1].ID, 2))(t)
		if len(page) != 2 || page[0].ID != log[2].ID || page[1].ID != log[3].ID {
			t.Fatalf("page after %s: %v", log[1].ID, page)
		}
		wantCode(t, s.DeliverySucceeded(t.Context(), "999999", now, 200), quire.ENOTFOUND)
		wantCode(t, s.DeliveryFailed(t.Context(), "nope", 0, "x", now), quire.ENOTFOUND)

		// Pruning takes finished deliveries only.
		n := must(s.PruneDeliveries(t.Context(), baseTime.Add(time.Hour), 100))(t)
		if n != 4 { // b's two, c, and a's given-up first
			t.Fatalf("pruned %d, want 4", n)
		}
		log, _ = s.Deliveries(t.Context(), h.ID, "", 100)
		if len(log) != 2 {
			t.Fatalf("%d left after pruning, want 2 (a's pending ones)", len(log))
		}

		// Deleting the webhook takes its deliveries with it.
		if err := s.DeleteWebhook(t.Context(), h.ID); err != nil {
			t.Fatal(err)
		}
		if log, _ := s.Deliveries(t.Context(), h.ID, "", 100); len(log) != 0 {
			t.Fatalf("%d deliveries outlived their webhook", len(log))
		}
	})

	t.Run("concurrent claims never share a delivery", func(t *testing.T) {
		s := open(t)
		h := newHook(t, s, "https://a.example.com/", "*")
		const n = 40
		for i := range n {
			record(t, s, hookEvent(quire.ActionDocumentUpdated, "doc"+string(rune('A'+i%26))+string(rune('a'+i/26)), baseTime))
		}
		var (
			mu   sync.Mutex
			seen = map[string]int{}
			wg   sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for range 5 {
					ds, err := s.ClaimDeliveries(t.Context(), h.ID, baseTime.Add(time.Second), time.Hour, 3)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, d := range ds {
						seen[d.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(seen) != n {
			t.Errorf("claimed %d distinct deliveries, want %d", len(seen), n)
		}
		for id, c := range seen {
			if c != 1 {
				t.Errorf("delivery %s claimed %d times", id, c)
			}
		}
	})
}

func seq(t *testing.T, id string) int {
	t.Helper()
	n := 0
	for _, c := range id {
		if c < '0' || c > '9' {
			t.Fatalf("delivery id %q is not a number", id)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
