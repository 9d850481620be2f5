package docindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// corpus makes n documents of words drawn with a Zipf spread from a
// vocabulary of 20,000 (about 190 distinct terms a document, like the
// bench's), with owners, statuses, visibilities and tags.
type corpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	seq   int64
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 34))
	c := &corpus{r: r, zipf: rand.NewZipf(r, 1.07, 2, 19_999)}
	for i := range 20_000 {
		c.vocab = append(c.vocab, fmt.Sprintf("%s%dq", []string{"re", "de", "in", "ops", "x"}[i%5], i))
	}
	return c
}

func (c *corpus) text(words int) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.vocab[c.zipf.Uint64()])
	}
	return b.String()
}

func (c *corpus) doc(seq int64) *Doc {
	r := c.r
	tags := []string{"ops", "api", "db", "ui", "sec"}[:r.IntN(4)]
	d := &Doc{Seq: seq, ID: fmt.Sprintf("doc-%08d-%d", seq, r.IntN(1000)), Title: c.text(4 + r.IntN(4)),
		Summary: c.text(10 + r.IntN(10)), Content: c.text(200 + r.IntN(200)), Tags: strings.Join(tags, " "), TagNorms: tags,
		Status:     []string{"draft", "review", "published", "archived"}[r.IntN(4)],
		Visibility: []string{"private", "department", "project", "public"}[r.IntN(4)],
		OwnerID:    fmt.Sprint("u", r.IntN(20)), DepartmentID: fmt.Sprint("d", r.IntN(4)), ProjectID: fmt.Sprint("p", r.IntN(6)),
		Trashed: r.IntN(20) == 0, CreatedAt: r.Int64N(1 << 40), UpdatedAt: r.Int64N(1 << 40)}
	return d
}

// TestFrozenBaseAnswersAsBefore: an index whose postings are frozen into
// its base after the load and again after every few changes (the delta
// merged each time) answers every query as one that keeps them all on the
// heap, after loads, replacements, removals and new terms.
func TestFrozenBaseAnswersAsBefore(t *testing.T) {
	defer func(m int) { mapMin = m }(mapMin)
	mapMin = 1 << 12 // map the bases of this test from the system too
	c := newCorpus(1)
	heap, frozen := New(), New()
	heap.deltaMin = math.MaxInt // never frozen
	frozen.deltaMin = 1 << 10
	both := func(f func(x *Index)) {
		for _, x := range []*Index{heap, frozen} {
			x.Lock()
			f(x)
			x.Unlock()
		}
	}
	// Some documents repeat a common word in their title, for counts
	// past a byte (a dense term's overflow).
	doc := func(seq int64) *Doc {
		d := c.doc(seq)
		if r := c.r.IntN(16); r < 4 {
			d.Title += strings.Repeat(" "+c.vocab[r], 20+c.r.IntN(20))
		}
		return d
	}
	var docs []*Doc
	for range 600 {
		c.seq++
		docs = append(docs, doc(c.seq))
	}
	both(func(x *Index) {
		for _, d := range docs {
			x.Put(d)
		}
		if x == frozen {
			x.Trim()
		}
	})
	if st := frozen.Stats(); st.Base == 0 || st.Delta != 0 {
		t.Fatalf("after Trim: %+v", st)
	}
	if d := frozen.denseTerms(); d == 0 {
		t.Fatal("no term frozen dense")
	}
	r := rand.New(rand.NewPCG(2, 34))
	compare := func(round int) {
		t.Helper()
		for range 60 {
			q := &Query{Order: Order(r.IntN(4)), Desc: r.IntN(2) == 0, Offset: r.IntN(3) * 10, Limit: 10 + r.IntN(20)}
			for range 1 + r.IntN(2) {
				w := c.vocab[c.zipf.Uint64()]
				if r.IntN(3) == 0 {
					w = w[:len(w)-1] // a prefix: the union of the terms it begins
				}
				q.Terms = append(q.Terms, w)
			}
			switch r.IntN(4) {
			case 0:
				q.Terms, q.Order = nil, ByUpdated
				q.Tags = []string{"ops"}
			case 1:
				q.Status = "published"
			}
			if r.IntN(2) == 0 {
				q.All = true
			} else {
				q.UserID, q.DepartmentOfUser, q.Projects = "u3", "d1", []string{"p2", "p4"}
			}
			a, at, aok := heap.Search(q)
			b, bt, bok := frozen.Search(q)
			if aok != bok || at != bt || !slices.Equal(a, b) {
				t.Fatalf("round %d, %+v: heap %v %d %v, frozen %v %d %v", round, q, aok, at, a, bok, bt, b)
			}
		}
	}
	compare(0)
	merged := 0
	for round := 1; round <= 15; round++ {
		var batch []*Doc
		var gone []int64
		for range 20 {
			switch r.IntN(4) {
			case 0: // a new document
				c.seq++
				batch = append(batch, doc(c.seq))
			case 1: // removed
				gone = append(gone, 1+r.Int64N(c.seq))
			default: // a new state of one, some with words no document had
				d := doc(1 + r.Int64N(c.seq))
				if r.IntN(4) == 0 {
					d.Content += fmt.Sprintf(" fresh%dword", r.IntN(1000))
				}
				batch = append(batch, d)
			}
		}
		before := frozen.Stats().Delta
		both(func(x *Index) {
			for _, d := range batch {
				x.Put(d)
			}
			for _, s := range gone {
				x.Remove(s)
			}
		})
		if st := frozen.Stats(); st.Delta < before {
			merged++
		}
		compare(round)
	}
	if merged == 0 {
		t.Fatal("the delta was never merged into the base")
	}
	if hs, fs := heap.Stats(), frozen.Stats(); hs.Postings != fs.Postings || hs.Base != 0 {
		t.Fatalf("heap %+v, frozen %+v", hs, fs)
	}
	t.Logf("%d terms, %d of them dense", len(frozen.posts), frozen.denseTerms())
}

