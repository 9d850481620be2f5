package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"quire"
)

// BenchmarkNotifySave compares, in one run, a save of a document that 1,000
// people watch with a save of one nobody watches: the save only queues its
// event (the fan-out is the worker's), so the two should cost the same
// (target: within 1.2×). fan-out-1000 is the worker's time to write the
// 1,000 notifications of one new thread on the watched document (target:
// under 5 s).
//
//	go test -run='^$' -bench='NotifySave/(un)?watched' -benchtime=200x -count=3 ./httpapi/
//	go test -run='^$' -bench='NotifySave/fan-out' -benchtime=5x ./httpapi/
func BenchmarkNotifySave(b *testing.B) {
	e := newEnv(b)
	e.user("ada@example.com", "editor", "")
	token := e.login("ada@example.com")
	ctx := context.Background()
	newDoc := func(title string) string {
		r := e.do("POST", docsPath, bearer(token), jsonBody(map[string]any{"title": title, "visibility": "public", "content": "text"}))
		var out struct {
			Document struct {
				ID string `json:"id"`
			} `json:"document"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil || r.Status != http.StatusCreated {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		return out.Document.ID
	}
	watched, unwatched := newDoc("Watched"), newDoc("Unwatched")
	for i := range 1000 {
		u := &quire.User{Email: fmt.Sprintf("w%04d@example.com", i), Name: fmt.Sprintf("Watcher %04d", i),
			Role: quire.Role{Key: "viewer"}, Status: quire.UserActive}
		if err := e.store.CreateUser(ctx, u); err != nil {
			b.Fatal(err)
		}
		if err := e.store.Watch(ctx, u.ID, false, watched, true, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	drain := func(b *testing.B) {
		for {
			n, _, err := e.store.FanOut(ctx, time.Now(), 200)
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	drain(b)
	client := e.client("")
	var n int
	save := func(b *testing.B, id string) {
		for b.Loop() {
			n++
			body, _ := json.Marshal(map[string]any{"summary": "Revision " + strconv.Itoa(n)})
			req, _ := http.NewRequest("PUT", e.server.URL+docsPath+"/"+id, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatalf("save: %d", res.StatusCode)
			}
		}
		b.StopTimer()
		drain(b) // the queue does not grow from one round to the next
	}
	b.Run("unwatched", func(b *testing.B) { save(b, unwatched) })
	b.Run("watched-by-1000", func(b *testing.B) { save(b, watched) })
	b.Run("fan-out-1000", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			r := e.do("POST", docsPath+"/"+watched+"/comments", bearer(token), jsonBody(map[string]any{"body": "A new thread"}))
			if r.Status != http.StatusCreated {
				b.Fatalf("comment: %d %s", r.Status, r.Body)
			}
			b.StartTimer()
			drain(b)
		}
	})
}
