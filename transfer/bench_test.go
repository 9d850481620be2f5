package transfer_test

import (
	"context"
	"path/filepath"
	"testing"

	"quire/transfer"
)

// BenchmarkImportCorpus imports the vendored go-yaml documentation into an
// empty quire per iteration and reports documents per second.
func BenchmarkImportCorpus(b *testing.B) {
	files := 0
	for b.Loop() {
		b.StopTimer()
		s := newSpace(b)
		ann := s.user("ann@example.com", "Ann", "editor")
		b.StartTimer()
		rep, err := s.xfer.ImportDir(context.Background(), ann, filepath.Join("testdata", "go-yaml-docs"), transfer.Options{})
		if err != nil {
			b.Fatal(err)
		}
		files += len(rep.Created)
	}
	b.ReportMetric(float64(files)/b.Elapsed().Seconds(), "docs/s")
}
