package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dev/baton/orchestrate"
)

// largeLoogle is the synthetic LooGLE document grown to about 35,000
// tokens, where the default planner no longer answers in one direct call.
func largeLoogle(t *testing.T) LoogleDoc {
	_, doc := syntheticLoogle(t)
	var b strings.Builder
	for i, part := range strings.SplitAfter(doc.Text, "home. ") {
		b.WriteString(part)
		if i%30 == 29 {
			for k := range 300 {
				fmt.Fprintf(&b, "Aside %d of %d recalls harbours, ledgers and the price of coal. ", k, i)
			}
		}
	}
	doc.Text = b.String()
	return doc
}

// The token corpus's default-planner table holds the LooGLE documents when
// they are given: a row each with the auto run's figures beside the single
// call, and totals with and without the corpus; the evidence the fake
// quotes shows their slices held what the questions need.
func TestTokenCorpusIncludesLoogle(t *testing.T) {
	if !OutlineAvailable() {
		t.Skip("no outline planner: auto is not measured")
	}
	tasks, err := LoogleTasks([]LoogleDoc{largeLoogle(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || len(tasks[0].Parsed.Subtasks) != 3 {
		t.Fatalf("tasks %+v", tasks)
	}
	lo, err := RunLoogleAuto(context.Background(), tasks)
	if err != nil {
		t.Fatal(err)
	}
	e := lo[0]
	if e.AutoPlanner == orchestrate.PlannerDirect || e.Auto <= 0 || e.Auto >= e.Single || e.Context < 20000 {
		t.Errorf("auto ran %q and sent %d, the single call %d, for %d tokens: %s", e.AutoPlanner, e.Auto, e.Single, e.Context, e.Records[VariantAuto].PlannerReason)
	}
	if ev := e.Evidence[VariantAuto]; ev.Sentences != 3 || ev.InSlice != 3 || ev.ViaFallback != 0 {
		t.Errorf("evidence %+v, want all three quotes in their slices", ev)
	}
	corpus, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(corpus, func(c *Task) bool { return c.ID == "otel-go-contributing" })
	es, err := RunEfficiency(context.Background(), corpus[i:i+1])
	if err != nil {
		t.Fatal(err)
	}
	s := EfficiencySectionWith(es, lo)
	rows := map[string][]string{}
	for _, tb := range s.Tables {
		if strings.HasPrefix(tb.Title, "Default planner (auto)") {
			for _, r := range tb.Rows {
				rows[r[0]] = r
			}
		}
	}
	auto := func(name string) int {
		r, ok := rows[name]
		if !ok {
			t.Fatalf("no row %q in the auto table: %v", name, rows)
		}
		n, _ := strconv.Atoi(r[7])
		return n
	}
	if got := auto("loogle: Synthetic engineer"); got != e.Auto {
		t.Errorf("LooGLE row: %d, the run sent %d", got, e.Auto)
	}
	if got := auto("**total, LooGLE**"); got != e.Auto {
		t.Errorf("LooGLE total %d, want %d", got, e.Auto)
	}
	if got := auto("**total, corpus and LooGLE**"); got != e.Auto+es[0].Auto {
		t.Errorf("total %d, want %d + %d", got, e.Auto, es[0].Auto)
	}
	if got := auto("**total**"); got != es[0].Auto {
		t.Errorf("the corpus total %d moved: want %d", got, es[0].Auto)
	}
}

// A folder without the set leaves the token corpus as it was, with a note.
func TestTokenCorpusLoogleSkipped(t *testing.T) {
	effs, note, err := loogleEfficiency(context.Background(), Options{Loogle: filepath.Join(t.TempDir(), "missing")})
	if err != nil || effs != nil || !strings.HasPrefix(note, "LooGLE documents skipped: ") {
		t.Errorf("got %v, %q, %v", effs, note, err)
	}
	if effs, note, err := loogleEfficiency(context.Background(), Options{}); effs != nil || note != "" || err != nil {
		t.Errorf("no folder: %v, %q, %v", effs, note, err)
	}
}
