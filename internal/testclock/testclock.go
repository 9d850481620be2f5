// Package testclock is a settable clock for tests: the services of one test
// server share it, and the test moves it on instead of sleeping.
package testclock

import (
	"sync"
	"time"
)

// Clock is safe for use by several goroutines.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New is a Clock that reads now until it is moved.
func New(now time.Time) *Clock {
	return &Clock{now: now}
}

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
