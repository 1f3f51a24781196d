package plan

import (
	"math"
	"slices"
)

// bm25 is Okapi BM25 over documents whose weighted term counts (a heading
// word may count as several body words) come as posting lists: for each
// term, the documents that hold it with the term's count there, in document
// order. Ranking a query costs the length of its terms' lists rather than a
// pass over every document, and no document keeps a map of its own.
//
// The lists come from add, or, when lookup is set, from lookup: the
// retrieval index builds a term's list on demand from postings it keeps
// once per section (see index.postings), so only the query's terms are ever
// expanded to a count per section.
//
// The idf is the non-negative form log(1 + (N - df + 0.5) / (df + 0.5)), so a
// term found in most documents still counts a little rather than against a
// match.
type bm25 struct {
	k1, b  float64
	lens   []float64 // each document's length: the sum of its counts
	total  float64
	post   map[string][]posting // filled by add
	lookup func(t string) []posting
}

// posting is one document's count of a term.
type posting struct {
	doc int32
	f   float64
}

func newBM25(k1, b float64) *bm25 {
	return &bm25{k1: k1, b: b, post: map[string][]posting{}}
}

// add indexes the next document; its number is the count added before it.
func (m *bm25) add(tf map[string]float64) {
	n := 0.0
	for _, f := range tf {
		n += f
	}
	m.addCounted(tf, n)
}

// addCounted indexes the next document, of length n, with the counts tf
// of the terms kept.
func (m *bm25) addCounted(tf map[string]float64, n float64) {
	j := int32(len(m.lens))
	for t, f := range tf {
		m.post[t] = append(m.post[t], posting{j, f})
	}
	m.addLen(n)
}

// addLen counts the next document, of length n, whose postings lookup
// gives.
func (m *bm25) addLen(n float64) {
	m.lens = append(m.lens, n)
	m.total += n
}

// postings of term t, in document order.
func (m *bm25) postings(t string) []posting {
	if m.lookup != nil {
		return m.lookup(t)
	}
	return m.post[t]
}

// tf is document j's count of term t.
func (m *bm25) tf(t string, j int) float64 {
	ps := m.postings(t)
	k, ok := slices.BinarySearchFunc(ps, int32(j), func(p posting, j int32) int { return int(p.doc - j) })
	if !ok {
		return 0
	}
	return ps[k].f
}

// idf of term t; 0 for a term no document holds.
func (m *bm25) idf(t string) float64 {
	df := float64(len(m.postings(t)))
	if df == 0 {
		return 0
	}
	n := float64(len(m.lens))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// score is document j's score for the query terms q; a term repeated in q
// counts each time.
func (m *bm25) score(q []string, j int) float64 {
	if m.total == 0 {
		return 0
	}
	avg := m.total / float64(len(m.lens))
	norm := 1 - m.b + m.b*m.lens[j]/avg
	s := 0.0
	for _, t := range q {
		f := m.tf(t, j)
		if f == 0 {
			continue
		}
		s += m.idf(t) * f * (m.k1 + 1) / (f + m.k1*norm)
	}
	return s
}

// matching returns, in order, the documents that hold any term of q: the
// only ones that can score above zero.
func (m *bm25) matching(q []string) []int {
	var out []int
	for _, t := range q {
		for _, p := range m.postings(t) {
			out = append(out, int(p.doc))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
