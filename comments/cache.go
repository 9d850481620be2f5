package comments

import (
	"context"
	"hash/maphash"
	"slices"
	"strconv"

	"quire"
	"quire/internal/lru"
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
	CommentsSeq(ctx context.Context, vis quire.Visibility, id string) (quire.CommentsVersion, error)
	// SharedThreads is Threads with Mine false throughout, who made each
	// reaction (by comment id, then emoji) and the version read.
	SharedThreads(ctx context.Context, f quire.CommentFilter) ([]quire.Comment, int, quire.CommentsVersion, map[string]map[string][]string, error)
	// SharedReactions reads the version and the reactions of the threads
	// roots of document documentID and of their replies, as
	// SharedThreads has them: the counts by comment id and who made each.
	SharedReactions(ctx context.Context, vis quire.Visibility, documentID string, roots []string) (quire.CommentsVersion,
		map[string][]quire.Reaction, map[string]map[string][]string, error)
	// CommentNames returns the names of the users ids.
	CommentNames(ctx context.Context, ids []string) (map[string]string, error)
}

// Bounds of the cache of threads: what a node keeps in all, and at most
// for one window (a larger window is read from the store at every view).
const (
	cacheBytes    = 32 << 20
	cacheMaxEntry = 4 << 20
)

// windowKey names a window of a document's threads.
type windowKey struct {
	documentID, status string
	offset, limit      int
}

// cachedWindow is a window of threads as the store read it for every viewer.
type cachedWindow struct {
	seq       quire.CommentsVersion // the comments version it was read at
	threads   []quire.Comment
	total     int
	reactions map[string][]quire.Reaction // by comment id, as in threads
	reactors  map[string]map[string][]string
	people    []string // the ids of the authors and resolvers
	size      int
}

