package docindex

import (
	"container/heap"
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"modernc.org/libc"
)

// Order is the order of a list.
type Order int

const (
	ByRelevance Order = iota // bm25 (a search only)
	ByUpdated
	ByCreated
	ByStatus // draft, review, published, archived
)

// Query is one list, its visibility included. Terms are the words of the
// search folded by QueryWord, each once, in the order of the store's
// full-text query (their order decides the order of bm25's sum).
type Query struct {
	Terms                                                   []string
	Tags                                                    []string
	Status, VisibilityIs, DepartmentID, ProjectID, FolderID string

	// Visibility: All, or what UserID may see: own documents, public ones,
	// those of DepartmentOfUser ("" for none) with department visibility,
	// those of Projects with project visibility.
	All              bool
	UserID           string
	DepartmentOfUser string
	Projects         []string

	Order         Order
	Desc          bool
	Offset, Limit int // Limit <= 0: all

	// At is the change the caller's snapshot holds: the index answers
	// only when its cursor is exactly there.
	At int64
}

// bm25's parameters, variables so that every operation on them happens at
// run time in float64, as FTS5's do in C doubles.
var (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Search answers q: the rows (seq) of the page in order, and the total. ok
// is false when the index cannot answer exactly: its cursor is not q.At,
// or a search while a foreign text is live.
func (x *Index) Search(q *Query) (seqs []int64, total int, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.cursor.Load() != q.At || len(q.Terms) > 0 && x.foreignRows > 0 {
		return nil, 0, false
	}
	// The lists every match is in: one per term (the union of the terms it
	// is a prefix of, with the weights summed), one per tag.
	var lists []list
	var sc scratch
	defer sc.release()
	idf := make([]float64, len(q.Terms))
	for i, term := range q.Terms {
		l := x.phrase(&sc, term)
		l.phrase = i
		nHit := l.size()
		// FTS5's bm25: IDF = log((N - nHit + 0.5) / (nHit + 0.5)), at least
		// 1e-6, N and nHit counting every row, those in the trash too.
		v := libc.Xlog(nil, (float64(x.rows-nHit)+0.5)/(float64(nHit)+0.5))
		if v <= 0.0 {
			v = 1e-6
		}
		idf[i] = v
		lists = append(lists, l)
	}
	for _, tag := range q.Tags {
		lists = append(lists, list{docs: x.tags[tag], phrase: -1})
	}
	if len(lists) == 0 {
		return nil, 0, false
	}
	f := filter{x: x, q: q}
	if !f.prepare() {
		return []int64{}, 0, true
	}
	avgdl := float64(x.tokens) / float64(x.rows)

	slices.SortFunc(lists, func(a, b list) int { return a.size() - b.size() })
	k := q.Offset + q.Limit
	if q.Limit <= 0 {
		k = -1
	}
	m := matcher{x: x, q: q, f: &f, lists: lists, idf: idf, avgdl: avgdl, freq: make([]uint32, len(q.Terms)),
		cur: make([]int, len(lists)), top: &ranked{desc: q.Desc, ids: x.ids}, k: k}
	// The driver is the shortest list of documents, whose documents are
	// looked for in the others; when every list is a bitmap (dense), their
	// intersection is taken a word of 64 documents at a time.
	if di := slices.IndexFunc(lists, func(l list) bool { return l.bits == nil }); di >= 0 {
		m.drive(di)
	} else {
		m.intersect()
	}
	total, top := m.total, m.top
	page := top.sorted()
	if q.Offset >= len(page) {
		return []int64{}, total, true
	}
	page = page[q.Offset:]
	seqs = make([]int64, len(page))
	for i, e := range page {
		seqs[i] = x.seqs[e.doc]
	}
	return seqs, total, true
}

// matcher finds the documents in every list of a search, and counts and
// ranks those the filter keeps.
type matcher struct {
	x     *Index
	q     *Query
	f     *filter
	lists []list
	idf   []float64
	avgdl float64
	freq  []uint32
	cur   []int // the position of the document in each list of documents
	top   *ranked
	k     int
	total int
}

// drive looks for each document of lists[di] in the others.
func (m *matcher) drive(di int) {
	x, lists := m.x, m.lists
	driver := lists[di]
next:
	for i, d := range driver.docs {
		if driver.phrase < 0 && x.dead.has(d) {
			continue // a tag's list keeps dead numbers; a term's has none
		}
		for j := range lists {
			l := &lists[j]
			if j == di {
				continue
			}
			if l.bits != nil {
				if !l.has(d) {
					continue next
				}
				continue
			}
			c := m.cur[j]
			if c < len(l.docs) && l.docs[c] < d {
				// The next one, most often when the lists are about as
				// long; a gallop beyond.
				if c++; c < len(l.docs) && l.docs[c] < d {
					c = gallop(l.docs, c, d)
				}
			}
			m.cur[j] = c
			if c == len(l.docs) {
				break next
			}
			if l.docs[c] != d {
				continue next
			}
		}
		m.cur[di] = i
		m.match(d)
	}
}

// intersect takes the documents of every list, all bitmaps, a word at a
// time, those in the trash left out at once.
func (m *matcher) intersect() {
	trashed := m.x.trashed
	acc := m.lists[0].bits
	for i, w := range acc {
		for j := 1; j < len(m.lists) && w != 0; j++ {
			w &= m.lists[j].bits[i]
		}
		if i < len(trashed) {
			w &^= trashed[i]
		}
		for w != 0 {
			d := uint32(i*64 + bits.TrailingZeros64(w))
			w &= w - 1
			m.match(d)
		}
	}
}

// match counts and ranks d, which every list holds, if the filter keeps it.
func (m *matcher) match(d uint32) {
	x, q := m.x, m.q
	if !m.f.keep(d) {
		return
	}
	m.total++
	var key float64
	switch q.Order {
	case ByRelevance:
		for j := range m.lists {
			l := &m.lists[j]
			switch {
			case l.phrase < 0:
			case l.bits != nil:
				m.freq[l.phrase] = l.count(d)
			default:
				m.freq[l.phrase] = l.f[m.cur[j]]
			}
		}
		// FTS5's bm25 for this row, operation by operation; the store
		// orders by its negation, which is exact.
		D := float64(x.dlen[d])
		score := 0.0
		for p := range m.freq {
			fr := float64(m.freq[p])
			score += m.idf[p] * ((fr * (bm25K1 + 1.0)) / (fr + bm25K1*(1-bm25B+bm25B*D/m.avgdl)))
		}
		key = score
	case ByUpdated:
		key = float64(x.updated[d])
	case ByCreated:
		key = float64(x.created[d])
	case ByStatus:
		key = float64(x.status[d])
	}
	m.top.offer(entry{key: key, doc: d}, m.k)
}

// list is the live documents of one term, each with the weighted count of
// the term in it (f), or of one tag (f nil, phrase -1).
//
// The list of a term some of whose words are dense (dense.go) is a bitmap:
// bits holds every live document of the term, n their number, and a
// document's count is that of its dense words (dense) plus its entry in
// docs, the documents of its other words and of the dense words' deltas.
type list struct {
	docs   []uint32
	f      []uint32
	phrase int
	// held names the scratch's buffers of docs and f (held[0] 0: none),
	// for drop.
	held [2]int

	bits  []uint64
	dense []denseTerm
	n     int
	c     int // where count is in docs
}

// size is the number of documents of l.
func (l *list) size() int {
	if l.bits != nil {
		return l.n
	}
	return len(l.docs)
}

// has reports whether the bitmap of l holds d.
func (l *list) has(d uint32) bool {
	i := int(d / 64)
	return i < len(l.bits) && l.bits[i]&(1<<(d%64)) != 0
}

// count returns the count of d in the bitmap list l, d at least the last
// one asked.
func (l *list) count(d uint32) uint32 {
	var c uint32
	for i := range l.dense {
		c += l.dense[i].count(d)
	}
	if l.c < len(l.docs) && l.docs[l.c] < d {
		l.c = gallop(l.docs, l.c, d)
	}
	if l.c < len(l.docs) && l.docs[l.c] == d {
		c += l.f[l.c]
	}
	return c
}

// phrase is the list of the term and every longer term it begins, as
// FTS5's prefix query "term"* matches them (the counts of a document in
// several summed), without the dead numbers: its length is FTS5's nHit.
func (x *Index) phrase(sc *scratch, term string) list {
	lo, _ := slices.BinarySearchFunc(x.sorted, term, func(t uint32, s string) int { return strings.Compare(x.words[t], s) })
	hi := lo
	for hi < len(x.sorted) && strings.HasPrefix(x.words[x.sorted[hi]], term) {
		hi++
	}
	if hi == lo {
		return list{}
	}
	parts := make(shortest, 0, hi-lo)
	var dense []denseTerm
	for _, t := range x.sorted[lo:hi] {
		p := &x.posts[t]
		if p.dense() {
			// Its base read where it lies; its delta merged with the
			// other words.
			d := readDense(x.baseOf(p))
			dense = append(dense, denseTerm{d: d})
			parts = append(parts, x.unpackAll(sc, nil, false, p.data, d.last))
			continue
		}
		parts = append(parts, x.decode(sc, p))
	}
	// The two shortest first, as Huffman's code is built: a word's own
	// list, mostly far longer than those of the words it begins, is then
	// copied once, at the end, rather than in every round.
	heap.Init(&parts)
	for len(parts) > 1 {
		a := heap.Pop(&parts).(list)
		b := heap.Pop(&parts).(list)
		heap.Push(&parts, union(sc, a, b))
		// Copied: their buffers serve the next unions, so that a word
		// beginning many terms holds two lists' worth, not all of them.
		sc.drop(a)
		sc.drop(b)
	}
	l := parts[0]
	if dense != nil {
		x.bitmap(sc, &l, dense)
	}
	return l
}

// bitmap makes l, the union of the packed parts of a term, the term's
// bitmap list with its dense words.
func (x *Index) bitmap(sc *scratch, l *list, dense []denseTerm) {
	b := sc.words((len(x.seqs) + 63) / 64)
	for _, t := range dense {
		for i := range len(t.d.bits) / 8 {
			b[i] |= le64(t.d.bits[i*8:])
		}
	}
	for _, d := range l.docs {
		b[d/64] |= 1 << (d % 64)
	}
	if x.deadDocs > 0 {
		for i, dead := range x.dead[:min(len(b), len(x.dead))] {
			b[i] &^= dead
		}
	}
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	l.bits, l.dense, l.n = b, dense, n
}

// decode unpacks a posting, its base then the rest, without its dead
// numbers.
func (x *Index) decode(sc *scratch, p *posting) list {
	return x.unpackAll(sc, x.baseOf(p), p.dense(), p.data, 0)
}

// unpackAll decodes a base, dense or packed, and packed postings after it,
// their gaps counted on from the base's last document (from d when the
// base is empty), without the dead numbers.
func (x *Index) unpackAll(sc *scratch, base []byte, isDense bool, data []byte, d uint32) list {
	var dn dense
	n := len(base) + len(data) // at least a byte an entry
	if isDense {
		dn = readDense(base)
		n = len(dn.counts) + len(data)
	}
	var l list
	docs, fs := sc.get(n, &l.held[0])[:n], sc.get(n, &l.held[1])[:n]
	k := 0
	if isDense {
		dn.each(func(doc, w uint32) {
			if !x.dead.has(doc) {
				docs[k], fs[k] = doc, w
				k++
			}
		})
		d = dn.last
	} else {
		k, d = x.unpack(base, docs, fs, 0, d)
	}
	k, _ = x.unpack(data, docs, fs, k, d)
	l.docs, l.f = docs[:k], fs[:k]
	return l
}

// unpack decodes data into docs and fs from k on, its gaps counted from
// document d, and returns the next k and the last document. Most gaps and
// counts take one byte, which is read where it stands.
func (x *Index) unpack(data []byte, docs, fs []uint32, k int, d uint32) (int, uint32) {
	anyDead := x.deadDocs > 0
	for i := 0; i < len(data); {
		v := uint64(data[i])
		if v < 0x80 {
			i++
		} else {
			var m int
			v, m = binary.Uvarint(data[i:])
			i += m
		}
		d += uint32(v >> 1)
		w := uint32(1)
		if v&1 != 0 {
			c := uint64(data[i])
			if c < 0x80 {
				i++
			} else {
				var m int
				c, m = binary.Uvarint(data[i:])
				i += m
			}
			w = uint32(c)
		}
		if anyDead && x.dead.has(d) {
			continue
		}
		docs[k], fs[k] = d, w
		k++
	}
	return k, d
}

// union merges two unions, summing the counts of a document in both. A
// run of one list before the next document of the other is copied whole.
func union(sc *scratch, a, b list) list {
	var u list
	u.docs, u.f = sc.get(len(a.docs)+len(b.docs), &u.held[0]), sc.get(len(a.docs)+len(b.docs), &u.held[1])
	i, j := 0, 0
	for i < len(a.docs) && j < len(b.docs) {
		switch da, db := a.docs[i], b.docs[j]; {
		case da < db:
			e := i + 1
			if e < len(a.docs) && a.docs[e] < db {
				e = gallop(a.docs, e, db)
			}
			u.docs, u.f = append(u.docs, a.docs[i:e]...), append(u.f, a.f[i:e]...)
			i = e
		case db < da:
			e := j + 1
			if e < len(b.docs) && b.docs[e] < da {
				e = gallop(b.docs, e, da)
			}
			u.docs, u.f = append(u.docs, b.docs[j:e]...), append(u.f, b.f[j:e]...)
			j = e
		default:
			u.docs, u.f = append(u.docs, da), append(u.f, a.f[i]+b.f[j])
			i++
			j++
		}
	}
	u.docs, u.f = append(u.docs, a.docs[i:]...), append(u.f, a.f[i:]...)
	u.docs, u.f = append(u.docs, b.docs[j:]...), append(u.f, b.f[j:]...)
	return u
}

// shortest is a heap of lists, the shortest at its root.
type shortest []list

func (h shortest) Len() int           { return len(h) }
func (h shortest) Less(i, j int) bool { return len(h[i].docs) < len(h[j].docs) }
func (h shortest) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *shortest) Push(v any)        { *h = append(*h, v.(list)) }
func (h *shortest) Pop() any {
	v := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return v
}

