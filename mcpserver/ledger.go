package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/ledger"
)

// appends is the annotation of ledger_append: it writes, and the same call
// twice writes two entries, but it only ever adds to the file.
var appends = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}

// LedgerItem is one Done so far item and where to check it.
type LedgerItem struct {
	Text     string `json:"text,omitempty" jsonschema:"what is done"`
	Evidence string `json:"evidence,omitempty" jsonschema:"where to check it: a file:line, a command or an artifact path"`
}

// LedgerAppendIn is one entry to append. No field is marked required in
// the schema: the handler names every missing one at once, in the ledger's
// own words, where the SDK's validator would name one JSON property. A list
// absent from the input is missing; an empty list is "none".
type LedgerAppendIn struct {
	Ledger          string       `json:"ledger,omitempty" jsonschema:"path of the ledger, relative to the server's root: one the server may write; default the first of them"`
	Phase           string       `json:"phase,omitempty" jsonschema:"the phase the entry closes, for its heading"`
	Time            string       `json:"time,omitempty" jsonschema:"RFC 3339 time for the heading; default now (times are kept to the second)"`
	FrozenDecisions []string     `json:"frozen_decisions,omitempty" jsonschema:"decisions that must not be revisited; [] for none"`
	DoneSoFar       []LedgerItem `json:"done_so_far,omitempty" jsonschema:"what is done, each with an evidence pointer; [] for none"`
	Artifacts       []string     `json:"artifacts,omitempty" jsonschema:"files the work produced; [] for none"`
	CurrentPhase    string       `json:"current_phase,omitempty" jsonschema:"the phase the work is in"`
	NextStep        string       `json:"next_step,omitempty" jsonschema:"the next concrete step, for the fresh session to start from"`
	OpenTickets     []string     `json:"open_tickets,omitempty" jsonschema:"open tickets and misses; [] for none"`
}

// LedgerEntry is an entry as the ledger holds it.
type LedgerEntry struct {
	Heading         string       `json:"heading"`
	Phase           string       `json:"phase"`
	Time            string       `json:"time"`
	FrozenDecisions []string     `json:"frozen_decisions"`
	DoneSoFar       []LedgerItem `json:"done_so_far"`
	Artifacts       []string     `json:"artifacts"`
	CurrentPhase    string       `json:"current_phase"`
	NextStep        string       `json:"next_step"`
	OpenTickets     []string     `json:"open_tickets"`
}

// LedgerAppendOut is the entry as stored and the ledger's size after it.
type LedgerAppendOut struct {
	Ledger  string      `json:"ledger"`
	Entry   LedgerEntry `json:"entry"`
	Entries int         `json:"entries" jsonschema:"entries in the ledger after the append"`
}

// LedgerLatestIn names the ledger.
type LedgerLatestIn struct {
	Ledger string `json:"ledger,omitempty" jsonschema:"path of the ledger, relative to the server's root; default the ledger ledger_append writes first"`
}

// LedgerLatestOut is the newest complete entry, if there is one.
type LedgerLatestOut struct {
	Found   bool         `json:"found" jsonschema:"false when the ledger has no complete entry"`
	Entry   *LedgerEntry `json:"entry,omitempty"`
	Entries int          `json:"entries" jsonschema:"entries in the ledger, complete or not"`
}

// LedgerLintIn is what to check.
type LedgerLintIn struct {
	Ledger string   `json:"ledger,omitempty" jsonschema:"path of the ledger; default the run log's ledger_path, else the ledger ledger_append writes first"`
	RunLog string   `json:"run_log,omitempty" jsonschema:"path of a run log (.baton/runs/<run id>/events.jsonl)"`
	Run    string   `json:"run,omitempty" jsonschema:"check only this run's events of the run log"`
	Skills []string `json:"skills,omitempty" jsonschema:"SKILL.md files, or folders searched for them, to check for copied budget rules"`
}

