package sqlite

import (
	"cmp"
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"

	"quire/storetest"
)

// BenchmarkWALFrames counts the pages a save writes to the WAL, by table
// and index, for the writers of BenchmarkConcurrentUpdate and
// BenchmarkConcurrentCreate (sixteen at once, batched by the group commit).
// Every page a commit changes is one frame of the WAL (two writes, and
// later one more when a checkpoint copies it), so frames a save is a
// measure of a write's cost that the load of a shared machine does not
// move. The checkpoints are turned off for the run, so that the WAL holds
// every frame; the page each frame holds is named by dbstat.
//
//	go test -run '^$' -bench WALFrames -benchtime 1000x -v ./sqlite/
func BenchmarkWALFrames(b *testing.B) {
	for _, w := range []struct {
		name   string
		writer func(*testing.B, *storetest.BenchFixture) func(*testing.PB)
	}{{"update", updateWriter}, {"create", createWriter}} {
		b.Run(w.name, func(b *testing.B) {
			fx := openBenchDB(b, 10_000, true)
			db := fx.Store.(*DB)
			ctx := b.Context()
			for _, s := range []string{`PRAGMA wal_autocheckpoint = 0`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
				if _, err := db.write.ExecContext(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			body := w.writer(b, fx)
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(body)
			b.StopTimer()
			byObject, frames := walFrames(b, db)
			b.ReportMetric(float64(frames)/float64(b.N), "frames/save")
			groups := map[string]int{}
			for name, n := range byObject {
				switch {
				case strings.HasPrefix(name, "documents_fts"):
					groups["fts"] += n
				case name == "documents":
					groups["documents"] += n
				case strings.HasPrefix(name, "documents_") || name == "sqlite_autoindex_documents_1":
					groups["doc-indexes"] += n
				case strings.Contains(name, "document_versions"):
					groups["versions"] += n
				case strings.Contains(name, "audit_events"):
					groups["audit"] += n
				}
			}
			for g, n := range groups {
				b.ReportMetric(float64(n)/float64(b.N), g+"-frames/save")
			}
			type count struct {
				name string
				n    int
			}
			var all []count
			for name, n := range byObject {
				all = append(all, count{name, n})
			}
			slices.SortFunc(all, func(x, y count) int { return cmp.Or(y.n-x.n, strings.Compare(x.name, y.name)) })
			for _, c := range all {
				if b.N < 100 {
					break // the framework's first call, of one save
				}
				b.Logf("%-40s %6.2f frames a save", c.name, float64(c.n)/float64(b.N))
			}
		})
	}
}

// walFrames reads db's WAL and counts its frames, in all and by the table
// or index that holds each frame's page ("?" for a page on no b-tree now,
// such as one freed by a merge of the full-text index).
func walFrames(b *testing.B, db *DB) (map[string]int, int) {
	b.Helper()
	wal, err := os.ReadFile(db.path + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	if len(wal) < 32 {
		return nil, 0
	}
	names := map[uint32]string{}
	rows, err := db.write.QueryContext(b.Context(), `SELECT name, pageno FROM dbstat`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var (
			name string
			page uint32
		)
		if err := rows.Scan(&name, &page); err != nil {
			b.Fatal(err)
		}
		names[page] = name
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	rows.Close()
	pageSize := int(binary.BigEndian.Uint32(wal[8:12]))
	byObject, frames := map[string]int{}, 0
	for off := 32; off+24+pageSize <= len(wal); off += 24 + pageSize {
		name := names[binary.BigEndian.Uint32(wal[off:])]
		if name == "" {
			name = "?"
		}
		byObject[name]++
		frames++
	}
	return byObject, frames
}
