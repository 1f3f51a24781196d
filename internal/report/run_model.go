package report

import (
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/pricing"
	"github.com/baton-dev/baton/runlog"
)

// runView is what the run report draws, gathered from the log in one pass.
// Events of another run id (a log someone concatenated) are left out.
type runView struct {
	id         string
	started    time.Time
	ended      time.Time // the last event's time
	status     string
	phases     []string
	ledgerPath string
	window     int
	threshold  int
	model      string

	steps     []*runStepView
	calls     []runCtxCall // the steps' own paid calls: the context chart
	resets    []runlog.Event
	replayed  int // resets a resumed step took from its journal
	misses    []runlog.Event
	bounds    []runlog.Event // boundary evaluations
	subagents []runlog.Event
	ledgers   []runlog.Event // ledger_written

	continuous runlog.Continuous
	usage      llm.Usage
	cost       float64
	priced     bool // every paid call has a price
	paidCalls  int
}

type runStepView struct {
	id, phase, skill string
	status, note     string
	turns            int
	calls            int
	usage            llm.Usage
	cost             float64
	priced           bool
	tools            []runToolCount // in order of first use
	toolErrors       []runlog.Event
}

type runToolCount struct {
	name     string
	subagent bool
	calls    int
	errors   int
}

// runCtxCall is one point of the context chart.
type runCtxCall struct {
	n           int // 1-based position among the chart's calls
	step, skill string
	turn, line  int
	context     int
	baseline    int // the continuous-session baseline of the call (modelled)
}

// runStatusUnfinished is the status of a run whose log has no end yet.
const runStatusUnfinished = "unfinished"

func buildRunView(events []runlog.Event) *runView {
	v := &runView{status: runStatusUnfinished, priced: true}
	if len(events) == 0 {
		return v
	}
	v.id, v.started = events[0].Run, events[0].Time
	own := events
	for i, e := range events {
		if e.Run != v.id {
			// Copied only when the log holds another run's events.
			own = make([]runlog.Event, 0, len(events))
			own = append(own, events[:i]...)
			for _, e := range events[i:] {
				if e.Run == v.id {
					own = append(own, e)
				}
			}
			break
		}
	}
	v.continuous = runlog.ContinuousSession(own)
	baseline := map[int]runlog.ContinuousCall{} // by log line
	for _, c := range v.continuous.Calls {
		baseline[c.Line] = c
	}
	prices := pricing.Default()
	steps := map[string]*runStepView{}
	step := func(e runlog.Event) *runStepView {
		s, ok := steps[e.Step]
		if !ok {
			s = &runStepView{id: e.Step, phase: e.Phase, skill: e.Skill, status: runStatusUnfinished, priced: true}
			steps[e.Step] = s
			v.steps = append(v.steps, s)
		}
		if s.skill == "" {
			s.skill = e.Skill
		}
		if s.phase == "" {
			s.phase = e.Phase
		}
		return s
	}
	for _, e := range own {
		if e.Time.After(v.ended) {
			v.ended = e.Time
		}
		switch e.Type {
		case runlog.RunStart:
			v.phases, v.ledgerPath, v.window, v.threshold, v.model = e.Phases, e.LedgerPath, e.WindowTokens, e.ThresholdTokens, e.Model
		case runlog.RunEnd:
			v.status = e.Status
			if v.status == "" || v.status == "done" {
				v.status = "ok"
			}
		case runlog.StepStart:
			if e.Step != "" {
				s := step(e)
				s.status, s.note = runStatusUnfinished, ""
			}
		case runlog.StepEnd:
			if e.Step == "" {
				continue
			}
			s := step(e)
			s.status, s.note = e.Status, e.Note
			if v.status != "ok" {
				// The last step's end says how the run stands until a
				// run_end.
				v.status = e.Status
				if e.Status == "ok" {
					v.status = runStatusUnfinished
				}
			}
		case runlog.ModelCall:
			var s *runStepView
			if e.Step != "" {
				s = step(e)
				if !e.Subagent && e.Turn > s.turns {
					s.turns = e.Turn
				}
			}
			if b, ok := baseline[e.Line]; ok && !e.Subagent {
				v.calls = append(v.calls, runCtxCall{n: len(v.calls) + 1, step: e.Step, skill: e.Skill, turn: e.Turn, line: e.Line,
					context: b.Sent, baseline: b.Baseline()})
			}
			if e.Replayed || e.Note == "answered from the step journal" || e.Usage == nil {
				continue
			}
			u := llm.Usage{InputTokens: int64(e.Usage.InputTokens), OutputTokens: int64(e.Usage.OutputTokens),
				CacheReadInputTokens: int64(e.Usage.CacheReadTokens), CacheCreationInputTokens: int64(e.Usage.CacheWriteTokens)}
			c, ok := prices.Cost("", e.Model, u)
			v.usage, v.paidCalls = v.usage.Add(u), v.paidCalls+1
			if ok {
				v.cost += c
			} else {
				v.priced = false
			}
			if s != nil {
				s.usage, s.calls = s.usage.Add(u), s.calls+1
				if ok {
					s.cost += c
				} else {
					s.priced = false
				}
			}
		case runlog.ToolCall:
			if e.Step == "" || e.Replayed {
				// A replayed call was counted when it ran.
				continue
			}
			s := step(e)
			i := 0
			for i < len(s.tools) && (s.tools[i].name != e.Tool || s.tools[i].subagent != e.Subagent) {
				i++
			}
			if i == len(s.tools) {
				s.tools = append(s.tools, runToolCount{name: e.Tool, subagent: e.Subagent})
			}
			s.tools[i].calls++
			if e.Status == runlog.ToolError {
				s.tools[i].errors++
				s.toolErrors = append(s.toolErrors, e)
			}
		case runlog.Reset:
			if e.Replayed {
				v.replayed++
				continue
			}
			v.resets = append(v.resets, e)
		case runlog.MissNote:
			v.misses = append(v.misses, e)
		case runlog.BoundaryEvaluation:
			v.bounds = append(v.bounds, e)
		case runlog.SubagentReturn:
			v.subagents = append(v.subagents, e)
		case runlog.LedgerWritten:
			v.ledgers = append(v.ledgers, e)
		}
	}
	return v
}

// resetAfter is the number of chart calls made before reset r: its marker
// goes after that call.
func (v *runView) resetAfter(r runlog.Event) int {
	n := 0
	for _, c := range v.calls {
		if c.line < r.Line {
			n = c.n
		}
	}
	return n
}

// workspace is the folder a run folder (<ws>/.baton/runs/<id>) belongs to,
// or "" when dir is not laid out so.
func runWorkspaceOf(dir string) string {
	ws, _ := batondir.WorkspaceOfRuns(filepath.Dir(dir))
	return ws
}