// denseTerms counts the terms whose base is dense.
func (x *Index) denseTerms() int {
	n := 0
	for i := range x.posts {
		if x.posts[i].dense() {
			n++
		}
	}
	return n
}

// TestPrefixHoldsLittle: a search word beginning many terms (their union)
// holds its terms' lists and about two unions at once, not every union
// merged on the way.
func TestPrefixHoldsLittle(t *testing.T) {
	x := New()
	x.Lock()
	for i := range 20_000 {
		x.Put(&Doc{Seq: int64(i + 1), ID: fmt.Sprint(i), Content: fmt.Sprintf("deploy%d", i%500), Status: "draft"})
	}
	x.Unlock()
	var sc scratch
	defer sc.release()
	l := x.phrase(&sc, "deploy")
	if len(l.docs) != 20_000 {
		t.Fatalf("%d documents", len(l.docs))
	}
	// The lists of the terms and their union each take 8 bytes a
	// document (rounded up to a power of two).
	if per := float64(sc.most) / float64(8*len(l.docs)); per > 6 {
		t.Fatalf("%d bytes held at once for a union of %d documents: %.1f times it", sc.most, len(l.docs), per)
	}
}

// TestIndexHeapPerPosting: once built, the index keeps its postings off the
// collected heap; what stays on it (the documents' columns, the terms) is
// far less than the postings themselves.
func TestIndexHeapPerPosting(t *testing.T) {
	if runtime.GOOS != "linux" || raced {
		t.Skip("the base is mapped from the system on Linux only, and the race detector changes the heap")
	}
	heap, base, postings := buildHeap(t, 10_000)
	perHeap, perBase := float64(heap)/float64(postings), float64(base)/float64(postings)
	t.Logf("%d postings: heap %.2f bytes a posting (%d), base %.2f (%d)", postings, perHeap, heap, perBase, base)
	if perHeap > 2.0 {
		t.Errorf("heap %.2f bytes a posting, want at most 2.0 (3.5 with every posting on the heap)", perHeap)
	}
	if perBase > 2.6 {
		t.Errorf("base %.2f bytes a posting, want at most 2.6", perBase)
	}
}

