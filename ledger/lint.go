package ledger

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/runlog"
)

// Lint rules, one per red flag of the context-budget discipline. The names
// are printed and may be matched by scripts; they do not change.
const (
	// RuleNoBoundaryEvaluation: a run reached its last phase and a phase
	// boundary on the way has no reset evaluation recorded.
	RuleNoBoundaryEvaluation = "no-boundary-evaluation"
	// RuleHardLimitReset: a reset or compaction happened only at the hard
	// limit of the window, not at the threshold.
	RuleHardLimitReset = "hard-limit-reset"
	// RuleResumeNotFromLedger: a session resumed from a transcript, memory
	// or anything else but a complete ledger entry.
	RuleResumeNotFromLedger = "resume-not-from-ledger"
	// RuleIncompleteEntry: a ledger entry lacks a field, a next step or
	// evidence.
	RuleIncompleteEntry = "incomplete-ledger-entry"
	// RuleOversizeIngested: a sub-agent return over its contract was taken
	// into the parent's context.
	RuleOversizeIngested = "oversize-return-ingested"
	// RuleCopiedThresholdTable: a skill body restates the threshold table
	// or fraction instead of referring to the budget settings.
	RuleCopiedThresholdTable = "copied-threshold-table"
	// RuleCopiedLedgerFormat: a skill body restates the ledger format (an
	// entry heading, or the field headings) instead of referring to it.
	RuleCopiedLedgerFormat = "copied-ledger-format"
	// RuleResetWithoutLedger: a reset with no complete ledger entry written
	// before it (the Iron Law).
	RuleResetWithoutLedger = "reset-without-ledger"
)

// HardLimitFraction is the context fraction from which a reset counts as
// made at the hard limit: by then the run has paid for nearly the whole
// window on every turn the threshold should have saved.
const HardLimitFraction = 0.95

// SkillBody is a skill file to check for copied budget rules.
type SkillBody struct {
	Path string
	Body string
}

// Finding is one red flag.
type Finding struct {
	Rule    string
	Message string
	// Where is a file:line, or a run id when no line applies.
	Where string
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s: %s", f.Where, f.Rule, f.Message) }

// Lint reports the red flags in a run log, the ledger it wrote and the skill
// bodies it ran with. Events of several runs may be mixed; they are checked
// run by run, in file order. entries are the authority on what was written
// to the ledger; nil entries mean no ledger was read, and then the run log's
// ledger_written events stand in for them. Pass an empty, non-nil slice for a
// ledger that was read and has no entries.
func Lint(events []runlog.Event, entries []Entry, skills []SkillBody) []Finding {
	var fs []Finding
	var order []string
	byRun := map[string][]runlog.Event{}
	for _, e := range events {
		if _, ok := byRun[e.Run]; !ok {
			order = append(order, e.Run)
		}
		byRun[e.Run] = append(byRun[e.Run], e)
	}
	for _, id := range order {
		fs = append(fs, lintRun(id, byRun[id], entries)...)
	}
	for _, e := range entries {
		var ie *IncompleteError
		if err := e.Validate(); errors.As(err, &ie) {
			fs = append(fs, Finding{Rule: RuleIncompleteEntry, Where: where(e.Path, e.Line, ""),
				Message: fmt.Sprintf("entry %q at %s lacks %s", e.Phase, e.Time.Format(time.RFC3339), strings.Join(ie.Missing, "; "))})
		}
	}
	for _, s := range skills {
		fs = append(fs, lintSkill(s)...)
	}
	return fs
}

func where(path string, line int, fallback string) string {
	switch {
	case path != "" && line > 0:
		return fmt.Sprintf("%s:%d", path, line)
	case path != "":
		return path
	case line > 0:
		return fmt.Sprintf("line %d", line)
	}
	return fallback
}

func evWhere(e runlog.Event) string { return where(e.Path, e.Line, "run "+e.Run) }

// sameSecond compares ledger times as the ledger writes them, to the second.
func sameSecond(a, b time.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) }

