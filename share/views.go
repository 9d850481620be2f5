package share

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"quire"
)

// viewCounter counts the views of shares in memory between two writes, so
// that a page view costs no write: FlushViews writes them with one UPDATE
// per share viewed.
type viewCounter struct {
	mu     sync.Mutex
	counts map[string]quire.ShareViews
}

func (c *viewCounter) add(id string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.counts[id]
	v.Count++
	if at.After(v.Last) {
		v.Last = at
	}
	c.counts[id] = v
}

// take returns the counts and starts afresh.
func (c *viewCounter) take() map[string]quire.ShareViews {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.counts
	c.counts = map[string]quire.ShareViews{}
	return out
}

// putBack adds counts a failed write did not store.
func (c *viewCounter) putBack(counts map[string]quire.ShareViews) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, v := range counts {
		cur := c.counts[id]
		cur.Count += v.Count
		if v.Last.After(cur.Last) {
			cur.Last = v.Last
		}
		c.counts[id] = cur
	}
}

// CountView counts one view of the share acc opened.
func (s *Service) CountView(acc *Access) { s.views.add(acc.Share.ID, s.now()) }

// FlushViews writes the views counted since the last flush. On a failure
// they are kept for the next.
func (s *Service) FlushViews(ctx context.Context) error {
	counts := s.views.take()
	if len(counts) == 0 {
		return nil
	}
	if err := s.store.AddShareViews(ctx, counts); err != nil {
		s.views.putBack(counts)
		return err
	}
	return nil
}

// RunViews flushes the views every period until ctx ends, and once more
// then (a shutdown keeps what was counted).
func (s *Service) RunViews(ctx context.Context, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := s.FlushViews(end); err != nil {
				logger.Error("share views: last flush failed", "err", err)
			}
			return
		case <-t.C:
			if err := s.FlushViews(ctx); err != nil {
				logger.Warn("share views: flush failed, kept for the next", "err", err)
			}
		}
	}
}
