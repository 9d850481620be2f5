// Package docindex is an index of the documents kept in memory beside the
// SQLite store: the words of every document with their weighted counts, and
// the columns that lists filter on, so that a search or a filtered list is
// matched, counted and ranked without reading the database, and only the
// page it returns is read from it (by the store, which checks visibility
// again in that query).
//
// Its answers are those of the store's own queries, exactly: the same
// documents, the same total and the same order, relevance being SQLite
// FTS5's bm25 over the same columns with the same weights, computed with
// the same floating-point operations in the same order. Where it cannot be
// exact (a foreign text, see tokens.go; a sort it does not keep) it says so
// and the store answers by its own queries. The store suite compares the
// two on thousands of random queries (storetest, SearchIndexEquivalence).
//
// Documents are numbered in the order the index receives them, a new number
// for every new state of a document, so that every list below only grows at
// its end; the number of a state replaced or removed is marked dead and
// skipped. Dead numbers are dropped when the store builds the index again
// (Dead tells it when).
package docindex

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Doc is one row of the documents table as the index keeps it. Tags is the
// text the full-text index holds for the tags (the tags in order, joined
// by spaces); TagNorms the normalised tags that the tag filter matches.
type Doc struct {
	Seq                                        int64
	ID                                         string
	Title, Summary, Content, Tags              string
	TagNorms                                   []string
	Status, Visibility                         string
	OwnerID, DepartmentID, ProjectID, FolderID string
	Trashed                                    bool
	CreatedAt, UpdatedAt                       int64

	// Terms and Tokens, when Terms is not nil, are the document's words as
	// FTS5 tokenized them (each term's weighted count, and the number of
	// tokens in all columns), which the caller finds for a foreign text
	// (Foreign) by asking SQLite; Put tokenizes the others itself.
	Terms  map[string]uint32
	Tokens uint32
}

// Foreign reports whether some text of d is foreign: Put cannot tokenize
// it as FTS5 does, and without Terms it holds no word of d, and answers no
// search while d is live.
func Foreign(d *Doc) bool {
	for _, text := range [4]string{d.Title, d.Summary, d.Content, d.Tags} {
		for i := 0; i < len(text); {
			if text[i] < utf8.RuneSelf {
				i++
				continue
			}
			// As tokenize judges it: an invalid byte is foreign too.
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && n == 1 || !separator(r) {
				return true
			}
			i += n
		}
	}
	return false
}

// Words returns the words of d as Put tokenizes them (each term's weighted
// count, and the number of tokens), and false when d is foreign.
func Words(d *Doc) (map[string]uint32, uint32, bool) {
	counts := map[string]uint32{}
	var n uint32
	for col, text := range [4]string{d.Title, d.Summary, d.Content, d.Tags} {
		if foreign, _ := tokenize(text, nil, func(word []byte) {
			n++
			counts[string(word)] += colWeight[col]
		}); foreign {
			return nil, 0, false
		}
	}
	return counts, n, true
}

// Weight is the weight of a column of documents_fts (0 title, 1 summary,
// 2 content, 3 tags) in a term's weighted count.
func Weight(col int) uint32 { return colWeight[col] }

// colWeight is the bm25 weight of each column of documents_fts (title,
// summary, content, tags): those of the store's ftsRank.
var colWeight = [4]uint32{10, 2, 1, 2}

// Codes of the status and visibility columns; 0 is none of them.
var (
	statusCode     = map[string]uint8{"draft": 1, "review": 2, "published": 3, "archived": 4}
	visibilityCode = map[string]uint8{"private": 1, "department": 2, "project": 3, "public": 4}
)

const (
	visDepartment = 2
	visProject    = 3
	visPublic     = 4
)

// posting is the documents holding one term, in increasing number, with
// the weighted count of the term in each (title 10, summary 2, content 1,
// tags 2 per occurrence), packed: for each document the gap from the
// previous one (from 0 for the first), shifted left by one, its low bit
// set when the count is not 1, as a uvarint, then the count as a uvarint
// when that bit is set. Most gaps of a common term take one byte, and most
// counts none, so a posting takes about two bytes instead of eight.
//
// Its first part lies in the index's frozen base (base.a.b[off:off+n], see
// freeze), packed so or, for a term of many documents, dense (dense.go),
// the rest, added since, in data on the heap: the gaps of data go on from
// the last document of the base, so the two read as one.
type posting struct {
	data []byte
	last uint32 // the last document, base of the next gap
	n    uint32 // bytes in the base, and denseFlag when it is dense
	off  uint64 // where they start
}

func (p *posting) size() int   { return int(p.n &^ denseFlag) }
func (p *posting) dense() bool { return p.n&denseFlag != 0 }

// add appends document n with the weighted count w, and returns the bytes
// it took.
func (p *posting) add(n, w uint32) int {
	if len(p.data)+10 > cap(p.data) {
		// Grown by a quarter rather than append's doubling: postings are
		// most of the index's memory, and a doubled list is half empty.
		p.data = append(make([]byte, 0, len(p.data)+len(p.data)/4+16), p.data...)
	}
	before := len(p.data)
	v := uint64(n-p.last) << 1
	if w != 1 {
		v |= 1
	}
	p.data = binary.AppendUvarint(p.data, v)
	if w != 1 {
		p.data = binary.AppendUvarint(p.data, uint64(w))
	}
	p.last = n
	return len(p.data) - before
}

