package quota

import (
	"testing"
	"time"
)

func TestFitAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := func(d time.Duration) time.Time { return t0.Add(d) }
	type ch struct {
		at     time.Duration
		tokens int64
	}
	const us = time.Microsecond
	for _, tc := range []struct {
		name    string
		now     time.Duration
		charges []ch
		n       int64
		want    time.Duration
	}{
		{"empty window: now", 0, nil, 1000, 0},
		{"fits beside the others: now", 500 * time.Millisecond, []ch{{0, 300}, {100 * time.Millisecond, 300}}, 400, 500 * time.Millisecond},
		{"after the oldest leaves", 500 * time.Millisecond, []ch{{0, 300}, {100 * time.Millisecond, 300}}, 401, time.Second + us},
		{"after both leave", 500 * time.Millisecond, []ch{{0, 300}, {100 * time.Millisecond, 300}}, 1000, 1100*time.Millisecond + us},
		{"never before a reservation already made", 0, []ch{{2 * time.Second, 100}}, 10, 2 * time.Second},
		{"a full window of reservations: a period after the one to drop", 0,
			[]ch{{0, 500}, {time.Second + us, 500}, {2*time.Second + 2*us, 500}}, 500, 2*time.Second + 2*us},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitAt(s(tc.now), time.Second, 1000, tc.n, func(yield func(time.Time, int64) bool) {
				for _, c := range tc.charges {
					if !yield(s(c.at), c.tokens) {
						return
					}
				}
			})
			if got != s(tc.want) {
				t.Errorf("fitAt = %v, want %v", got.Sub(t0), tc.want)
			}
		})
	}
}