// buildHeap builds an index of n documents of the corpus and returns the
// heap it holds after a collection, its base and its postings.
func buildHeap(t testing.TB, n int) (heap, base, postings int) {
	c := newCorpus(7)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.GC() // and what the pools kept through the first
	runtime.ReadMemStats(&m0)
	x := corpusIndex(c, n)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	st := x.Stats()
	runtime.KeepAlive(x)
	return int(m1.HeapAlloc) - int(m0.HeapAlloc), st.Base, st.Postings
}

// corpusIndex returns an index of the corpus's first n documents, trimmed
// as a build leaves it.
func corpusIndex(c *corpus, n int) *Index {
	x := New()
	x.Lock()
	for i := range n {
		x.Put(c.doc(int64(i + 1)))
	}
	x.Trim()
	x.Unlock()
	return x
}

// BenchmarkIndexMemory reports the heap and the base of an index of 20,000
// documents of the corpus, in bytes a posting (the test takes 10,000).
func BenchmarkIndexMemory(b *testing.B) {
	for range b.N {
		heap, base, postings := buildHeap(b, 20_000)
		b.ReportMetric(float64(heap)/float64(postings), "heap-B/posting")
		b.ReportMetric(float64(base)/float64(postings), "base-B/posting")
		b.ReportMetric(float64(postings), "postings")
	}
}

// commonIndex is an index of 100,000 documents of the corpus, built once
// for the benchmarks, and the pairs of search words of search-common: two
// words each in an eighth to a half of the documents (the bench's ranks
// 40-200), some of them prefixes of a few terms (the union of the terms
// they begin: the bench's words begin 1.9 terms on average).
var commonIndex struct {
	once    sync.Once
	x       *Index
	queries []*Query
}

func searchCommonIndex() (*Index, []*Query) {
	ci := &commonIndex
	ci.once.Do(func() {
		const n = 100_000
		c := newCorpus(11)
		x := corpusIndex(c, n)
		var common []string
		for _, w := range c.vocab {
			if t, ok := x.terms[w]; ok {
				var sc scratch
				if l := x.decode(&sc, &x.posts[t]); len(l.docs) >= n/8 && len(l.docs) <= n/2 {
					common = append(common, w)
				}
				sc.release()
			}
		}
		r := rand.New(rand.NewPCG(7, 7))
		for range 200 {
			q := &Query{Order: ByRelevance, Limit: 20, UserID: "u3", DepartmentOfUser: "d1", Projects: []string{"p2", "p4"}}
			for range 2 {
				w := common[r.IntN(len(common))]
				if r.IntN(2) == 0 && x.begun(w[:len(w)-1]) <= 5 {
					// As the bench's words: a few rarer terms
					// begin with most of them (deploy, deployed).
					w = w[:len(w)-1]
				}
				q.Terms = append(q.Terms, w)
			}
			ci.queries = append(ci.queries, q)
		}
		ci.x = x
	})
	return ci.x, ci.queries
}

// BenchmarkSearchCommon is the index's part of the bench's search-common
// at 100,000 documents: two words each in an eighth to a half of all
// documents, as an editor sees them, a page of 20 by relevance with the
// total (thousands of matches to count and rank). cpu-ns/op is the CPU
// time the process took a search (the collector's included), less changed
// by the load of a shared machine than ns/op.
func BenchmarkSearchCommon(b *testing.B) {
	x, qs := searchCommonIndex()
	matches := 0
	var cpu time.Duration
	for i := 0; b.Loop(); i++ {
		if i == 0 {
			cpu = cpuTime()
		}
		_, total, ok := x.Search(qs[i%len(qs)])
		if !ok {
			b.Fatal("not answered")
		}
		matches += total
	}
	cpu = cpuTime() - cpu
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(matches)/float64(b.N), "visible/op")
}

// begun counts the terms that begin with w.
func (x *Index) begun(w string) int {
	n := 0
	for _, t := range x.words {
		if strings.HasPrefix(t, w) {
			n++
		}
	}
	return n
}
