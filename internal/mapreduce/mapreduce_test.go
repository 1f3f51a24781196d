package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestMapKeepsOrderAndBound(t *testing.T) {
	parts := make([]Part, 40)
	for i := range parts {
		parts[i] = Part{Index: i, Text: fmt.Sprint(i)}
	}
	var running, peak atomic.Int32
	out, err := Map(context.Background(), parts, 3, func(_ context.Context, p Part) (string, error) {
		n := running.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		defer running.Add(-1)
		return "r" + p.Text, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		if r != fmt.Sprintf("r%d", i) {
			t.Fatalf("result %d = %q", i, r)
		}
	}
	if p := peak.Load(); p > 3 {
		t.Errorf("%d calls ran at once; the bound is 3", p)
	}
}

func TestMapStopsAtTheFirstError(t *testing.T) {
	parts := make([]Part, 50)
	var calls atomic.Int32
	boom := errors.New("boom")
	_, err := Map(context.Background(), parts, 1, func(_ context.Context, p Part) (int, error) {
		if calls.Add(1) == 3 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "part 3 of 50") {
		t.Errorf("err = %v", err)
	}
	if n := calls.Load(); n > 4 {
		t.Errorf("%d calls after the error; want the rest cancelled", n)
	}
}

// Reduce rounds: 10 items of size 3 with budget 10 join three at a time
// (4 groups: 3,3,3,1), then the three joined ones and the lone one, and so
// on, keeping order; every group fits its budget.
func TestReduceIsHierarchicalAndKeepsOrder(t *testing.T) {
	var items []string
	for i := range 10 {
		items = append(items, fmt.Sprintf("%c", 'a'+i))
	}
	var mu sync.Mutex
	rounds := map[int]int{}
	size := func(s string) int { return 3 }
	got, err := Reduce(context.Background(), items, 10, 2, size, func(_ context.Context, g Group[string]) (string, error) {
		total := 0
		for _, it := range g.Items {
			total += size(it)
		}
		if total > 10 || len(g.Items) < 2 {
			t.Errorf("round %d group %d: %d items of %d", g.Round, g.Index, len(g.Items), total)
		}
		mu.Lock()
		rounds[g.Round]++
		mu.Unlock()
		return strings.Join(g.Items, ""), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != "abcdefghij" {
		t.Errorf("reduced = %q", got)
	}
	if rounds[1] != 3 || rounds[2] != 1 || rounds[3] != 1 || len(rounds) != 3 {
		t.Errorf("calls per round = %v; want 3, 1, 1", rounds)
	}
}

func TestReduceEdges(t *testing.T) {
	join := func(_ context.Context, g Group[int]) (int, error) { t.Error("join called"); return 0, nil }
	if got, err := Reduce(context.Background(), []int{7}, 10, 1, func(int) int { return 1 }, join); err != nil || got != 7 {
		t.Errorf("one item: %d, %v", got, err)
	}
	if _, err := Reduce(context.Background(), nil, 10, 1, func(int) int { return 1 }, join); err == nil {
		t.Error("no items: no error")
	}
	_, err := Reduce(context.Background(), []int{1, 2, 3}, 10, 1, func(int) int { return 6 }, join)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("items that never fit two at a time: err = %v", err)
	}
	boom := errors.New("boom")
	_, err = Reduce(context.Background(), []int{1, 2, 3}, 10, 1, func(int) int { return 1 },
		func(context.Context, Group[int]) (int, error) { return 0, boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "reduce round 1, group 1 of 1") {
		t.Errorf("err = %v", err)
	}
}