// gallop returns the first index at or after from whose value is at least
// d (len(docs) when none is).
func gallop(docs []uint32, from int, d uint32) int {
	if from >= len(docs) || docs[from] >= d {
		return from
	}
	step := 1
	lo, hi := from, from+1
	for hi < len(docs) && docs[hi] < d {
		lo = hi
		step *= 2
		hi = from + step
	}
	hi = min(hi, len(docs))
	i, _ := slices.BinarySearch(docs[lo:hi], d)
	return lo + i
}

// filter holds a query's conditions on the columns, interned.
type filter struct {
	x                                     *Index
	q                                     *Query
	status, visIs                         uint8
	dept, project, folder, user, userDept uint32
	hasStatus, hasVisIs, hasDept, hasProj bool
	hasFolder, hasUserDept                bool
	projects                              []uint32        // a user's, when few
	projectSet                            map[uint32]bool // when many
}

// prepare interns the conditions, and reports false when one of them names
// a value no document has, so that nothing matches.
func (f *filter) prepare() bool {
	x, q := f.x, f.q
	lookup := func(s string, has *bool, v *uint32) bool {
		if s == "" {
			return true
		}
		*has = true
		n, ok := x.names[s]
		*v = n
		return ok
	}
	if q.Status != "" {
		f.hasStatus = true
		if f.status = statusCode[q.Status]; f.status == 0 {
			return false
		}
	}
	if q.VisibilityIs != "" {
		f.hasVisIs = true
		if f.visIs = visibilityCode[q.VisibilityIs]; f.visIs == 0 {
			return false
		}
	}
	if !lookup(q.DepartmentID, &f.hasDept, &f.dept) || !lookup(q.ProjectID, &f.hasProj, &f.project) ||
		!lookup(q.FolderID, &f.hasFolder, &f.folder) {
		return false
	}
	if q.All {
		return true
	}
	f.user = ^uint32(0) // owns nothing until found
	if n, ok := x.names[q.UserID]; ok && q.UserID != "" {
		f.user = n
	}
	if q.DepartmentOfUser != "" {
		f.hasUserDept = true
		f.userDept = ^uint32(0)
		if n, ok := x.names[q.DepartmentOfUser]; ok {
			f.userDept = n
		}
	}
	for _, p := range q.Projects {
		if n, ok := x.names[p]; ok && p != "" {
			f.projects = append(f.projects, n)
		}
	}
	if len(f.projects) > 8 {
		// A set, so that a test stays a step whatever the user's number
		// of projects.
		f.projectSet = make(map[uint32]bool, len(f.projects))
		for _, n := range f.projects {
			f.projectSet[n] = true
		}
	}
	return true
}

