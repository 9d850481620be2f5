package comments

import (
	"container/list"
	"context"
	"slices"
	"sync"

	"quire"
)

// Versioned is what a store offers for the Service to keep a document's
// threads in memory (the stores of package sqlstore do): the comments
// version of a document, which every write of its comments and every save
// that moves their anchors changes in its transaction, read with the
// reader's visibility; the threads as every viewer shares them, with that
// version; and the current names of their people.
type Versioned interface {
	// CommentsSeq returns the comments version of document id: ENOTFOUND
	// as Threads.
	CommentsSeq(ctx context.Context, vis quire.Visibility, id string) (int64, error)
	// SharedThreads is Threads with Mine false throughout, who made each
	// reaction (by comment id, then emoji) and the version read.
	SharedThreads(ctx context.Context, f quire.CommentFilter) ([]quire.Comment, int, int64, map[string]map[string][]string, error)
	// CommentNames returns the names of the users ids.
	CommentNames(ctx context.Context, ids []string) (map[string]string, error)
}

// Bounds of the cache of threads: what a node keeps in all, and at most
// for one window (a larger window is read from the store at every view).
const (
	cacheBytes    = 32 << 20
	cacheMaxEntry = 4 << 20
)

// windowKey names a window of a document's threads at a comments version.
type windowKey struct {
	documentID, status string
	offset, limit      int
	seq                int64
}

// cachedWindow is a window of threads as the store read it for every viewer.
type cachedWindow struct {
	key      windowKey
	threads  []quire.Comment
	total    int
	reactors map[string]map[string][]string
	people   []string // the ids of the authors and resolvers
	size     int
}

// threadCache keeps windows of threads, least recently used out first,
// within cacheBytes. A window is found only at the version it was read
// at: a write anywhere (another node too) makes it unreachable, and it
// ages out.
type threadCache struct {
	mu    sync.Mutex
	lru   *list.List // of *cachedWindow, most recent first
	at    map[windowKey]*list.Element
	bytes int
}

func newThreadCache() *threadCache {
	return &threadCache{lru: list.New(), at: map[windowKey]*list.Element{}}
}

func (c *threadCache) get(k windowKey) *cachedWindow {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.at[k]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedWindow)
}

func (c *threadCache) put(w *cachedWindow) {
	if w.size > cacheMaxEntry {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.at[w.key]; ok {
		return
	}
	c.at[w.key] = c.lru.PushFront(w)
	c.bytes += w.size
	for c.bytes > cacheBytes {
		last := c.lru.Back()
		old := last.Value.(*cachedWindow)
		c.lru.Remove(last)
		delete(c.at, old.key)
		c.bytes -= old.size
	}
}

// commentSize is about what c holds in memory, for the cache's bound.
func commentSize(c *quire.Comment) int {
	n := 400 + len(c.ID) + len(c.DocumentID) + len(c.ParentID) + len(c.AuthorID) + len(c.Body) + len(c.ResolvedByID) +
		len(c.AuthorName) + len(c.ResolvedByName) + 64*len(c.Reactions)
	if a := c.Anchor; a != nil {
		n += 64 + len(a.Quote) + len(a.Prefix) + len(a.Suffix)
	}
	return n
}

// newWindow is what the store read, sized, with the people it names.
func newWindow(k windowKey, threads []quire.Comment, total int, reactors map[string]map[string][]string) *cachedWindow {
	w := &cachedWindow{key: k, threads: threads, total: total, reactors: reactors, size: 200}
	people := map[string]bool{}
	add := func(c *quire.Comment) {
		w.size += commentSize(c)
		people[c.AuthorID] = true
		if c.ResolvedByID != "" {
			people[c.ResolvedByID] = true
		}
	}
	for i := range threads {
		add(&threads[i])
		for j := range threads[i].Replies {
			add(&threads[i].Replies[j])
		}
	}
	for _, byEmoji := range reactors {
		for _, ids := range byEmoji {
			w.size += 64 + 48*len(ids)
		}
	}
	for id := range people {
		w.people = append(w.people, id)
		w.size += 64 + len(id)
	}
	slices.Sort(w.people)
	return w
}

// copyFor is w's threads as viewer reads them, their people named as
// names has them: a copy, which the caller may change.
func (w *cachedWindow) copyFor(viewer string, names map[string]string) []quire.Comment {
	one := func(c quire.Comment) quire.Comment {
		c.AuthorName = names[c.AuthorID]
		if c.ResolvedByID != "" {
			c.ResolvedByName = names[c.ResolvedByID]
		}
		if c.Anchor != nil {
			a := *c.Anchor
			c.Anchor = &a
		}
		// The cached reactions are no one's: a copy only for the viewer's.
		byEmoji, copied := w.reactors[c.ID], false
		for i, r := range c.Reactions {
			if viewer != "" && slices.Contains(byEmoji[r.Emoji], viewer) {
				if !copied {
					c.Reactions, copied = slices.Clone(c.Reactions), true
				}
				c.Reactions[i].Mine = true
			}
		}
		return c
	}
	out := make([]quire.Comment, len(w.threads))
	for i, t := range w.threads {
		out[i] = one(t)
		if t.Replies != nil {
			out[i].Replies = make([]quire.Comment, len(t.Replies))
			for j, r := range t.Replies {
				out[i].Replies[j] = one(r)
			}
		}
	}
	return out
}

// cachedThreads reads a window of threads of document f.DocumentID for
// f.ViewerID through the cache: the comments version (with f's
// visibility: the one query of a view the cache holds, besides the names
// of its people), then the window at that version, from the cache or the
// store.
func (s *Service) cachedThreads(ctx context.Context, v Versioned, f quire.CommentFilter) ([]quire.Comment, int, error) {
	seq, err := v.CommentsSeq(ctx, f.Visibility, f.DocumentID)
	if err != nil {
		return nil, 0, err
	}
	k := windowKey{documentID: f.DocumentID, status: f.Status, offset: f.Offset, limit: f.Limit, seq: seq}
	if w := s.cache.get(k); w != nil {
		names, err := v.CommentNames(ctx, w.people)
		if err != nil {
			return nil, 0, err
		}
		return w.copyFor(f.ViewerID, names), w.total, nil
	}
	threads, total, seq, reactors, err := v.SharedThreads(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	k.seq = seq
	w := newWindow(k, threads, total, reactors)
	s.cache.put(w)
	names := map[string]string{}
	for i := range threads {
		for _, c := range append([]quire.Comment{threads[i]}, threads[i].Replies...) {
			names[c.AuthorID] = c.AuthorName
			if c.ResolvedByID != "" {
				names[c.ResolvedByID] = c.ResolvedByName
			}
		}
	}
	return w.copyFor(f.ViewerID, names), total, nil
}
