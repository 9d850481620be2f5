package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLineBuffer checks when buffered log lines reach the writer: an info
// line within flushEvery, a warning at once (with what waited before it),
// and everything at Close.
func TestLineBuffer(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	buf := newLineBuffer(&out)
	logger := slog.New(flushingHandler{slog.NewJSONHandler(buf, nil), buf})

	logger.Info("first")
	if s := out.String(); s != "" {
		t.Fatalf("an info line was written at once: %q", s)
	}
	deadline := time.Now().Add(10 * flushEvery)
	for !strings.Contains(out.String(), `"first"`) {
		if time.Now().After(deadline) {
			t.Fatalf("an info line was not written within %v", 10*flushEvery)
		}
		time.Sleep(flushEvery / 10)
	}

	logger.Info("second")
	logger.With("k", "v").Warn("third")
	if s := out.String(); !strings.Contains(s, `"second"`) || !strings.Contains(s, `"third"`) {
		t.Fatalf("a warning did not flush at once: %q", s)
	}

	logger.Info("fourth")
	buf.Close()
	logger.Info("fifth")
	if s := out.String(); !strings.Contains(s, `"fourth"`) || !strings.Contains(s, `"fifth"`) {
		t.Fatalf("lines around Close were not written: %q", s)
	}
	if n := strings.Count(out.String(), "\n"); n != 5 {
		t.Fatalf("%d lines written, want 5: %q", n, out.String())
	}
}
