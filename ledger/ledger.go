// Package ledger reads and writes the context-budget ledger: the markdown file
// a run writes before every reset, so that a fresh session can be seeded from
// it instead of from the transcript. It is a public file format, meant to be
// read and written by people as well as by baton.
//
// # Format
//
// A ledger is a markdown file of entries. Prose, other headings and code
// blocks around the entries are allowed and ignored. An entry starts with a
// level-2 heading
//
//	## Ledger — <phase> — <RFC 3339 time>
//
// (em dashes, as written; en dashes and " - " are accepted when reading) and
// runs to the next heading of level 1 or 2. Its fields are level-3
// headings, exactly these six, in any order:
//
//	### Frozen decisions
//	- Run log is JSON Lines, one event per line.
//
//	### Done so far
//	- Parser for the ledger — evidence: ledger/parse.go:40
//	- Tests pass — evidence: `go test ./ledger/`
//
//	### Artifacts
//	- ledger/ledger.go
//
//	### Current phase
//	implement
//
//	### Next concrete step
//	Write the lint rules for resets.
//
//	### Open tickets / misses
//	none
//
// The list fields (Frozen decisions, Done so far, Artifacts, Open tickets /
// misses) are "- " bullet lists; an indented line continues the bullet above
// it. Each Done so far item ends in " — evidence: <pointer>", the pointer being
// a file:line, a command or an artifact path. Current phase and Next concrete
// step are plain text. A field with nothing in it says so with the single
// word none; a field that is absent makes the entry incomplete, and so does an
// empty Next concrete step or a Done so far item without evidence. Times are
// written to the second.
//
// The file only ever grows: Append adds an entry at the end and checks that
// what was there before is still there, byte for byte.
package ledger

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/textclip"
)

// Field names, as they appear in the ### headings and in IncompleteError.
const (
	FieldFrozenDecisions = "Frozen decisions"
	FieldDoneSoFar       = "Done so far"
	FieldArtifacts       = "Artifacts"
	FieldCurrentPhase    = "Current phase"
	FieldNextStep        = "Next concrete step"
	FieldOpenTickets     = "Open tickets / misses"
)

// Fields lists the entry fields in the order Render writes them.
var Fields = []string{FieldFrozenDecisions, FieldDoneSoFar, FieldArtifacts, FieldCurrentPhase, FieldNextStep, FieldOpenTickets}

// none is the explicit value of an empty field.
const none = "none"

// Sentinel errors callers branch on.
var (
	// ErrIncomplete: an entry lacks a field, a next step, or evidence. No
	// reset may be seeded from it.
	ErrIncomplete = errors.New("incomplete ledger entry")
	// ErrNoEntry: the ledger has no complete entry to resume from.
	ErrNoEntry = errors.New("no complete ledger entry")
	// ErrRewritten: after an append, the old content was not a prefix of
	// the file, so something else changed the ledger meanwhile.
	ErrRewritten = errors.New("ledger changed underneath the append")
	// ErrMalformed: the ledger has entries that could not be read.
	ErrMalformed = errors.New("malformed ledger")
)

// Item is one Done so far item and where to check it.
type Item struct {
	Text     string
	Evidence string
}

// Entry is one ledger entry.
type Entry struct {
	Phase           string
	Time            time.Time
	FrozenDecisions []string
	DoneSoFar       []Item
	Artifacts       []string
	CurrentPhase    string
	NextStep        string
	OpenTickets     []string

	// Absent lists the fields Parse did not find in the entry's text. An
	// entry built in code has every field (an empty list renders as none),
	// so this is only ever set by Parse.
	Absent []string
	// Path and Line say where Parse found the entry's heading; Render
	// ignores them.
	Path string
	Line int
}

// IncompleteError lists what makes an entry incomplete. It wraps
// ErrIncomplete.
type IncompleteError struct {
	Phase   string
	Time    time.Time
	Missing []string
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("ledger entry %q at %s is incomplete: %s", e.Phase, e.Time.Format(time.RFC3339), strings.Join(e.Missing, "; "))
}

func (e *IncompleteError) Unwrap() error { return ErrIncomplete }

// Validate returns an *IncompleteError when the entry lacks a field, a phase
// or time in its heading, a current phase or next step, or evidence for a
// Done so far item.
func (e Entry) Validate() error {
	var missing []string
	if strings.TrimSpace(e.Phase) == "" || strings.ContainsAny(e.Phase, "\r\n") {
		missing = append(missing, "phase in the heading")
	}
	if e.Time.IsZero() {
		missing = append(missing, "time in the heading")
	}
	missing = append(missing, e.Absent...)
	if !contains(e.Absent, FieldCurrentPhase) && isNone(e.CurrentPhase) {
		missing = append(missing, FieldCurrentPhase)
	}
	if !contains(e.Absent, FieldNextStep) && isNone(e.NextStep) {
		missing = append(missing, FieldNextStep)
	}
	for i, it := range e.DoneSoFar {
		if strings.TrimSpace(it.Evidence) == "" {
			missing = append(missing, fmt.Sprintf("evidence for %s item %d (%s)", FieldDoneSoFar, i+1, textclip.Runes(it.Text, 40)))
		}
	}
	if len(missing) > 0 {
		return &IncompleteError{Phase: e.Phase, Time: e.Time, Missing: missing}
	}
	return nil
}

// Complete reports whether Validate finds nothing missing.
func (e Entry) Complete() bool { return e.Validate() == nil }

func isNone(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.EqualFold(s, none)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Heading returns the entry's heading line without its newline.
func (e Entry) Heading() string {
	return fmt.Sprintf("## Ledger — %s — %s", strings.TrimSpace(e.Phase), e.Time.Format(time.RFC3339))
}

// Render writes the entry in the ledger format, starting with its heading and
// ending with a newline. Every field is written; an empty one as none.
func Render(e Entry) []byte {
	var b strings.Builder
	b.WriteString(e.Heading())
	b.WriteString("\n")
	list := func(name string, items []string) {
		fmt.Fprintf(&b, "\n### %s\n", name)
		if len(items) == 0 {
			b.WriteString(none + "\n")
			return
		}
		for _, it := range items {
			b.WriteString("- " + indentCont(it) + "\n")
		}
	}
	text := func(name, s string) {
		fmt.Fprintf(&b, "\n### %s\n", name)
		s = strings.TrimSpace(s)
		if s == "" {
			s = none
		}
		b.WriteString(s + "\n")
	}
	list(FieldFrozenDecisions, e.FrozenDecisions)
	done := make([]string, len(e.DoneSoFar))
	for i, it := range e.DoneSoFar {
		done[i] = strings.TrimSpace(it.Text)
		if ev := strings.TrimSpace(it.Evidence); ev != "" {
			done[i] += " — evidence: " + ev
		}
	}
	list(FieldDoneSoFar, done)
	list(FieldArtifacts, e.Artifacts)
	text(FieldCurrentPhase, e.CurrentPhase)
	text(FieldNextStep, e.NextStep)
	list(FieldOpenTickets, e.OpenTickets)
	return []byte(b.String())
}

// indentCont indents the continuation lines of a multi-line item so they
// stay inside its bullet.
func indentCont(s string) string {
	s = strings.TrimSpace(s)
	return strings.ReplaceAll(s, "\n", "\n  ")
}
