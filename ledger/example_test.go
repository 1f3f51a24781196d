package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
)

// A runner appends a complete entry before a reset and seeds the fresh
// session from the newest complete entry.
func ExampleAppend() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "specs", "ledger.md")

	e := ledger.Entry{
		Phase:        "analysis",
		Time:         time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC),
		DoneSoFar:    []ledger.Item{{Text: "Listed the modules", Evidence: "specs/modules.md"}},
		CurrentPhase: "analysis",
		NextStep:     "Start implement with the parser.",
	}
	if err := ledger.Append(path, e); err != nil {
		fmt.Println(err)
	}
	e.NextStep = "" // an entry without a next step is refused
	fmt.Println(ledger.Append(path, e) != nil)

	latest, _ := ledger.Latest(path)
	fmt.Println(latest.NextStep)
	// Output:
	// true
	// Start implement with the parser.
}

func ExampleLint() {
	t := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	events := []runlog.Event{
		{Run: "r1", Type: runlog.Reset, Reason: runlog.ReasonHardLimit, ContextFraction: 0.98, LedgerTime: t},
		{Run: "r1", Type: runlog.Resume, From: runlog.FromTranscript},
	}
	for _, f := range ledger.Lint(events, nil, nil) {
		fmt.Println(f.Rule)
	}
	// Output:
	// hard-limit-reset
	// reset-without-ledger
	// resume-not-from-ledger
}