func lintRun(id string, events []runlog.Event, entries []Entry) []Finding {
	var fs []Finding
	var phases []string
	var (
		curPhase    string
		started     bool
		evalSeen    bool
		reachedLast bool
		ended       bool
		missing     []Finding
		written     []runlog.Event // complete ledger_written events so far
	)
	for _, e := range events {
		switch e.Type {
		case runlog.RunStart:
			if phases == nil {
				phases = e.Phases
			}
		case runlog.RunEnd:
			ended = true
		case runlog.BoundaryEvaluation:
			evalSeen = true
		case runlog.PhaseStart:
			// A resumed run starts its current phase again; that is not
			// a boundary.
			if started && e.Phase != curPhase && !evalSeen {
				missing = append(missing, Finding{Rule: RuleNoBoundaryEvaluation, Where: evWhere(e),
					Message: fmt.Sprintf("run %s crossed the boundary %q → %q with no reset evaluation recorded", id, curPhase, e.Phase)})
			}
			if !started || e.Phase != curPhase {
				evalSeen = false
			}
			started, curPhase = true, e.Phase
			if len(phases) > 0 && e.Phase == phases[len(phases)-1] {
				reachedLast = true
			}
		case runlog.Reset:
			fs = append(fs, lintReset(id, e, entries, written)...)
		case runlog.Resume:
			if f, bad := lintResume(id, e, entries, written); bad {
				fs = append(fs, f)
			}
		case runlog.LedgerWritten:
			if e.Complete != nil && *e.Complete {
				written = append(written, e)
			}
		case runlog.SubagentReturn:
			over := e.ContractTokens > 0 && e.Tokens > e.ContractTokens
			if e.Action == runlog.ActionIngestedOversize || over && (e.Action == "" || e.Action == runlog.ActionAccepted) {
				fs = append(fs, Finding{Rule: RuleOversizeIngested, Where: evWhere(e),
					Message: fmt.Sprintf("run %s took a sub-agent return of %d tokens against a contract of %d into its context instead of re-requesting a summary", id, e.Tokens, e.ContractTokens)})
			}
		}
	}
	fs = append(fs, lintSessions(id, events)...)
	// Without a phase list, a run that ended has reached its last phase.
	if reachedLast || len(phases) == 0 && ended {
		fs = append(missing, fs...)
	}
	return fs
}

func lintReset(id string, e runlog.Event, entries []Entry, written []runlog.Event) []Finding {
	var fs []Finding
	frac := e.ContextFraction
	if frac == 0 && e.WindowTokens > 0 {
		frac = float64(e.ContextTokens) / float64(e.WindowTokens)
	}
	if e.Reason == runlog.ReasonHardLimit || frac >= HardLimitFraction {
		fs = append(fs, Finding{Rule: RuleHardLimitReset, Where: evWhere(e),
			Message: fmt.Sprintf("run %s reset at %.0f%% of the window (reason %q): compaction waited for the hard limit instead of the threshold", id, frac*100, e.Reason)})
	}
	if msg := ledgerBacking(e, entries, written); msg != "" {
		fs = append(fs, Finding{Rule: RuleResetWithoutLedger, Where: evWhere(e),
			Message: fmt.Sprintf("run %s reset (reason %q) %s", id, e.Reason, msg)})
	}
	return fs
}

// ledgerBacking says what is wrong with the ledger entry an event claims to
// be seeded from, or "" when a complete entry was written before it.
func ledgerBacking(e runlog.Event, entries []Entry, written []runlog.Event) string {
	if e.LedgerTime.IsZero() {
		return "without naming the ledger entry it was seeded from"
	}
	lt := e.LedgerTime.Format(time.RFC3339)
	if entries != nil {
		incomplete := false
		for _, en := range entries {
			if !sameSecond(en.Time, e.LedgerTime) {
				continue
			}
			if !en.Complete() {
				incomplete = true
				continue
			}
			if !e.Time.IsZero() && en.Time.Truncate(time.Second).After(e.Time) {
				return fmt.Sprintf("before its ledger entry at %s was written", lt)
			}
			return ""
		}
		if incomplete {
			return fmt.Sprintf("from the incomplete ledger entry at %s", lt)
		}
		return fmt.Sprintf("from a ledger entry at %s that the ledger does not have", lt)
	}
	for _, w := range written {
		if sameSecond(w.LedgerTime, e.LedgerTime) {
			return ""
		}
	}
	return fmt.Sprintf("with no complete ledger entry at %s written before it", lt)
}

