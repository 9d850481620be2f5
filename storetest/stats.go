package storetest

import (
	"testing"
	"time"

	"quire"
)

func init() {
	register("stats", testStats)
}

func testStats(t *testing.T, open Opener) {
	t.Run("stats count users, live documents and pending mail", func(t *testing.T) {
		s := open(t)
		ctx := t.Context()
		st := must(s.Stats(ctx))(t)
		if st.Users != 0 || st.Documents != 0 || st.OutboxPending != 0 || !st.OutboxOldest.IsZero() {
			t.Errorf("empty store: %+v, want zeros", st)
		}
		owner := newUser(t, s, "stats@example.com", "editor", "")
		newUser(t, s, "other@example.com", "viewer", "")
		var docs []*quire.Document
		for _, title := range []string{"One", "Two", "Three"} {
			d := &quire.Document{Title: title, ContentType: "markdown", Status: "draft", Visibility: "private", OwnerID: owner.ID}
			if err := s.CreateDocument(ctx, d, baseTime); err != nil {
				t.Fatal(err)
			}
			docs = append(docs, d)
		}
		if err := s.DeleteDocument(ctx, quire.Visibility{All: true}, docs[0].ID, owner.ID, baseTime.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		first := queue(t, s, "a@example.com", baseTime)
		queue(t, s, "b@example.com", baseTime.Add(time.Hour))
		claimAll(t, s, baseTime.Add(2*time.Hour))
		if err := s.MailSent(ctx, first.ID, baseTime.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}

		st = must(s.Stats(ctx))(t)
		if st.Users != 2 || st.Documents != 2 {
			t.Errorf("users %d, documents %d; want 2 and 2 (the one in the trash is not counted)", st.Users, st.Documents)
		}
		if st.OutboxPending != 1 || !st.OutboxOldest.Equal(baseTime.Add(time.Hour)) {
			t.Errorf("outbox pending %d, oldest %v; want 1 mail, queued at %v", st.OutboxPending, st.OutboxOldest, baseTime.Add(time.Hour))
		}
		if (st.CommitBatch == nil) == (st.Pool == nil) {
			t.Errorf("commit figures %v, pool figures %v: want exactly one of them", st.CommitBatch, st.Pool)
		}
		// The committer records a batch after answering it: the last
		// write may not be counted yet, the ones before it are.
		if st.CommitBatch != nil && (st.CommitBatch.Count == 0 || st.CommitSeconds.Count == 0) {
			t.Errorf("group commit: %d batches and %d timed commits after several writes", st.CommitBatch.Count, st.CommitSeconds.Count)
		}
		if st.Pool != nil && (st.Pool.Acquires == 0 || st.Pool.Max == 0) {
			t.Errorf("pool: %+v after several queries", *st.Pool)
		}
	})
}
