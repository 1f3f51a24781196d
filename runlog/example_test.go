package runlog_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-dev/baton/runlog"
)

func Example() {
	dir, _ := os.MkdirTemp("", "runlog")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, ".baton", "runs", "r1", "events.jsonl")

	w, err := runlog.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Write(runlog.Event{Run: "r1", Type: runlog.RunStart, Phases: []string{"analysis", "report"}, LedgerPath: "specs/ledger.md"})
	w.Write(runlog.Event{Run: "r1", Type: runlog.BoundaryEvaluation, Phase: "analysis", NextPhase: "report",
		ProjectedTokens: 90000, ThresholdTokens: 130000, WindowTokens: 200000, Decision: runlog.DecisionContinue})
	w.Close()

	events, problems, err := runlog.Read(path)
	fmt.Println(len(events), len(problems), err)
	fmt.Println(events[1].Type, events[1].Decision)
	// Output:
	// 2 0 <nil>
	// boundary_evaluation continue
}