func lintResume(id string, e runlog.Event, entries []Entry, written []runlog.Event) (Finding, bool) {
	f := Finding{Rule: RuleResumeNotFromLedger, Where: evWhere(e)}
	if e.From != runlog.FromLedger {
		from := e.From
		if from == "" {
			from = "an unrecorded source"
		}
		f.Message = fmt.Sprintf("run %s resumed from %s instead of a ledger entry", id, from)
		return f, true
	}
	// A resume may follow a crash that lost the ledger_written event, so
	// only the ledger itself can contradict it.
	if e.LedgerTime.IsZero() {
		f.Message = fmt.Sprintf("run %s resumed from the ledger without naming the entry", id)
		return f, true
	}
	if entries != nil {
		if msg := ledgerBacking(e, entries, written); msg != "" {
			f.Message = fmt.Sprintf("run %s resumed %s", id, msg)
			return f, true
		}
	}
	return f, false
}

var (
	budgetWord = regexp.MustCompile(`(?i)\b(threshold|fraction|compact\w*|reset)\b`)
	windowWord = regexp.MustCompile(`(?i)\bwindow\b`)
	// budgetNumber matches a percentage or a fraction of one, the values a
	// copied threshold rule carries (60%, 60–70 %, 0.65, .7).
	ledgerTemplate = regexp.MustCompile(`^#{1,6}\s*Ledger\s*(?:—|–|--?)`)
	fieldHeading   = regexp.MustCompile(`^(?:#{1,6}\s*|\*\*)([A-Za-z /]+?):?(?:\*\*)?:?$`)
	budgetNumber   = regexp.MustCompile(`\d{1,3}(?:\.\d+)?\s*%|(?:^|[^\d.])0?\.\d+\b`)
)

// lintSkill finds threshold tables, threshold rules and the ledger format
// restated in a skill body. A body should name the budget settings
// (threshold_fraction in the workflow file) and the ledger, so that changing
// either changes every skill.
func lintSkill(s SkillBody) []Finding {
	var fs []Finding
	lines := strings.Split(strings.ReplaceAll(s.Body, "\r\n", "\n"), "\n")
	ledgerFirst, fieldFirst := 0, 0
	fieldsSeen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "|") {
			start := i
			var table strings.Builder
			for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|") {
				table.WriteString(lines[i] + "\n")
				i++
			}
			i--
			tb := table.String()
			if budgetWord.MatchString(tb) && budgetNumber.MatchString(tb) {
				fs = append(fs, Finding{Rule: RuleCopiedThresholdTable, Where: where(s.Path, start+1, "skill"),
					Message: "skill body carries a copy of the threshold table; refer to the budget settings (threshold_fraction in the workflow) instead"})
			}
			continue
		}
		if ledgerFirst == 0 && ledgerTemplate.MatchString(t) {
			ledgerFirst = i + 1
		}
		if m := fieldHeading.FindStringSubmatch(t); m != nil {
			if f, ok := fieldByName[strings.ToLower(strings.Join(strings.Fields(m[1]), " "))]; ok && !fieldsSeen[f] {
				fieldsSeen[f] = true
				if fieldFirst == 0 {
					fieldFirst = i + 1
				}
			}
		}
		if budgetWord.MatchString(t) && windowWord.MatchString(t) && budgetNumber.MatchString(t) {
			fs = append(fs, Finding{Rule: RuleCopiedThresholdTable, Where: where(s.Path, i+1, "skill"),
				Message: fmt.Sprintf("skill body restates the threshold (%q); refer to the budget settings instead", textclip.Runes(t, 60))})
		}
	}
	// Three field headings are a copy of the format; one or two are a
	// skill's own words.
	at := ledgerFirst
	if at == 0 && len(fieldsSeen) >= 3 {
		at = fieldFirst
	}
	if at > 0 {
		fs = append(fs, Finding{Rule: RuleCopiedLedgerFormat, Where: where(s.Path, at, "skill"),
			Message: "skill body carries a copy of the ledger format; refer to the ledger by name instead of restating its format"})
	}
	return fs
}