// LintFinding is one red flag.
type LintFinding struct {
	Where   string `json:"where" jsonschema:"file:line, or the run"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// LedgerLintOut is the red flags found.
type LedgerLintOut struct {
	Ledger   string        `json:"ledger,omitempty" jsonschema:"the ledger read, if any"`
	Findings []LintFinding `json:"findings"`
	Problems []string      `json:"problems" jsonschema:"parts of the ledger or run log that could not be read"`
	Warnings []string      `json:"warnings,omitempty" jsonschema:"a run log line cut short by a run that stopped mid-write"`
	Entries  int           `json:"entries"`
	Clean    bool          `json:"clean" jsonschema:"true when there are no findings and no problems"`
}

func (s *Server) addLedgerFileTools() {
	addTool(s, &mcp.Tool{Name: "ledger_append", Annotations: appends,
		Description: "Append a complete entry to the context-budget ledger before a reset, under the same lock `baton run` takes. Only a ledger the server is given is written: baton mcp --ledger, else the ledger: of the root's baton.yaml, else specs/ledger.md. Every field is required: frozen_decisions, done_so_far (each item with evidence), artifacts, current_phase, next_step, open_tickets; give [] for a list with nothing in it. An incomplete entry is refused, naming every missing field, and nothing is written."},
		s.ledgerAppend)
	addTool(s, &mcp.Tool{Name: "ledger_latest", Annotations: readOnly,
		Description: "The newest complete entry of the ledger: what a fresh session starts from after a reset. Incomplete entries are passed over."},
		s.ledgerLatest)
	addTool(s, &mcp.Tool{Name: "ledger_lint", Annotations: readOnly,
		Description: "Report the red flags of the context-budget discipline in a ledger, a run log and skill files, as `baton ledger lint` does: incomplete entries, resets without a ledger entry, resets at the hard limit, phase boundaries never evaluated, skills copying the threshold table or the ledger format."},
		s.ledgerLint)
}

func (s *Server) ledgerAppend(_ context.Context, _ *mcp.CallToolRequest, in LedgerAppendIn) (*mcp.CallToolResult, LedgerAppendOut, error) {
	e, err := entryFrom(in)
	if err != nil {
		return nil, LedgerAppendOut{}, err
	}
	c, err := s.confine("ledger", cmp.Or(in.Ledger, s.defaultPath("ledger")), true)
	if err != nil {
		return nil, LedgerAppendOut{}, err
	}
	if err := ledger.Append(c.abs, e); err != nil {
		return nil, LedgerAppendOut{}, c.wrap(err)
	}
	// What the file now holds for this entry is what Render wrote, read
	// back as any reader will.
	back, _, err := ledger.Parse(ledger.Render(e), c.rel)
	if err != nil || len(back) != 1 {
		return nil, LedgerAppendOut{}, fmt.Errorf("ledger %s: the entry was appended but does not read back", c.rel)
	}
	entries, _, err := ledger.Read(c.abs)
	if err != nil {
		return nil, LedgerAppendOut{}, c.wrap(err)
	}
	return nil, LedgerAppendOut{Ledger: c.rel, Entry: entryOut(back[0]), Entries: len(entries)}, nil
}

// entryFrom builds the ledger entry, refusing an incomplete one with every
// missing field named.
func entryFrom(in LedgerAppendIn) (ledger.Entry, error) {
	e := ledger.Entry{
		Phase:           in.Phase,
		FrozenDecisions: in.FrozenDecisions,
		Artifacts:       in.Artifacts,
		CurrentPhase:    in.CurrentPhase,
		NextStep:        in.NextStep,
		OpenTickets:     in.OpenTickets,
	}
	if in.Time == "" {
		e.Time = time.Now().UTC().Truncate(time.Second)
	} else {
		t, err := time.Parse(time.RFC3339, in.Time)
		if err != nil {
			return ledger.Entry{}, fmt.Errorf("time %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", in.Time)
		}
		e.Time = t.Truncate(time.Second)
	}
	// A list the input left out is absent; Validate names it as the
	// ledger does for an entry whose ### heading is missing.
	for _, l := range []struct {
		field  string
		absent bool
	}{
		{ledger.FieldFrozenDecisions, in.FrozenDecisions == nil},
		{ledger.FieldDoneSoFar, in.DoneSoFar == nil},
		{ledger.FieldArtifacts, in.Artifacts == nil},
		{ledger.FieldOpenTickets, in.OpenTickets == nil},
	} {
		if l.absent {
			e.Absent = append(e.Absent, l.field)
		}
	}
	// An empty bullet would not read back as an item; say which one
	// rather than let the append fail on the rendered text.
	for _, l := range []struct {
		name  string
		items []string
	}{{"frozen_decisions", in.FrozenDecisions}, {"artifacts", in.Artifacts}, {"open_tickets", in.OpenTickets}} {
		for i, it := range l.items {
			if strings.TrimSpace(it) == "" {
				return ledger.Entry{}, fmt.Errorf("%s[%d] is empty; leave empty items out (an empty list is none)", l.name, i)
			}
		}
	}
	var noText []string
	for i, it := range in.DoneSoFar {
		if strings.TrimSpace(it.Text) == "" {
			noText = append(noText, fmt.Sprintf("text for %s item %d", ledger.FieldDoneSoFar, i+1))
		}
		e.DoneSoFar = append(e.DoneSoFar, ledger.Item{Text: it.Text, Evidence: it.Evidence})
	}
	var missing []string
	var ie *ledger.IncompleteError
	if err := e.Validate(); errors.As(err, &ie) {
		missing = ie.Missing
	} else if err != nil {
		return ledger.Entry{}, err
	}
	missing = append(missing, noText...)
	if len(missing) > 0 {
		named := make([]string, len(missing))
		for i, m := range missing {
			named[i] = m + " (" + jsonName(m) + ")"
		}
		return ledger.Entry{}, fmt.Errorf("%w, nothing was written: missing %s", ledger.ErrIncomplete, strings.Join(named, "; "))
	}
	e.Absent = nil
	return e, nil
}

var itemField = regexp.MustCompile(`^(evidence|text) for ` + regexp.QuoteMeta(ledger.FieldDoneSoFar) + ` item (\d+)`)

// jsonName is the input field a missing part of an entry comes from.
func jsonName(missing string) string {
	switch missing {
	case "phase in the heading":
		return "phase"
	case "time in the heading":
		return "time"
	case ledger.FieldFrozenDecisions:
		return "frozen_decisions"
	case ledger.FieldDoneSoFar:
		return "done_so_far"
	case ledger.FieldArtifacts:
		return "artifacts"
	case ledger.FieldCurrentPhase:
		return "current_phase"
	case ledger.FieldNextStep:
		return "next_step"
	case ledger.FieldOpenTickets:
		return "open_tickets"
	}
	if m := itemField.FindStringSubmatch(missing); m != nil {
		n, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("done_so_far[%d].%s", n-1, m[1])
	}
	return "?"
}

func entryOut(e ledger.Entry) LedgerEntry {
	out := LedgerEntry{
		Heading:         e.Heading(),
		Phase:           e.Phase,
		Time:            e.Time.Format(time.RFC3339),
		FrozenDecisions: nonNil(e.FrozenDecisions),
		DoneSoFar:       []LedgerItem{},
		Artifacts:       nonNil(e.Artifacts),
		CurrentPhase:    e.CurrentPhase,
		NextStep:        e.NextStep,
		OpenTickets:     nonNil(e.OpenTickets),
	}
	for _, it := range e.DoneSoFar {
		out.DoneSoFar = append(out.DoneSoFar, LedgerItem{Text: it.Text, Evidence: it.Evidence})
	}
	return out
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func (s *Server) ledgerLatest(_ context.Context, _ *mcp.CallToolRequest, in LedgerLatestIn) (*mcp.CallToolResult, LedgerLatestOut, error) {
	c, err := s.confine("ledger", cmp.Or(in.Ledger, s.defaultPath("ledger")), false)
	if err != nil {
		return nil, LedgerLatestOut{}, err
	}
	entries, _, err := ledger.Read(c.abs)
	if err != nil {
		return nil, LedgerLatestOut{}, c.wrap(err)
	}
	// One read: the count and the entry come from the same version of the
	// file, even with an append in between.
	out := LedgerLatestOut{Entries: len(entries)}
	e := ledger.LatestOf(entries)
	if e == nil {
		return nil, out, nil
	}
	eo := entryOut(*e)
	out.Found, out.Entry = true, &eo
	return nil, out, nil
}
