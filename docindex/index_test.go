package docindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
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
	var docs []*Doc
	for range 600 {
		c.seq++
		docs = append(docs, c.doc(c.seq))
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
				batch = append(batch, c.doc(c.seq))
			case 1: // removed
				gone = append(gone, 1+r.Int64N(c.seq))
			default: // a new state of one, some with words no document had
				d := c.doc(1 + r.Int64N(c.seq))
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
	x := New()
	x.Lock()
	for i := range n {
		x.Put(c.doc(int64(i + 1)))
	}
	x.Trim()
	x.Unlock()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	st := x.Stats()
	runtime.KeepAlive(x)
	return int(m1.HeapAlloc) - int(m0.HeapAlloc), st.Base, st.Postings
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
