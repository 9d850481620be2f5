package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// lineBuffer gathers log lines and writes them out together: at most
// flushEvery after the first line waiting, as soon as maxPending bytes wait,
// and at once after a line at Warn or above (see flushingHandler). The
// profile of GET /api/auth/me showed one write(2) per request for its log
// line among the larger costs of a request; buffered, a busy server writes
// its lines a few times a second. A process that crashes loses at most the
// last flushEvery of request lines; a warning or an error is never held.
type lineBuffer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
	err     error // the last write's, reported by the next Write
	timer   *time.Timer
	closed  bool
}

const (
	flushEvery = 100 * time.Millisecond
	maxPending = 64 << 10
)

func newLineBuffer(w io.Writer) *lineBuffer { return &lineBuffer{w: w} }

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.w.Write(p)
	}
	if err := b.err; err != nil {
		b.err = nil
		return 0, err
	}
	b.pending = append(b.pending, p...)
	switch {
	case len(b.pending) >= maxPending:
		b.flushLocked()
	case b.timer == nil:
		b.timer = time.AfterFunc(flushEvery, b.Flush)
	}
	return len(p), nil
}

// Flush writes what is waiting.
func (b *lineBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *lineBuffer) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if len(b.pending) == 0 {
		return
	}
	if _, err := b.w.Write(b.pending); err != nil {
		b.err = err
	}
	b.pending = b.pending[:0]
	if cap(b.pending) > 4*maxPending {
		b.pending = nil // after a burst of long lines
	}
}

// Close flushes and makes every later line a write of its own.
func (b *lineBuffer) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	b.closed = true
}

// flushingHandler flushes the buffer after every record at Warn or above,
// so that what an operator must see is written before anything else happens.
type flushingHandler struct {
	slog.Handler
	buf *lineBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.buf.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.buf}
}
