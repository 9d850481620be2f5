// Package lru is a cache of values bounded by their size in bytes: the
// least recently used go first, and a value bigger than an entry's bound is
// not kept, so that one cannot flush all the others.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values, at most maxBytes of them in all and none
// bigger than maxEntry. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	maxBytes, maxEntry int

	mu    sync.Mutex
	order *list.List // of *entry[K, V], most recently used first
	at    map[K]*list.Element
	size  int
}

type entry[K comparable, V any] struct {
	key   K
	value V
	size  int
}

// New returns an empty cache of at most maxBytes, no value bigger than
// maxEntry.
func New[K comparable, V any](maxBytes, maxEntry int) *Cache[K, V] {
	return &Cache[K, V]{maxBytes: maxBytes, maxEntry: min(maxEntry, maxBytes), order: list.New(), at: map[K]*list.Element{}}
}

// Get returns the value of k, and whether there is one.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.at[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).value, true
}

// Put keeps v, of size bytes, as k's value in place of any other, unless
// it is bigger than an entry's bound (then k has none).
func (c *Cache[K, V]) Put(k K, v V, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.at[k]; ok {
		c.order.Remove(e)
		delete(c.at, k)
		c.size -= e.Value.(*entry[K, V]).size
	}
	if size > c.maxEntry {
		return
	}
	c.at[k] = c.order.PushFront(&entry[K, V]{key: k, value: v, size: size})
	c.size += size
	for c.size > c.maxBytes {
		last := c.order.Back()
		old := last.Value.(*entry[K, V])
		c.order.Remove(last)
		delete(c.at, old.key)
		c.size -= old.size
	}
}

// Len returns the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.at)
}

// Bytes returns the size of the values kept.
func (c *Cache[K, V]) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