// newThreadCache returns the cache of windows, least recently used out
// first, within cacheBytes: one version of each, the last read. A window is
// used only at the version it was read at: after a write anywhere (another
// node too), the next view reads it anew, in its place.
func newThreadCache() *lru.Cache[windowKey, *cachedWindow] {
	return lru.New[windowKey, *cachedWindow](cacheBytes, cacheMaxEntry)
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
func newWindow(seq quire.CommentsVersion, threads []quire.Comment, total int, reactors map[string]map[string][]string) *cachedWindow {
	w := &cachedWindow{seq: seq, threads: threads, total: total, reactions: map[string][]quire.Reaction{}, reactors: reactors, size: 200}
	people := map[string]bool{}
	add := func(c *quire.Comment) {
		if len(c.Reactions) > 0 {
			w.reactions[c.ID] = c.Reactions
		}
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

// withReactions is w with its reactions as reactions and reactors have
// them, read at seq: a new window, which shares w's comments but for their
// reactions (a cached window is never changed: views read it at once).
func (w *cachedWindow) withReactions(seq quire.CommentsVersion, reactions map[string][]quire.Reaction,
	reactors map[string]map[string][]string) *cachedWindow {
	out := *w
	out.seq, out.reactions, out.reactors = seq, reactions, reactors
	one := func(c quire.Comment) quire.Comment {
		c.Reactions = reactions[c.ID]
		if c.Reactions == nil {
			c.Reactions = []quire.Reaction{}
		}
		return c
	}
	out.threads = make([]quire.Comment, len(w.threads))
	for i, t := range w.threads {
		out.threads[i] = one(t)
		if t.Replies != nil {
			out.threads[i].Replies = make([]quire.Comment, len(t.Replies))
			for j, r := range t.Replies {
				out.threads[i].Replies[j] = one(r)
			}
		}
	}
	for _, byEmoji := range w.reactors {
		for _, ids := range byEmoji {
			out.size -= 64 + 48*len(ids)
		}
	}
	for _, byEmoji := range reactors {
		for _, ids := range byEmoji {
			out.size += 64 + 48*len(ids)
		}
	}
	return &out
}

// roots is the ids of w's threads.
func (w *cachedWindow) roots() []string {
	ids := make([]string, len(w.threads))
	for i := range w.threads {
		ids[i] = w.threads[i].ID
	}
	return ids
}

// copyFor is w's threads as viewer reads them, their people named as
// names has them: a copy, which the caller may change; and viewer's
// reactions (mineOf).
func (w *cachedWindow) copyFor(viewer string, names map[string]string) ([]quire.Comment, map[string][]string) {
	mine := w.mineOf(viewer)
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
		if emoji := mine[c.ID]; len(emoji) > 0 {
			c.Reactions = slices.Clone(c.Reactions)
			for i, r := range c.Reactions {
				c.Reactions[i].Mine = slices.Contains(emoji, r.Emoji)
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
	return out, mine
}

// mineOf is viewer's reactions in w, by comment id: a walk of who made
// each reaction of the window.
func (w *cachedWindow) mineOf(viewer string) map[string][]string {
	mine := map[string][]string{}
	if viewer == "" {
		return mine
	}
	for id, byEmoji := range w.reactors {
		for emoji, ids := range byEmoji {
			if slices.Contains(ids, viewer) {
				mine[id] = append(mine[id], emoji)
			}
		}
	}
	return mine
}

// cachedWindow reads a window of threads of document f.DocumentID for
// f.ViewerID through the cache: the comments version (with f's
// visibility: the one query of a view the cache holds, besides the names
// of its people), then the window at that version: from the cache; with
// its reactions read again when only reactions changed since it was read;
// or from the store. Its Threads are nil when its version is known.
func (s *Service) cachedWindow(ctx context.Context, v Versioned, f quire.CommentFilter, known string) (Window, error) {
	seq, err := v.CommentsSeq(ctx, f.Visibility, f.DocumentID)
	if err != nil {
		return Window{}, err
	}
	k := windowKey{documentID: f.DocumentID, status: f.Status, offset: f.Offset, limit: f.Limit}
	w, ok := s.cache.Get(k)
	if ok && w.seq != seq && w.seq.Threads == seq.Threads {
		rseq, reactions, reactors, err := v.SharedReactions(ctx, f.Visibility, f.DocumentID, w.roots())
		if err != nil {
			return Window{}, err
		}
		if ok = rseq.Threads == w.seq.Threads; ok { // else a thread changed meanwhile: read it all
			w, seq = w.withReactions(rseq, reactions, reactors), rseq
			s.cache.Put(k, w, w.size)
		}
	}
	if ok && w.seq == seq {
		names, err := v.CommentNames(ctx, w.people)
		if err != nil {
			return Window{}, err
		}
		out := Window{Total: w.total, Version: w.version(names), Reactions: w.reactions}
		if out.Version == known {
			out.Mine = w.mineOf(f.ViewerID)
		} else {
			out.Threads, out.Mine = w.copyFor(f.ViewerID, names)
		}
		return out, nil
	}
	threads, total, seq, reactors, err := v.SharedThreads(ctx, f)
	if err != nil {
		return Window{}, err
	}
	w = newWindow(seq, threads, total, reactors)
	s.cache.Put(k, w, w.size)
	names := map[string]string{}
	for i := range threads {
		for _, c := range append([]quire.Comment{threads[i]}, threads[i].Replies...) {
			names[c.AuthorID] = c.AuthorName
			if c.ResolvedByID != "" {
				names[c.ResolvedByID] = c.ResolvedByName
			}
		}
	}
	out := Window{Total: total, Version: w.version(names), Reactions: w.reactions}
	out.Threads, out.Mine = w.copyFor(f.ViewerID, names)
	return out, nil
}

// version names what the window shows with its people named as names has
// them: its comments version but for reactions (Threads) and a hash of
// those names. Two reads of a document's window with the same version
// show the same threads, but for their reactions.
func (w *cachedWindow) version(names map[string]string) string {
	var h maphash.Hash
	h.SetSeed(namesSeed)
	for _, id := range w.people {
		h.WriteString(id)
		h.WriteByte(0)
		h.WriteString(names[id])
		h.WriteByte(0)
	}
	return strconv.FormatInt(w.seq.Threads, 10) + "-" + strconv.FormatUint(h.Sum64(), 16)
}

// namesSeed seeds the hash of names in versions: one per process, so that
// no one can choose names whose hashes collide.
var namesSeed = maphash.MakeSeed()
