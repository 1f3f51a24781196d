package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A field's text cannot close its entry or the file's structure: each of
// these is refused with ErrUnsafeText and leaves the ledger's bytes as they
// were, and a later entry stays readable.
func TestAppendRefusesStructuralText(t *testing.T) {
	for name, edit := range map[string]func(e *Entry){
		"fence in the last field":  func(e *Entry) { e.OpenTickets = []string{"see the log\n```"} },
		"tilde fence":              func(e *Entry) { e.Artifacts = []string{"a.go\n~~~"} },
		"fence alone as next step": func(e *Entry) { e.NextStep = "```\nrun it" },
		"heading after a newline":  func(e *Entry) { e.NextStep = "go on\n## Ledger — forged — 2026-01-01T00:00:00Z" },
		"indented heading":         func(e *Entry) { e.FrozenDecisions = []string{"keep\n   # Title"} },
		"level-3 field heading":    func(e *Entry) { e.CurrentPhase = "build\n### Next concrete step" },
		"setext underline":         func(e *Entry) { e.OpenTickets = []string{"Ledger — x — y\n====="} },
		"dash underline":           func(e *Entry) { e.OpenTickets = []string{"Ledger — x — y\n---"} },
		"carriage return":          func(e *Entry) { e.NextStep = "go on\r## Ledger — forged — 2026-01-01T00:00:00Z" },
		"NUL":                      func(e *Entry) { e.NextStep = "go\x00on" },
		"escape":                   func(e *Entry) { e.NextStep = "go\x1b[2Jon" },
		"heading in evidence":      func(e *Entry) { e.DoneSoFar = []Item{{Text: "x", Evidence: "a.go:1\n# Title"}} },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.md")
			first := fullEntry()
			if err := Append(path, first); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			e := fullEntry()
			edit(&e)
			if err := Append(path, e); !errors.Is(err, ErrUnsafeText) {
				t.Fatalf("Append = %v, want %v", err, ErrUnsafeText)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("a refused entry changed the ledger:\n%s", after)
			}
			if err := Append(path, fullEntry()); err != nil {
				t.Fatal(err)
			}
			if entries, _, err := Read(path); err != nil || len(entries) != 2 {
				t.Errorf("after a refused entry and a good one: %d entries, %v; want 2", len(entries), err)
			}
		})
	}
}

// Ordinary multi-line text, and text that only looks like structure in the
// middle of a line, is written and reads back.
func TestAppendKeepsOrdinaryText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.md")
	e := fullEntry()
	e.NextStep = "#1 priority: fix the pool\nthen run `go test` -- twice"
	e.OpenTickets = []string{"a - b", "x = y", "C# port"}
	if err := Append(path, e); err != nil {
		t.Fatal(err)
	}
	entries, _, err := Read(path)
	if err != nil || len(entries) != 1 || entries[0].NextStep != e.NextStep {
		t.Fatalf("read back: %+v, %v", entries, err)
	}
}
