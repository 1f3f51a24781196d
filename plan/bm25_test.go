package plan

import (
	"math"
	"slices"
	"testing"
)

// The scores below are worked out by hand from the BM25 formula with
// k1 = 1.2 and b = 0.75, so a change to the formula shows here.
//
// Three documents: d0 {risk: 2, mill: 1} (length 3), d1 {revenue: 1}
// (length 1), d2 {risk: 1, revenue: 1, team: 2} (length 4); N = 3, average
// length 8/3.
//
//	idf(risk)    = ln(1 + (3-2+0.5)/(2+0.5)) = ln 1.6       = 0.4700036
//	idf(revenue) = ln 1.6                                    = 0.4700036
//	idf(team)    = ln(1 + (3-1+0.5)/(1+0.5)) = ln(8/3)      = 0.9808293
//	norm(d0) = 0.25 + 0.75*3/(8/3) = 1.09375
//	norm(d1) = 0.25 + 0.75*1/(8/3) = 0.53125
//	norm(d2) = 0.25 + 0.75*4/(8/3) = 1.375
//	d0, "risk":    0.4700036 * 2*2.2/(2 + 1.2*1.09375) = 0.4700036 * 1.3283019 = 0.6243067
//	d2, "risk":    0.4700036 * 1*2.2/(1 + 1.2*1.375)   = 0.4700036 * 0.8301887 = 0.3901917
//	d1, "revenue": 0.4700036 * 2.2/(1 + 1.2*0.53125)   = 0.4700036 * 1.3435115 = 0.6314552
//	d2, "revenue team": 0.3901917 + 0.9808293 * 2*2.2/(2 + 1.65) = 0.3901917 + 1.1823695 = 1.5725612
func TestBM25HandComputed(t *testing.T) {
	m := newBM25(1.2, 0.75)
	m.add(map[string]float64{"risk": 2, "mill": 1})
	m.add(map[string]float64{"revenue": 1})
	m.add(map[string]float64{"risk": 1, "revenue": 1, "team": 2})
	cases := []struct {
		q    []string
		doc  int
		want float64
	}{
		{[]string{"risk"}, 0, 0.6243067},
		{[]string{"risk"}, 1, 0},
		{[]string{"risk"}, 2, 0.3901917},
		{[]string{"revenue"}, 1, 0.6314552},
		{[]string{"revenue", "team"}, 2, 1.5725612},
		{[]string{"absent"}, 0, 0},
	}
	for _, tc := range cases {
		if got := m.score(tc.q, tc.doc); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("score(%q, d%d) = %.7f, want %.7f", tc.q, tc.doc, got, tc.want)
		}
	}
	if got := m.matching([]string{"revenue", "risk", "absent"}); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("matching = %v, want [0 1 2]", got)
	}
	if got := m.matching([]string{"mill"}); !slices.Equal(got, []int{0}) {
		t.Errorf("matching(mill) = %v, want [0]", got)
	}
	if got := newBM25(1.2, 0.75).matching([]string{"x"}); len(got) != 0 {
		t.Errorf("empty index matched %v", got)
	}
}
