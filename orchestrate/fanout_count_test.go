package orchestrate_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
)

// dryRunAlloc is the bytes a dry run allocates over a context of size
// bytes with n sub-questions that match no section, so that every subtask
// falls back to the whole context.
func dryRunAlloc(t *testing.T, n, size int) uint64 {
	t.Helper()
	var q []string
	for i := range n {
		q = append(q, fmt.Sprintf("What about qzx%d?", i+1))
	}
	cfg := orchestrate.Config{Task: strings.Join(q, " "), Context: fallbackDoc(size), MaxSubtasks: n, DryRun: true, ModelName: "test-model", MaxFallbackTokens: -1}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec, err := orchestrate.Ask(context.Background(), cfg)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	fallbacks := 0
	for _, st := range rec.Subtasks {
		if st.Slice != nil && st.Slice.Fallback && st.PromptTokens > 0 {
			fallbacks++
		}
	}
	if fallbacks != n {
		t.Fatalf("%d of %d subtasks fell back", fallbacks, n)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// A fallback to the whole context costs no tokenizing and no copy of the
// context: the count of the context's block, made once per run, is reused.
// Each subtask's prompt used to be built and counted in full, so a dry run
// allocated (and tokenized) the context again for every subtask. What the
// extra subtasks allocate is measured apart from what every run allocates
// once (parsing, indexing and counting the context).
func TestFallbacksDoNotRecountTheContext(t *testing.T) {
	const size = 256 << 10
	few, many := dryRunAlloc(t, 5, size), dryRunAlloc(t, 45, size)
	perSubtask := (float64(many) - float64(few)) / 40
	t.Logf("a dry run allocates %.1f MB with 5 fallbacks and %.1f MB with 45: %.0f KB per extra fallback of a %d KB context",
		float64(few)/(1<<20), float64(many)/(1<<20), perSubtask/1024, size>>10)
	// Tokenizing the context allocates over a hundred times its size (35 MB
	// per extra fallback of this one, before); the bound is generous, two
	// copies, because under -race sync.Pool drops what it holds and
	// small allocations grow.
	if perSubtask > 2*size {
		t.Errorf("each extra fallback allocates %.0f KB; want under two copies of the %d KB context", perSubtask/1024, size>>10)
	}
}
