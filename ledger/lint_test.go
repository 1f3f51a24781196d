package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/baton-dev/baton/runlog"
)

func ev(min int, typ string, edit ...func(*runlog.Event)) runlog.Event {
	e := runlog.Event{Time: t0.Add(time.Duration(min) * time.Minute), Run: "r", Type: typ, Line: min}
	for _, f := range edit {
		f(&e)
	}
	return e
}

func phase(p string) func(*runlog.Event) { return func(e *runlog.Event) { e.Phase = p } }

func sess(id string) func(*runlog.Event) { return func(e *runlog.Event) { e.Session = id } }
func step(n string) func(*runlog.Event)  { return func(e *runlog.Event) { e.Step = n } }
func ok(e *runlog.Event)                 { e.Status = "ok" }

// fromLedger is a resume backed by a ledger entry the test does not check.
func fromLedger(e *runlog.Event) { e.From, e.LedgerTime = runlog.FromLedger, t0 }

func seeded(min int) func(*runlog.Event) {
	return func(e *runlog.Event) { e.LedgerTime = t0.Add(time.Duration(min) * time.Minute) }
}

func entryAt(min int) Entry {
	e := fullEntry()
	e.Time = t0.Add(time.Duration(min) * time.Minute)
	return e
}

func TestLint(t *testing.T) {
	phases := func(ps ...string) func(*runlog.Event) { return func(e *runlog.Event) { e.Phases = ps } }
	written := func(min int, complete bool) runlog.Event {
		return ev(min, runlog.LedgerWritten, seeded(min), func(e *runlog.Event) { e.Complete = runlog.Bool(complete) })
	}
	reset := func(min, from int, edit ...func(*runlog.Event)) runlog.Event {
		return ev(min, runlog.Reset, append([]func(*runlog.Event){seeded(from), func(e *runlog.Event) {
			e.Reason, e.ContextFraction = runlog.ReasonThreshold, 0.66
		}}, edit...)...)
	}
	sub := func(min, tokens int, action string) runlog.Event {
		return ev(min, runlog.SubagentReturn, func(e *runlog.Event) { e.Tokens, e.ContractTokens, e.Action = tokens, 1500, action })
	}
	tests := []struct {
		name    string
		events  []runlog.Event
		entries []Entry
		skills  []SkillBody
		want    []string // rule@where
	}{
		{"empty", nil, nil, nil, nil},
		{"boundaries evaluated", []runlog.Event{
			ev(1, runlog.RunStart, phases("a", "b")), ev(2, runlog.PhaseStart, phase("a")),
			ev(3, runlog.BoundaryEvaluation), ev(4, runlog.PhaseStart, phase("b")),
		}, nil, nil, nil},
		{"last phase not reached yet", []runlog.Event{
			ev(1, runlog.RunStart, phases("a", "b", "c")), ev(2, runlog.PhaseStart, phase("a")), ev(4, runlog.PhaseStart, phase("b")),
		}, nil, nil, nil},
		{"boundary skipped", []runlog.Event{
			ev(1, runlog.RunStart, phases("a", "b")), ev(2, runlog.PhaseStart, phase("a")), ev(4, runlog.PhaseStart, phase("b")),
		}, nil, nil, []string{"no-boundary-evaluation@line 4"}},
		{"one evaluation does not cover two boundaries", []runlog.Event{
			ev(1, runlog.RunStart, phases("a", "b", "c")), ev(2, runlog.PhaseStart, phase("a")), ev(3, runlog.BoundaryEvaluation),
			ev(4, runlog.PhaseStart, phase("b")), ev(5, runlog.PhaseStart, phase("c")),
		}, nil, nil, []string{"no-boundary-evaluation@line 5"}},
		{"resumed phase restart is not a boundary", []runlog.Event{
			ev(1, runlog.RunStart, phases("a", "b")), ev(2, runlog.PhaseStart, phase("a")), ev(3, runlog.PhaseStart, phase("a")),
			ev(4, runlog.BoundaryEvaluation), ev(5, runlog.PhaseStart, phase("b")),
		}, nil, nil, nil},
		{"no phase list: an ended run counts as finished", []runlog.Event{
			ev(2, runlog.PhaseStart, phase("a")), ev(4, runlog.PhaseStart, phase("b")), ev(5, runlog.RunEnd),
		}, nil, nil, []string{"no-boundary-evaluation@line 4"}},
		{"runs are checked apart", []runlog.Event{
			ev(1, runlog.RunStart, phases("a", "b")), ev(2, runlog.PhaseStart, phase("a")), ev(3, runlog.BoundaryEvaluation),
			ev(4, runlog.PhaseStart, phase("a"), func(e *runlog.Event) { e.Run = "other" }),
			ev(5, runlog.PhaseStart, phase("b")),
		}, nil, nil, nil},
		{"reset backed by ledger_written", []runlog.Event{written(1, true), reset(2, 1)}, nil, nil, nil},
		{"reset backed by the ledger", []runlog.Event{reset(2, 1)}, []Entry{entryAt(1)}, nil, nil},
		{"ledger read but empty outweighs ledger_written", []runlog.Event{written(1, true), reset(2, 1)}, []Entry{}, nil, []string{"reset-without-ledger@line 2"}},
		{"reset after incomplete ledger_written", []runlog.Event{written(1, false), reset(2, 1)}, nil, nil, []string{"reset-without-ledger@line 2"}},
		{"reset before its entry", []runlog.Event{reset(2, 5, seeded(5))}, []Entry{entryAt(5)}, nil, []string{"reset-without-ledger@line 2"}},
		{"reset from incomplete entry", []runlog.Event{reset(2, 1)}, []Entry{func() Entry { e := entryAt(1); e.NextStep = ""; return e }()}, nil,
			[]string{"reset-without-ledger@line 2", "incomplete-ledger-entry@"}},
		{"reset naming nothing", []runlog.Event{reset(2, 0, func(e *runlog.Event) { e.LedgerTime = time.Time{} })}, nil, nil, []string{"reset-without-ledger@line 2"}},
		{"hard limit by reason", []runlog.Event{written(1, true), reset(2, 1, func(e *runlog.Event) { e.Reason = runlog.ReasonHardLimit })}, nil, nil, []string{"hard-limit-reset@line 2"}},
		{"hard limit by tokens", []runlog.Event{written(1, true), reset(2, 1, func(e *runlog.Event) { e.ContextFraction, e.ContextTokens, e.WindowTokens = 0, 96, 100 })}, nil, nil, []string{"hard-limit-reset@line 2"}},
		{"just under the hard limit", []runlog.Event{written(1, true), reset(2, 1, func(e *runlog.Event) { e.ContextFraction = 0.94 })}, nil, nil, nil},
		{"resume from memory", []runlog.Event{ev(3, runlog.Resume, func(e *runlog.Event) { e.From = runlog.FromMemory })}, nil, nil, []string{"resume-not-from-ledger@line 3"}},
		{"resume source unrecorded", []runlog.Event{ev(3, runlog.Resume)}, nil, nil, []string{"resume-not-from-ledger@line 3"}},
		{"resume from ledger", []runlog.Event{ev(3, runlog.Resume, seeded(1), func(e *runlog.Event) { e.From = runlog.FromLedger })}, []Entry{entryAt(1)}, nil, nil},
		{"resume from a ledger entry that is not there", []runlog.Event{ev(3, runlog.Resume, seeded(2), func(e *runlog.Event) { e.From = runlog.FromLedger })}, []Entry{entryAt(1)}, nil, []string{"resume-not-from-ledger@line 3"}},
		{"sub-agent returns", []runlog.Event{
			sub(1, 900, runlog.ActionAccepted), sub(2, 4000, runlog.ActionReRequested), sub(3, 1600, runlog.ActionTruncated),
			sub(4, 4000, runlog.ActionIngestedOversize), sub(5, 1600, runlog.ActionAccepted), sub(6, 1600, ""),
		}, nil, nil, []string{"oversize-return-ingested@line 4", "oversize-return-ingested@line 5", "oversize-return-ingested@line 6"}},
		{"crash and resume is one session after another", []runlog.Event{
			ev(1, runlog.RunStart, sess("a")), ev(2, runlog.StepStart, step("1"), sess("a")),
			ev(3, runlog.LedgerWritten, sess("b")), ev(4, runlog.Resume, sess("b"), fromLedger),
			ev(5, runlog.StepStart, step("1"), sess("b")), ev(6, runlog.StepEnd, step("1"), ok, sess("b")), ev(7, runlog.RunEnd, sess("b")),
		}, nil, nil, nil},
		{"a failed step runs again after a resume", []runlog.Event{
			ev(1, runlog.RunStart), ev(2, runlog.StepStart, step("1")), ev(3, runlog.StepEnd, step("1"), func(e *runlog.Event) { e.Status = "failed" }),
			ev(4, runlog.Resume, fromLedger), ev(5, runlog.StepStart, step("1")), ev(6, runlog.StepEnd, step("1"), ok),
		}, nil, nil, nil},
		{"an old session writes after the takeover", []runlog.Event{
			ev(1, runlog.RunStart, sess("a")), ev(2, runlog.StepStart, step("1"), sess("a")),
			ev(3, runlog.Resume, sess("b"), fromLedger), ev(4, runlog.StepStart, step("1"), sess("b")),
			ev(5, runlog.ModelCall, sess("a")),
		}, nil, nil, []string{"interleaved-sessions@line 5"}},
		{"no sessions: a step started twice without a resume", []runlog.Event{
			ev(1, runlog.RunStart), ev(2, runlog.StepStart, step("1")), ev(3, runlog.StepStart, step("1")),
		}, nil, nil, []string{"interleaved-sessions@line 3"}},
		{"no sessions: a step ended twice", []runlog.Event{
			ev(1, runlog.RunStart), ev(2, runlog.StepStart, step("1")), ev(3, runlog.Resume, fromLedger), ev(4, runlog.StepStart, step("1")),
			ev(5, runlog.StepEnd, step("1"), ok), ev(6, runlog.StepEnd, step("1"), ok),
		}, nil, nil, []string{"interleaved-sessions@line 6"}},
		{"no sessions: two run_end events", []runlog.Event{ev(1, runlog.RunStart), ev(2, runlog.RunEnd), ev(3, runlog.RunEnd)},
			nil, nil, []string{"interleaved-sessions@line 3"}},
		{"two run_start events", []runlog.Event{ev(1, runlog.RunStart), ev(2, runlog.RunStart)}, nil, nil, []string{"interleaved-sessions@line 2"}},
		{"skill bodies", nil, nil, []SkillBody{
			{Path: "ok/SKILL.md", Body: "Reset at the threshold_fraction from baton.yaml.\n| File | Lines |\n|---|---|\n| a.md | 10% |\n"},
			{Path: "table/SKILL.md", Body: "# T\r\n\r\n| Window | Compact at |\r\n|--|--|\r\n| 200k | 70% |\r\n"},
			{Path: "line/SKILL.md", Body: "intro\nreset when context passes 65 % of the window\n"},
			{Path: "frac/SKILL.md", Body: "Compact proactively at .6 of the context window.\n"},
		}, []string{"copied-threshold-table@table/SKILL.md:3", "copied-threshold-table@line/SKILL.md:2", "copied-threshold-table@frac/SKILL.md:1"}},
		{"ledger format copies", nil, nil, []SkillBody{
			{Path: "own/SKILL.md", Body: "## Next concrete step\nWrite it down.\n### Artifacts\n- a.md\n"},
			{Path: "heading/SKILL.md", Body: "Write:\n\n    ## Ledger — <phase> — <time>\n"},
			{Path: "fields/SKILL.md", Body: "x\n**Frozen decisions**:\n### Done so far\n### Open tickets / misses\n"},
		}, []string{"copied-ledger-format@heading/SKILL.md:3", "copied-ledger-format@fields/SKILL.md:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Lint(tt.events, tt.entries, tt.skills) {
				if f.Message == "" || strings.Contains(f.String(), "\n") {
					t.Errorf("finding %q is not one useful line", f)
				}
				got = append(got, f.Rule+"@"+f.Where)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
		})
	}
}