// keep reports whether document d is outside the trash, passes the
// filters and is visible, as the store's conditions say.
func (f *filter) keep(d uint32) bool {
	x := f.x
	if x.trashed.has(d) ||
		f.hasStatus && x.status[d] != f.status ||
		f.hasVisIs && x.vis[d] != f.visIs ||
		f.hasDept && x.dept[d] != f.dept ||
		f.hasProj && x.project[d] != f.project ||
		f.hasFolder && x.folder[d] != f.folder {
		return false
	}
	if f.q.All {
		return true
	}
	// Public first: it reads no other column (vis is a byte a document,
	// the others four).
	switch v := x.vis[d]; {
	case v == visPublic:
		return true
	case v == visDepartment && f.hasUserDept && x.dept[d] == f.userDept && x.dept[d] != 0:
		return true
	case v == visProject && x.project[d] != 0 && f.member(x.project[d]):
		return true
	}
	return x.owner[d] == f.user
}

// member reports whether the user is a member of project p.
func (f *filter) member(p uint32) bool {
	if f.projectSet != nil {
		return f.projectSet[p]
	}
	return slices.Contains(f.projects, p)
}

// entry is one match and its sort key.
type entry struct {
	key float64
	doc uint32
}

// ranked keeps the first k entries of the order: by key, then by id, both
// descending when desc (the store's ORDER BY key DESC, id DESC) or both
// ascending. It is a heap whose root is the last of those kept.
type ranked struct {
	desc bool
	ids  []string
	e    []entry
}

