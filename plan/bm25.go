package plan

import (
	"math"
	"slices"
)

// bm25 is Okapi BM25 over documents given as weighted term counts (a
// heading word may count as several body words). It keeps, for each term,
// the documents that hold it, so ranking a query costs the length of its
// terms' posting lists rather than a pass over every document.
//
// The idf is the non-negative form log(1 + (N - df + 0.5) / (df + 0.5)), so a
// term found in most documents still counts a little rather than against a
// match.
type bm25 struct {
	k1, b float64
	docs  []map[string]float64
	lens  []float64
	total float64
	post  map[string][]int // documents holding the term, in order
}

func newBM25(k1, b float64) *bm25 {
	return &bm25{k1: k1, b: b, post: map[string][]int{}}
}

// add indexes the next document; its number is the count added before it.
func (m *bm25) add(tf map[string]float64) {
	j := len(m.docs)
	n := 0.0
	for t, f := range tf {
		n += f
		m.post[t] = append(m.post[t], j)
	}
	m.docs = append(m.docs, tf)
	m.lens = append(m.lens, n)
	m.total += n
}

// idf of term t; 0 for a term no document holds.
func (m *bm25) idf(t string) float64 {
	df := float64(len(m.post[t]))
	if df == 0 {
		return 0
	}
	n := float64(len(m.docs))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// score is document j's score for the query terms q; a term repeated in q
// counts each time.
func (m *bm25) score(q []string, j int) float64 {
	if m.total == 0 {
		return 0
	}
	avg := m.total / float64(len(m.docs))
	norm := 1 - m.b + m.b*m.lens[j]/avg
	s := 0.0
	for _, t := range q {
		f := m.docs[j][t]
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
		out = append(out, m.post[t]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