func FuzzLintSkill(f *testing.F) {
	f.Add("| Window | Compact at |\n|--|--|\n| 200k | 70% |\n")
	f.Add("## Ledger — x\n### Frozen decisions\n**Done so far**\n### Artifacts\n")
	f.Add("reset at 0.6–0.7 of the window\r\n|")
	f.Fuzz(func(t *testing.T, body string) {
		for _, fd := range Lint(nil, nil, []SkillBody{{Path: "s.md", Body: body}}) {
			if fd.Rule == "" || fd.Message == "" || fd.Where == "" {
				t.Fatalf("empty finding %+v", fd)
			}
		}
	})
}

// A run log as baton wrote it before the run lock, when a `baton resume`
// joined a live `baton run`: no sessions, one resume in the middle of a
// step the first process was still running. Its other red flags aside, lint
// names the interleaving at the first line that proves it.
func TestLintInterleavedRunLog(t *testing.T) {
	events, problems, err := runlog.Read("testdata/interleaved-run.jsonl")
	if err != nil || len(problems) > 0 {
		t.Fatalf("read: %v %v", err, problems)
	}
	var got []string
	for _, f := range Lint(events, nil, nil) {
		if f.Rule == RuleInterleavedSessions {
			got = append(got, f.Where)
			if !strings.Contains(f.Message, "two baton processes") || !strings.Contains(f.Message, "step 1") {
				t.Errorf("message %q", f.Message)
			}
		}
	}
	if want := []string{"testdata/interleaved-run.jsonl:11"}; !cmp.Equal(got, want) {
		t.Errorf("interleaved-sessions findings at %v, want %v", got, want)
	}
}
