package orchestrate_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/llm/openai"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// fallbackDoc is a markdown report of about size bytes.
func fallbackDoc(size int) string {
	var b strings.Builder
	b.WriteString("# Operations log\n\n")
	for i := 0; b.Len() < size; i++ {
		if i%20 == 0 {
			fmt.Fprintf(&b, "## Week %d\n\n", i/20+1)
		}
		fmt.Fprintf(&b, "Entry %d: the night shift checked the pumps, logged the pressure and handed over at six.\n", i+1)
	}
	return b.String()
}

// fallbackPlan is a plan of n subtasks whose pointers match no heading, so
// every one falls back to the whole context.
func fallbackPlan(n int) string {
	var b strings.Builder
	b.WriteString(`{"subtasks": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"task": "Check item %d", "skill": "fact-extraction", "context_pointers": {"sections": ["Qqxz nowhere %d"]}}`, i+1, i+1)
	}
	b.WriteString(`], "reasoning": "many"}`)
	return b.String()
}

// fanoutLiveHeap runs an ask of n subtasks that all fall back to a context
// of size bytes, k at a time, against the wire-level fake, and returns the
// most live heap (after a collection) seen above the heap before the run,
// sampled as each sub-agent request reaches the fake. The fake forgets the
// requests it has answered as it goes, so its log does not grow with n.
func fanoutLiveHeap(tb testing.TB, n, size, k int) (peak uint64, rec *orchestrate.Record) {
	text := fallbackDoc(size)
	s := llmtest.NewServer(tb, script(llmtest.Text(fallbackPlan(n))))
	var mu sync.Mutex
	var base uint64
	s.OnRequest(func(r llmtest.RecordedRequest) {
		if isPlanner(r) || isSynthesis(r) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		s.Reset()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base {
			peak = max(peak, ms.HeapAlloc-base)
		}
	})
	m, err := openai.New(openai.Config{APIKey: "test-key", BaseURL: s.OpenAIBaseURL(), Model: "gpt-test"})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := config(m)
	cfg.Context, cfg.Task = text, "Check every item."
	cfg.Planner, cfg.MaxSubtasks, cfg.Concurrency = orchestrate.PlannerLLM, n, k
	cfg.MaxFallbackTokens = -1 // every subtask falls back, which is what is measured
	cfg.Window = 50_000_000
	tokens.Count("warm the tokenizer up")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mu.Lock()
	base = ms.HeapAlloc
	mu.Unlock()
	rec, err = orchestrate.Ask(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("Ask: %v", err)
	}
	return peak, rec
}

// Fan-out memory grows with the concurrency, not with the plan: requests
// are built when a slot is free. With every subtask falling back to the
// whole context, building all n requests first held n copies of it at
// once (500 subtasks on a 1 MB context peaked at 3.7 GB; this test saw
// 28.6 MB where the limit is 6.2 MB); now the live heap above the start
// stays within a few copies per call in flight. One call at a time, so
// that no other request is half-way through the fake when the heap is
// sampled and the figure is the same from run to run.
func TestFanoutMemoryGrowsWithConcurrencyNotSubtasks(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 100 requests of 256 KB")
	}
	const n, size, k = 100, 256 << 10, 1
	peak, rec := fanoutLiveHeap(t, n, size, k)
	ok := 0
	for _, st := range rec.Subtasks {
		if st.Status == orchestrate.StatusOK && st.Slice != nil && st.Slice.Fallback {
			ok++
		}
	}
	if ok != n {
		t.Fatalf("%d of %d subtasks fell back and answered", ok, n)
	}
	// Holding every request would be n*size = 25 MB; a few copies per
	// call in flight (the message, the SDK's body, the fake's copies) are
	// well under a quarter of that.
	limit := uint64(n * size / 4)
	t.Logf("live heap peak above the start: %.1f MB for %d fallbacks of %d KB, %d at a time (limit %.1f MB)",
		float64(peak)/(1<<20), n, size>>10, k, float64(limit)/(1<<20))
	if peak > limit {
		t.Errorf("live heap grew by %.1f MB; want under %.1f MB", float64(peak)/(1<<20), float64(limit)/(1<<20))
	}
}

// BenchmarkFanoutFallback is the case: 500 subtasks that all fall
// back to a 1 MB context. It reports the live-heap peak above the start
// (peak-MB) and the bytes allocated per run. Slow: the fake counts every
// request's tokens, 500 MB of them; run it with -benchtime=1x.
func BenchmarkFanoutFallback(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		peak, _ := fanoutLiveHeap(b, 500, 1<<20, orchestrate.DefaultConcurrency)
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MB")
	}
}