// before reports whether a comes before b in the order.
func (r *ranked) before(a, b entry) bool {
	if a.key != b.key {
		return (a.key > b.key) == r.desc
	}
	return (r.ids[a.doc] > r.ids[b.doc]) == r.desc
}

func (r *ranked) Len() int           { return len(r.e) }
func (r *ranked) Less(i, j int) bool { return r.before(r.e[j], r.e[i]) }
func (r *ranked) Swap(i, j int)      { r.e[i], r.e[j] = r.e[j], r.e[i] }
func (r *ranked) Push(v any)         { r.e = append(r.e, v.(entry)) }
func (r *ranked) Pop() any {
	v := r.e[len(r.e)-1]
	r.e = r.e[:len(r.e)-1]
	return v
}

// offer adds e when fewer than k are kept (k < 0: no bound) or e comes
// before the last kept.
func (r *ranked) offer(e entry, k int) {
	switch {
	case k < 0 || len(r.e) < k:
		heap.Push(r, e)
	case k > 0 && r.before(e, r.e[0]):
		r.e[0] = e
		heap.Fix(r, 0)
	}
}

// sorted returns the kept entries in order.
func (r *ranked) sorted() []entry {
	slices.SortFunc(r.e, func(a, b entry) int {
		if r.before(a, b) {
			return -1
		}
		if r.before(b, a) {
			return 1
		}
		return 0
	})
	return r.e
}