// Index is safe for concurrent use: searches share a read lock, changes
// take the write lock.
type Index struct {
	mu sync.RWMutex
	// cursor is the last change of the database the index holds (its
	// caller's numbering), written under the write lock.
	cursor atomic.Int64

	// By document number.
	seqs                         []int64
	ids                          []string
	dlen                         []uint32 // tokens in all columns
	status, vis                  []uint8
	owner, dept, project, folder []uint32 // interned; 0 for none
	created, updated             []int64
	dead, trashed, foreign       bitset

	bySeq map[int64]uint32 // the live number of each row

	names  map[string]uint32 // interned ids; "" is 0
	terms  map[string]uint32 // term -> term number
	words  []string          // term number -> term
	posts  []posting         // by term number
	sorted []uint32          // term numbers in term order, for prefixes
	fresh  []uint32          // term numbers not yet in sorted
	tags   map[string][]uint32

	rows, deadDocs, foreignRows int   // rows: live numbers, as FTS5 counts rows
	tokens                      int64 // tokens of the live numbers
	postings                    int

	// base holds the frozen postings (freeze); delta counts the bytes of
	// the postings added since, on the heap, which Put freezes in turn
	// once they pass an eighth of the base.
	base     *holder
	delta    int
	deltaMin int

	strs strs // the ids' and terms' bytes

	acc     []uint32 // scratch of Put, by term number
	touched []uint32
	buf     []byte
}

// New returns an empty index.
func New() *Index {
	x := &Index{bySeq: map[int64]uint32{}, names: map[string]uint32{"": 0}, terms: map[string]uint32{},
		tags: map[string][]uint32{}}
	x.base = attach(x)
	x.deltaMin = deltaMin
	return x
}

// Lock and Unlock hold the index for a batch of Put and Remove calls,
// which must be made between them; Unlock settles the term order first.
func (x *Index) Lock() { x.mu.Lock() }

// Unlock ends a batch of changes.
func (x *Index) Unlock() {
	x.settle()
	x.mu.Unlock()
}

// The postings added since the base was frozen are frozen with it once
// they pass deltaMin bytes and a deltaShare-th of it: a copy of the base
// for every eighth of its size added, and at most an eighth of it on the
// heap (tests change an index's deltaMin).
const deltaMin = 1 << 20

const deltaShare = 8

func (x *Index) intern(s string) uint32 {
	n, ok := x.names[s]
	if !ok {
		n = uint32(len(x.names))
		x.names[s] = n
	}
	return n
}

// Put records the row d as it is now, replacing its previous state.
func (x *Index) Put(d *Doc) {
	x.put(d)
	if x.delta > max(len(x.base.a.b)/deltaShare, x.deltaMin) {
		// Also while the index is built: the heap then holds an eighth
		// of the postings at most, not all of them growing.
		x.freeze()
	}
}

func (x *Index) put(d *Doc) {
	if old, ok := x.bySeq[d.Seq]; ok {
		x.kill(old)
	}
	n := uint32(len(x.seqs))
	x.bySeq[d.Seq] = n
	x.seqs = append(x.seqs, d.Seq)
	x.ids = append(x.ids, x.strs.keep(d.ID))
	x.status = append(x.status, statusCode[d.Status])
	x.vis = append(x.vis, visibilityCode[d.Visibility])
	x.owner = append(x.owner, x.intern(d.OwnerID))
	x.dept = append(x.dept, x.intern(d.DepartmentID))
	x.project = append(x.project, x.intern(d.ProjectID))
	x.folder = append(x.folder, x.intern(d.FolderID))
	x.created = append(x.created, d.CreatedAt)
	x.updated = append(x.updated, d.UpdatedAt)
	x.dead.grow(int(n) + 1)
	x.trashed.grow(int(n) + 1)
	x.foreign.grow(int(n) + 1)
	if d.Trashed {
		x.trashed.set(n)
	}
	for i, tag := range d.TagNorms {
		if !slices.Contains(d.TagNorms[:i], tag) {
			x.tags[tag] = append(x.tags[tag], n)
		}
	}

	x.rows++
	if d.Terms != nil {
		x.dlen = append(x.dlen, d.Tokens)
		x.tokens += int64(d.Tokens)
		for word, w := range d.Terms {
			t, ok := x.terms[word]
			if !ok {
				t = x.newTerm(word)
			}
			x.delta += x.posts[t].add(n, w)
			x.postings++
		}
		return
	}
	// The weighted count of each term, in acc by term number; touched
	// lists the terms counted, to add and reset them.
	var dl uint32
	foreign := false
	x.touched = x.touched[:0]
	for col, text := range [4]string{d.Title, d.Summary, d.Content, d.Tags} {
		w := colWeight[col]
		foreign, x.buf = tokenize(text, x.buf, func(word []byte) {
			dl++
			t := x.term(word)
			if x.acc[t] == 0 {
				x.touched = append(x.touched, t)
			}
			x.acc[t] += w
		})
		if foreign {
			break
		}
	}
	for _, t := range x.touched {
		if !foreign {
			x.delta += x.posts[t].add(n, x.acc[t])
			x.postings++
		}
		x.acc[t] = 0
	}
	if foreign {
		// Its words are not known: no posting holds it, and while it is
		// live the index answers no search (Search).
		x.foreign.set(n)
		x.foreignRows++
		x.dlen = append(x.dlen, 0)
		return
	}
	x.dlen = append(x.dlen, dl)
	x.tokens += int64(dl)
}

