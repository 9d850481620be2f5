package sqlite

import (
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"quire"
	"quire/sqlstore"
	"quire/storetest"
)

// BenchmarkConcurrentUpdate is the store's part of the load harness's
// update scenario (bench/README.md): sixteen writers, each saving a new
// summary of a document of its own (of 64) on top of its last answer, with
// the audit event the docs service records, so that the group commit
// (commit.go) batches them as it does under load. cpu-ns/op is the
// process's CPU time per save, which a shared machine's load disturbs less
// than the wall time:
//
//	go test -run '^$' -bench ConcurrentUpdate -benchtime 4000x -count 5 ./sqlite/
func BenchmarkConcurrentUpdate(b *testing.B) {
	fx := openBenchDB(b, 10_000, true)
	runWriters(b, fx.Store.(*DB), updateWriter(b, fx))
}

// updateWriter is the body of BenchmarkConcurrentUpdate's writers.
func updateWriter(b *testing.B, fx *storetest.BenchFixture) func(*testing.PB) {
	ctx := b.Context()
	type doc struct {
		id   string
		base time.Time
	}
	pool := make(chan doc, 64)
	for _, id := range fx.Visible[:min(64, len(fx.Visible))] {
		d, err := fx.Store.Document(ctx, fx.Reader, id)
		if err != nil {
			b.Fatal(err)
		}
		pool <- doc{id, d.UpdatedAt}
	}
	actor := &quire.EventActor{ID: fx.Reader.UserID, Name: "Editor"}
	var n atomic.Int64
	return func(pb *testing.PB) {
		for pb.Next() {
			d := <-pool
			summary := "Revision " + strconv.FormatInt(n.Add(1), 10)
			now := time.Now()
			ev := quire.NewEvent("", now, actor, quire.RequestInfo{}).On(quire.TargetDocument, d.id, "")
			saved, err := fx.Store.Recording(ev).UpdateDocument(ctx, fx.Reader, d.id, d.base, fx.Reader.UserID, now,
				func(doc *quire.Document) (bool, error) {
					doc.Summary = summary
					ev.Action, ev.Target.Name = quire.ActionDocumentUpdated, doc.Title
					ev.With("fields", []string{"summary"})
					return true, nil
				})
			if err != nil {
				b.Error(err)
				pool <- d
				return
			}
			pool <- doc{d.id, saved.UpdatedAt}
		}
	}
}

// runWriters runs body on sixteen goroutines (b.RunParallel on 2 cores)
// and reports the process's CPU time a write (cpu-ns/op) and the writes
// the group commit put in one commit (saves/commit).
func runWriters(b *testing.B, db *DB, body func(*testing.PB)) {
	b.SetParallelism(8)
	batches0, cpu0 := db.batches.Load(), cpuTime()
	b.ResetTimer()
	b.RunParallel(body)
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/float64(db.batches.Load()-batches0), "saves/commit")
}

// cpuTime is the CPU time this process has used, user and system, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkConcurrentCreate is the store's part of the load harness's
// create scenario: sixteen writers, each creating a document of about
// 1.5 KB of markdown with two tags and a link, with the audit event the
// docs service records (mentions none), batched by the group commit as
// under load. cpu-ns/op as for BenchmarkConcurrentUpdate:
//
//	go test -run '^$' -bench ConcurrentCreate -benchtime 4000x -count 5 ./sqlite/
func BenchmarkConcurrentCreate(b *testing.B) {
	fx := openBenchDB(b, 10_000, true)
	runWriters(b, fx.Store.(*DB), createWriter(b, fx))
}

// createWriter is the body of BenchmarkConcurrentCreate's writers.
func createWriter(b *testing.B, fx *storetest.BenchFixture) func(*testing.PB) {
	ctx := b.Context()
	owner := fx.Reader.UserID
	actor := &quire.EventActor{ID: owner, Name: "Editor"}
	body := strings.Repeat("Release notes for the deploy of the incident runbook, with steps to follow. ", 18) +
		"\n\nSee [the runbook](/documents/" + fx.Visible[0] + ").\n"
	var n atomic.Int64
	return func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			now := time.Now()
			d := &quire.Document{ID: sqlstore.NewID(), Title: "Bench document " + strconv.FormatInt(i, 10),
				Summary: "A summary", Content: body, ContentType: "markdown", Status: "draft", Visibility: "public",
				Tags: []string{"bench", "ops"}, DepartmentID: fx.Reader.DepartmentID, OwnerID: owner}
			ev := quire.NewEvent(quire.ActionDocumentCreated, now, actor, quire.RequestInfo{}).
				On(quire.TargetDocument, d.ID, d.Title)
			if err := fx.Store.Recording(ev).CreateDocument(ctx, d, now); err != nil {
				b.Error(err)
				return
			}
		}
	}
}
