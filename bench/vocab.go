package main

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The generated text follows the two regimes that word frequencies show in
// large corpora (Ferrer i Cancho and Solé, 2001): a kernel of a few thousand
// words whose frequency falls as 1/rank, then a tail of rarer words falling
// as 1/rank². The head of the kernel is commonWords; the rest are synthetic
// words standing for the names, identifiers and rarer English of real team
// documentation. Search costs follow how many documents hold a word, so the
// spread matters: in 100,000 documents of 1-2 KB the top words are in nearly
// every document, the word of rank 1,000 in about 2.5 %, of rank 10,000 in
// 0.1-0.2 %, and the rarest in a handful.
const (
	vocabularySize = 50000
	kernelSize     = 5000
	// zipfShift is Mandelbrot's offset to the rank: it flattens the very
	// top, so that the commonest word is about 3 % of the text, as "the" is
	// in English, rather than the 9 % of a pure 1/rank.
	zipfShift = 2.7
)

// vocabulary holds every word the generator writes, the most frequent
// first, and wordRank the index of each in it.
var vocabulary, wordRank = buildVocabulary()

// cumulative[i] is the probability that a drawn word has a rank of i or
// less. Built once, it makes a draw one binary search: seeding a million
// documents draws some 250 million words.
var cumulative = zipfCumulative(len(vocabulary))

// drawWord returns a word of the vocabulary with its Zipf probability.
func drawWord(r *rand.Rand) string {
	i, _ := slices.BinarySearch(cumulative, r.Float64())
	return vocabulary[i]
}

func zipfCumulative(n int) []float64 {
	cum := make([]float64, n)
	total := 0.0
	for i := range n {
		rank := float64(i + 1)
		w := 1 / (rank + zipfShift)
		if i >= kernelSize {
			k := float64(kernelSize)
			w = 1 / (k + zipfShift) * (k / rank) * (k / rank)
		}
		total += w
		cum[i] = total
	}
	for i := range cum {
		cum[i] /= total
	}
	// Rounding must not leave a draw just below 1 past the last word.
	cum[n-1] = 1
	return cum
}

// Identifiers keep to letters and digits: the full-text index splits words
// at anything else, so "INC-4821" would become the words "inc" and "4821".
// Their digits have one width per prefix, so none is the start of another
// and a search for one (a prefix search) finds that one only.
var idPrefixes = strings.Fields("inc chg req err ops cve")

// Sounds of the synthetic words, the repetitions making the plainer ones
// likelier, so that most words read like names (velmora, tarsin, kobren).
var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w z b d k l m n p r s t v b d k l m n r s t br dr gr kr pr st tr sh ch th")
	vowels = strings.Fields("a e i o u a e i o u a e i o a e o ai ea ou io")
	codas  = strings.Fields("n r l s t m k x nd rt st n r l s n")
)

// buildVocabulary returns commonWords (once each, in their order) followed
// by synthetic words up to vocabularySize, the same on every run: a seeded
// database is reused only as long as the generator is unchanged.
func buildVocabulary() ([]string, map[string]int) {
	words := make([]string, 0, vocabularySize)
	rank := make(map[string]int, vocabularySize)
	add := func(w string) {
		if _, ok := rank[w]; !ok {
			rank[w] = len(words)
			words = append(words, w)
		}
	}
	// A search matches words by their start, so a rare word that begins a
	// common one ("poli", "policy") would be found as often as the common
	// one: the synthetic words begin none.
	starts := map[string]bool{}
	for _, w := range commonWords {
		add(w)
		for i := 1; i <= len(w); i++ {
			starts[w[:i]] = true
		}
	}
	r := rand.New(rand.NewPCG(2026, 11))
	for len(words) < vocabularySize {
		if w := syntheticWord(r); !starts[w] {
			add(w)
		}
	}
	return words, rank
}

// syntheticWord returns an identifier (one word in ten) or a pronounceable
// word of two to four syllables.
func syntheticWord(r *rand.Rand) string {
	if r.IntN(10) == 0 {
		return idPrefixes[r.IntN(len(idPrefixes))] + strconv.Itoa(1000+r.IntN(9000))
	}
	var b strings.Builder
	n := 2 + r.IntN(10)/5 + r.IntN(10)/9 // 2: 45 %, 3: 50 %, 4: 5 %
	for i := range n {
		b.WriteString(onsets[r.IntN(len(onsets))])
		b.WriteString(vowels[r.IntN(len(vowels))])
		// A consonant closes the last syllable half the time, an inner one
		// seldom, which keeps clusters like "rtst" out.
		odds := 6
		if i == n-1 {
			odds = 2
		}
		if r.IntN(odds) == 0 {
			b.WriteString(codas[r.IntN(len(codas))])
		}
	}
	return b.String()
}

// minQueryRank is how many of the most common words are too common to be
// what someone searches for (the, and, team, document, ...).
const minQueryRank = 300

// searchPair returns two different words of a document's texts, neither
// among the minQueryRank most common, for a search that finds at least that
// document. Words are drawn in proportion to their occurrences, as a reader
// recalls the words a document repeats. ok is false when the texts hold
// fewer than two such words.
func searchPair(r *rand.Rand, texts ...string) (pair string, ok bool) {
	var rare []string
	for _, t := range texts {
		for _, w := range strings.FieldsFunc(strings.ToLower(t), notWordRune) {
			if rank, known := wordRank[w]; known && rank >= minQueryRank {
				rare = append(rare, w)
			}
		}
	}
	if len(rare) == 0 {
		return "", false
	}
	a := rare[r.IntN(len(rare))]
	others := slices.DeleteFunc(rare, func(w string) bool { return w == a })
	if len(others) == 0 {
		return "", false
	}
	return a + " " + others[r.IntN(len(others))], true
}

// notWordRune separates words as the full-text index does.
func notWordRune(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsNumber(c) }