// term returns the number of word, adding it when new.
func (x *Index) term(word []byte) uint32 {
	if t, ok := x.terms[string(word)]; ok {
		return t
	}
	return x.newTerm(string(word))
}

func (x *Index) newTerm(w string) uint32 {
	w = x.strs.keep(w)
	t := uint32(len(x.words))
	x.terms[w] = t
	x.words = append(x.words, w)
	x.posts = append(x.posts, posting{})
	x.acc = append(x.acc, 0)
	x.fresh = append(x.fresh, t)
	return t
}

// Trim freezes the postings after a bulk load (freeze): they leave the
// collected heap, exactly sized. It is called with the index locked.
func (x *Index) Trim() { x.freeze() }

// freeze copies the base and every posting's part on the heap into a new
// base of exactly their size, term after term (the pages of the old base
// given back as they are copied), and drops the heap's parts. A term of an
// eighth of the documents or more is made dense there, one that falls
// below a sixteenth packed again (dense.go); the others are copied as they
// are. It is called with the write lock held, so that no search reads the
// old base.
func (x *Index) freeze() {
	n := len(x.seqs)
	nw := (n + 63) / 64
	plans := make([]int, len(x.posts))
	size := 0
	for i := range x.posts {
		plans[i] = x.plan(&x.posts[i], n, nw)
		size += abs(plans[i])
	}
	old, nb := x.base.a, newArena(size)
	off := 0
	for i := range x.posts {
		p := &x.posts[i]
		b := nb.b[off : off+abs(plans[i])]
		if plans[i] < 0 {
			x.writeDense(p, b, nw)
		} else {
			x.writePacked(p, b)
		}
		old.release(int(p.off) + p.size())
		p.off, p.n, p.data = uint64(off), uint32(len(b)), nil
		if plans[i] < 0 {
			p.n |= denseFlag
		}
		off += len(b)
	}
	old.free()
	x.base.a = nb
	x.delta = 0
}

func abs(v int) int { return max(v, -v) }

// Remove forgets the row seq (purged).
func (x *Index) Remove(seq int64) {
	if n, ok := x.bySeq[seq]; ok {
		x.kill(n)
		delete(x.bySeq, seq)
	}
}

func (x *Index) kill(n uint32) {
	x.dead.set(n)
	x.deadDocs++
	x.rows--
	if x.foreign.has(n) {
		x.foreignRows--
	} else {
		x.tokens -= int64(x.dlen[n])
	}
}

// settle merges the terms added since the last batch into the term order.
func (x *Index) settle() {
	if len(x.fresh) == 0 {
		return
	}
	byWord := func(a, b uint32) int { return strings.Compare(x.words[a], x.words[b]) }
	slices.SortFunc(x.fresh, byWord)
	merged := make([]uint32, 0, len(x.sorted)+len(x.fresh))
	i, j := 0, 0
	for i < len(x.sorted) && j < len(x.fresh) {
		if byWord(x.sorted[i], x.fresh[j]) < 0 {
			merged = append(merged, x.sorted[i])
			i++
		} else {
			merged = append(merged, x.fresh[j])
			j++
		}
	}
	merged = append(append(merged, x.sorted[i:]...), x.fresh[j:]...)
	x.sorted, x.fresh = merged, x.fresh[:0]
}

// Cursor is the last change the index holds, as SetCursor recorded it.
func (x *Index) Cursor() int64 { return x.cursor.Load() }

// SetCursor records that the index holds every change up to c; it is
// called with the index locked, after the changes.
func (x *Index) SetCursor(c int64) { x.cursor.Store(c) }

// Stats are the sizes of the index, for metrics and for deciding when to
// build it again.
type Stats struct {
	Rows, Dead, Foreign, Terms int
	Postings                   int
	// Base is the bytes of the frozen postings, Delta those added since
	// (on the heap).
	Base, Delta int
}

// Stats reads the sizes of the index.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return Stats{Rows: x.rows, Dead: x.deadDocs, Foreign: x.foreignRows, Terms: len(x.words), Postings: x.postings,
		Base: len(x.base.a.b), Delta: x.delta}
}

// bitset is a set of document numbers.
type bitset []uint64

func (b *bitset) grow(n int) {
	for len(*b)*64 < n {
		*b = append(*b, 0)
	}
}
func (b bitset) set(n uint32)      { b[n/64] |= 1 << (n % 64) }
func (b bitset) has(n uint32) bool { return b[n/64]&(1<<(n%64)) != 0 }