// scratch lends a search the buffers of its lists, from pools shared by
// all searches, one for each power of two of a buffer's size: a search for
// common words decodes lists of a good part of all documents, and
// allocating them anew each time would make most of its garbage, while a
// small list given a pooled buffer of the largest size would keep many of
// them for nothing.
type scratch struct {
	held       []*[]uint32
	bitmaps    []*[]uint64
	lent, most int // bytes lent and not given back, and their most
}

var buffers [33]sync.Pool // of *[]uint32, by bits.Len of their capacity - 1

// get returns an empty buffer with room for n values, and sets *h to name
// it for drop.
func (sc *scratch) get(n int, h *int) []uint32 {
	c := bits.Len(uint(max(n, 64) - 1)) // 2^c >= n
	var b *[]uint32
	if v, ok := buffers[c].Get().(*[]uint32); ok {
		b = v
	} else {
		b = new([]uint32)
		*b = make([]uint32, 0, 1<<c)
	}
	sc.held = append(sc.held, b)
	*h = len(sc.held)
	sc.lent += 4 * cap(*b)
	sc.most = max(sc.most, sc.lent)
	return (*b)[:0]
}

var bitmaps [33]sync.Pool // of *[]uint64, as buffers

// words returns n zeroed words for a bitmap, given back by release.
func (sc *scratch) words(n int) []uint64 {
	c := bits.Len(uint(max(n, 64) - 1))
	b, ok := bitmaps[c].Get().(*[]uint64)
	if !ok {
		b = new([]uint64)
		*b = make([]uint64, 1<<c)
	}
	sc.bitmaps = append(sc.bitmaps, b)
	sc.lent += 8 * cap(*b)
	sc.most = max(sc.most, sc.lent)
	w := (*b)[:n]
	clear(w)
	return w
}

// drop gives back the buffers of l, which is not read again.
func (sc *scratch) drop(l list) {
	for _, h := range l.held {
		if h > 0 && sc.held[h-1] != nil {
			sc.lent -= 4 * cap(*sc.held[h-1])
			put(sc.held[h-1])
			sc.held[h-1] = nil
		}
	}
}

// release gives every buffer back.
func (sc *scratch) release() {
	for _, b := range sc.held {
		if b != nil {
			put(b)
		}
	}
	for _, b := range sc.bitmaps {
		bitmaps[bits.Len(uint(cap(*b)-1))].Put(b)
	}
	sc.held, sc.bitmaps = nil, nil
}

// put pools b by its capacity, a power of two unless it was outgrown (then
// it is left to the collector).
func put(b *[]uint32) {
	if c := cap(*b); c&(c-1) == 0 {
		buffers[bits.Len(uint(c-1))].Put(b)
	}
}
