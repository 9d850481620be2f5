package render

import (
	"container/list"
	"context"
	"crypto/sha256"
	"html/template"
	"sync"
	"time"
)

// Cache keeps rendered content, so that a view of a version seen
// before does not render it again. It is keyed by a hash of the content
// type and the content, never by document: a caller reaches it only with
// content it has already read under its own actor, so it cannot learn
// anything from it that it did not send in.
//
// It is bounded in bytes (the rendered HTML plus the key); the least
// recently used entries go first, and a render bigger than maxEntry is not
// kept, so that one huge document cannot flush all the others.
type Cache struct {
	maxBytes, maxEntry int
	highlight          highlightBounds // highlightLimits unless configured

	mu      sync.Mutex
	size    int
	order   *list.List // of *renderEntry, most recently used first
	entries map[[sha256.Size]byte]*list.Element
}

type renderEntry struct {
	key  [sha256.Size]byte
	html template.HTML
	// retryAt is set on a render whose code highlighting ran out of time
	// (reading.go): past it, the next view renders it again.
	retryAt time.Time
}

// retryIncomplete is how long a render whose highlighting ran out of time
// is shown as it is before a view renders it again: a busy server shows
// some code plain for a while, without paying the time budget on every
// view.
const retryIncomplete = 30 * time.Second

// CacheBytes and CacheEntry are the bounds of the cache of a
// server: 32 MiB in all, 4 MiB for one render (a document at the 2 MiB
// body limit renders to about that much when it is ordinary text).
const (
	CacheBytes = 32 << 20
	CacheEntry = 4 << 20
)

// NewCache returns a cache of at most maxBytes of renders, none bigger
// than maxEntry (CacheBytes and CacheEntry for a server). highlightBudget
// is the time that highlighting the code of one document may take; 0
// keeps the default of 100 ms.
func NewCache(maxBytes, maxEntry int, highlightBudget time.Duration) *Cache {
	c := &Cache{
		maxBytes:  maxBytes,
		maxEntry:  maxEntry,
		highlight: highlightLimits,
		order:     list.New(),
		entries:   map[[sha256.Size]byte]*list.Element{},
	}
	if highlightBudget > 0 {
		c.highlight.budget = highlightBudget
	}
	return c
}

// Render returns Content's HTML for the content, from the cache when
// the same content was rendered before.
func (c *Cache) Render(ctx context.Context, contentType, content string) (template.HTML, error) {
	key := renderKey(contentType, content)
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		re := e.Value.(*renderEntry)
		if re.retryAt.IsZero() || time.Now().Before(re.retryAt) {
			c.mu.Unlock()
			return re.html, nil
		}
		re.retryAt = time.Now().Add(retryIncomplete) // one view renders it again
	}
	c.mu.Unlock()

	html, complete, err := renderBounded(ctx, contentType, content, c.highlight)
	if err != nil {
		return "", err
	}
	c.add(key, html, complete)
	return html, nil
}

// RenderNew renders content without looking in the cache or keeping the
// render: the live preview, whose drafts would push documents out.
func (c *Cache) RenderNew(ctx context.Context, contentType, content string) (template.HTML, error) {
	html, _, err := renderBounded(ctx, contentType, content, c.highlight)
	return html, err
}

func (c *Cache) add(key [sha256.Size]byte, html template.HTML, complete bool) {
	cost := len(html) + len(key)
	if cost > c.maxEntry {
		return
	}
	entry := &renderEntry{key: key, html: html}
	if !complete {
		entry.retryAt = time.Now().Add(retryIncomplete)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*renderEntry)
		if old.retryAt.IsZero() || !complete {
			return // rendered meanwhile by another request
		}
		// A render that ran out of time, replaced by a complete one.
		c.size += len(html) - len(old.html)
		old.html, old.retryAt = html, time.Time{}
	} else {
		c.entries[key] = c.order.PushFront(entry)
		c.size += cost
	}
	for c.size > c.maxBytes {
		last := c.order.Back()
		e := last.Value.(*renderEntry)
		c.order.Remove(last)
		delete(c.entries, e.key)
		c.size -= len(e.html) + len(e.key)
	}
}

// len returns the number of renders kept.
func (c *Cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

func renderKey(contentType, content string) [sha256.Size]byte {
	// A short content (a comment: a page looks up hundreds) is hashed
	// from a buffer on the stack, without allocating.
	var short [1 << 10]byte
	if len(contentType)+1+len(content) <= len(short) {
		b := append(short[:0], contentType...)
		b = append(b, 0)
		return sha256.Sum256(append(b, content...))
	}
	h := sha256.New()
	h.Write([]byte(contentType))
	h.Write([]byte{0})
	h.Write([]byte(content))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
