package bench

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/slice"
)

// The planted count is what the combined corpus holds, so the scale run's
// expected answer is not taken on trust.
func TestScaleCorpusPlantsWhatItCounts(t *testing.T) {
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	docs, planted, total := scaleCorpus(tasks[:3], 40_000, counterFor())
	combined, _ := slice.Combine(docs)
	if got := strings.Count(string(combined), scaleMark); got != planted || planted == 0 {
		t.Errorf("planted %d, the corpus holds %d", planted, got)
	}
	if total < 40_000 || len(docs) <= 3 {
		t.Errorf("%d documents of %d tokens; want copies past 40000", len(docs), total)
	}
	seen := map[string]bool{}
	for _, d := range docs {
		if seen[d.Name] {
			t.Errorf("document name %q repeats", d.Name)
		}
		seen[d.Name] = true
	}
}

// Each scale target is missed when its figure says so.
func TestScaleTargetsCanFail(t *testing.T) {
	fits := true
	rec := &orchestrate.Record{Status: orchestrate.RunPartial, Planner: orchestrate.PlannerRetrieval, Answer: "count: 9"}
	rec.Accounting.SingleCallFits = &fits
	r := ScaleResult{Window: 1000, CorpusTokens: 900, Planted: 10, Record: rec, OverWindow: 1, LargestRequest: 1200,
		Growth: []ScalePoint{{Share: "1/4", CPUPerMB: 100}, {Share: "1", CPUPerMB: 400}}}
	s := ScaleSection(r, 1)
	for _, tg := range s.Targets {
		if tg.Met {
			t.Errorf("target %q met by failing figures (%s)", tg.Name, tg.Got)
		}
		if tg.Fail == "" {
			t.Errorf("target %q does not say how it could fail", tg.Name)
		}
	}
}
