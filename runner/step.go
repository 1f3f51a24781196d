package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/workflow"
)

// stepRun is one skill step: one or more fresh sessions (more when the
// budget resets mid-step), each starting from the step's context.
type stepRun struct {
	r         *runner
	seq       int
	phase     int
	skillName string
	seed      string // ledger entry the first session starts from

	j       *journal
	env     *toolEnv
	session *budget.Session
	usage   llm.Usage
	elapsed time.Duration
	// calls counts the model calls of the step, replayed ones included
	// (guarded by r.mu, as usage is).
	calls int
	// recorded is true when an earlier attempt of the step already
	// recorded its end in state.yaml (replay.go).
	recorded bool

	// win is the step's context window (window.go), made on first use.
	winOnce sync.Once
	win     *window
	turns   int // model turns taken, for progress
	// endTrace ends the step's part of Config.Trace (trace.go).
	endTrace func(End)
}

func (s *stepRun) stepEvent(e runlog.Event) runlog.Event {
	e.Step = fmt.Sprint(s.seq)
	e.Skill = s.skillName
	e.Phase = s.r.wf.Phases[s.phase].Name
	return e
}

func (s *stepRun) warn(msg string) {
	s.r.warn(fmt.Sprintf("step %d (%s): %s", s.seq, s.skillName, msg))
}

// call sends one model request through the step's journal and accounts
// for it. A request that would not fit the window is never sent: the error
// matches llm.ErrPromptTooLong, as the provider's own answer would.
func (s *stepRun) call(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, _, err := s.callHashed(ctx, req)
	return resp, err
}

// callHashed is call that also returns the request's hash, which keys the
// response's tool calls in the journal.
func (s *stepRun) callHashed(ctx context.Context, req *llm.Request) (*llm.Response, string, error) {
	req, err := s.guard().fit(req)
	if err != nil {
		s.r.logf("step %d %s: not sent: %v", s.seq, s.skillName, err)
		return nil, "", err
	}
	resp, hash, replayed, err := s.exchange(ctx, req)
	if err != nil {
		return nil, "", err
	}
	if req.System != subagentSystem {
		// Calibrate on the step's own calls only: they come in an order a
		// resume replays, so the bounds they set come out the same.
		s.guard().observe(req, resp.Usage)
	}
	s.addUsage(resp.Usage)
	if replayed {
		// Not sent and not paid again: the tracer gets it as an event
		// with the usage the journal recorded, not as a model call.
		s.r.mark(ctx, s.stepEvent(runlog.Event{Type: runlog.ModelCall, Model: req.Model, Usage: logUsage(resp.Usage), Note: "answered from the step journal"}))
	}
	s.r.mu.Lock()
	s.calls++
	if replayed {
		s.r.result.Replayed++
	}
	s.r.mu.Unlock()
	ev := s.stepEvent(runlog.Event{Type: runlog.ModelCall, Model: req.Model, Usage: logUsage(resp.Usage), ContextTokens: budget.ContextTokens(resp.Usage),
		Turn: s.turns, Subagent: req.System == subagentSystem})
	if replayed {
		// Logged with its usage when it was made: logging it again would
		// pay it twice for whoever sums the log.
		ev.Note, ev.Replayed, ev.Usage = "answered from the step journal", true, nil
	}
	s.r.event(ev)
	return resp, hash, nil
}

func (s *stepRun) addUsage(u llm.Usage) {
	s.r.mu.Lock()
	s.usage = s.usage.Add(u)
	s.r.result.Usage = s.r.result.Usage.Add(u)
	s.r.mu.Unlock()
}

// context builds the step's fresh context, or takes the one an earlier
// attempt of this step recorded.
func (s *stepRun) context(seed string) (system, user string, tokens int, err error) {
	sk, ok := s.r.lib.Get(s.skillName)
	if !ok {
		return "", "", 0, fmt.Errorf("unknown skill %q", s.skillName)
	}
	sc, err := workflow.StepContext(s.r.ws, sk, s.r.wf.Capsule, s.r.wf.State, seed)
	if err != nil {
		return "", "", 0, err
	}
	for _, m := range sc.Missing() {
		s.warn(fmt.Sprintf("declared file %s not included: %s", m.Path, m.Problem))
	}
	return sc.System, sc.User, sc.Tokens, nil
}

func (s *stepRun) run(ctx context.Context) (string, error) {
	start := s.r.cfg.Now()
	defer func() { s.elapsed = s.r.cfg.Now().Sub(start) }()
	var err error
	rel := filepath.Join(batondir.Rel.Steps(s.r.id), fmt.Sprintf("%03d-%s.jsonl", s.seq, fileSafe(s.skillName)))
	s.j, err = openJournal(filepath.Join(s.r.ws.Root(), rel), filepath.ToSlash(rel), journalGenesis(s.r.id, s.seq, s.skillName))
	if err != nil {
		return "", err
	}
	// The loop closes the journal once the step is recorded as ended: it
	// journals that it updates state.yaml (recordEnding).
	s.recorded = s.j.stepRecorded(s.r.statePath())
	s.env = newStepEnv(s.r.tools, s.r.statePath(), s.skillName, s.runSubagents)
	s.env.spill = s.r.spillView()
	s.env.checkNext = s.nextSkillProblem

	system, user, ctxTokens, err := s.context(s.seed)
	if err != nil {
		return "", err
	}
	// A resumed step starts from the context it recorded, never one rebuilt
	// from a state.yaml its own tool calls have changed since.
	first, err := s.j.recordStart(journalStart{System: system, User: user, Seed: s.seed, Hash: hashText(system, user), Tokens: ctxTokens})
	if err != nil {
		return "", err
	}
	system, user = first.System, first.User
	if first.Tokens > 0 {
		ctxTokens = first.Tokens
	}
	ev := s.stepEvent(runlog.Event{Type: runlog.StepStart, InputHash: first.Hash, ContextTokens: ctxTokens})
	if s.seed != "" {
		ev.From = runlog.FromLedger
	}
	s.r.event(ev)
	s.r.logf("step %d %s: fresh context of %d tokens", s.seq, s.skillName, ctxTokens)

	model := s.model() // the skill's model: key, or the run's model (skillmodel.go)
	if s.r.cfg.AgentCmd != "" {
		return s.runAgentCmd(ctx, system, user)
	}
	s.session = model.budget.NewSession()
	req := &llm.Request{
		Model:     model.name,
		System:    system,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: user}},
		Tools:     stepTools(),
		MaxTokens: s.r.cfg.MaxTokens,
	}
	for turn := 0; turn < s.r.cfg.MaxTurns; turn++ {
		s.turnStart(turn, ctxTokens)
		resp, hash, err := s.callHashed(ctx, req)
		if errors.Is(err, llm.ErrPromptTooLong) && len(req.Messages) > 1 {
			// Too long for the window, by baton's count or the provider's:
			// a reset to a fresh session with the entry baton composes.
			if req, err = s.overflowReset(ctx, req, err); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", tooLongHint(err)
		}
		s.session.Observe(resp.Usage)
		if !resp.WantsTools() && resp.Truncated() {
			// A summary cut at its max_tokens is half a handoff: the agent
			// is told, and finishes in its next turn.
			s.r.logf("step %d %s: the reply was cut at its %d-token limit; asked the agent to finish", s.seq, s.skillName, req.MaxTokens)
			req.Messages = append(req.Messages, resp.AssistantMessage(),
				llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(cutReplyNote, req.MaxTokens)})
			continue
		}
		if !resp.WantsTools() {
			// The agent answered without finishing explicitly: its text is
			// the step's summary.
			return resp.Text, nil
		}
		var results []llm.ToolResult
		var finished bool
		var summary string
		outs, err := s.runCalls(ctx, s.env, hash, resp.ToolCalls)
		if err != nil {
			return "", err
		}
		for _, out := range outs {
			results = append(results, out.result)
			if out.finished {
				finished, summary = true, out.summary
			}
		}
		results = s.fitResults(req, resp, resp.ToolCalls, results)
		req.Messages = llm.AppendToolRound(req.Messages, resp, results...)
		if finished {
			return summary, nil
		}
		// A safe point: between tool rounds. What the next turn adds is
		// at least the results just produced.
		// The assistant's own turn (a write_file's content, say) stays in
		// the context too.
		added := int(resp.Usage.OutputTokens)
		for _, res := range results {
			added += s.r.counter.Count(res.Content)
		}
		ctxTokens = s.session.Project(added)
		if d := s.session.MidPhase(added); d.Reset {
			newReq, err := s.budgetReset(ctx, req, d)
			if err != nil {
				return "", err
			}
			if newReq != nil {
				req = newReq
				ctxTokens = s.requestTokens(req)
			}
		}
	}
	return "", fmt.Errorf("%w after %d tool rounds (raise --max-turns if the step needs more)", ErrMaxTurns, s.r.cfg.MaxTurns)
}

// cutReplyNote answers a step's reply cut at its token limit (%d).
const cutReplyNote = "Your reply was cut at its %d-token limit, so it is incomplete. Finish the step now: call finish with a short summary of what the step did and left for the next one."

// budgetReset handles a threshold crossed mid-phase: it asks the session
// for a complete ledger entry, writes it, and returns the request of a fresh
// session seeded from it. An incomplete entry is a miss: the session goes on
// (nil request) and tries again at the next safe point; the second miss in a
// row forces the reset with the entry baton composes itself.
func (s *stepRun) budgetReset(ctx context.Context, req *llm.Request, d budget.Decision) (*llm.Request, error) {
	s.progress(ProgressEvent{Kind: ProgressThreshold, ContextTokens: d.Projected})
	ev := s.stepEvent(runlog.Event{Type: runlog.ThresholdCrossed, ProjectedTokens: d.Projected, ThresholdTokens: d.Threshold,
		WindowTokens: d.Window, ContextFraction: d.Fraction})
	s.r.event(ev)
	s.r.mark(ctx, ev)
	return s.reset(ctx, req, d, runlog.ReasonThreshold, nil)
}

// reset replaces the session by a fresh one seeded from a complete ledger
// entry. With a cause (the context no longer fits the window) the entry is
// composed by baton at once; otherwise the session is asked for it.
func (s *stepRun) reset(ctx context.Context, req *llm.Request, d budget.Decision, reason string, cause error) (*llm.Request, error) {
	phase := s.r.wf.Phases[s.phase].Name
	rec, replayed := s.j.recordedReset()
	note := ""
	if replayed {
		s.addUsage(rec.Usage)
		if err := s.r.ensureLedger(rec.Ledger); err != nil {
			return nil, err
		}
	} else {
		var entry ledger.Entry
		var err error
		if cause == nil {
			entry, rec.Usage, err = s.askLedger(ctx, req, phase)
			if errors.Is(err, llm.ErrPromptTooLong) {
				// Asking for the entry would not fit the window (or the
				// provider said so): baton writes the entry itself.
				cause = err
			}
		}
		if cause != nil {
			s.warn(fmt.Sprintf("the context is too large to ask for a ledger entry (%v); baton composed it from state.yaml and the run log", cause))
			note = "ledger entry composed by baton: " + cause.Error()
			entry, err = s.composed(phase)
		}
		if err != nil {
			if !errors.Is(err, ledger.ErrIncomplete) && !errors.Is(err, llm.ErrBadToolInput) {
				return nil, err
			}
			force := s.session.Miss()
			s.r.event(s.stepEvent(runlog.Event{Type: runlog.MissNote, Misses: s.session.Misses(), Note: "no complete ledger entry at the safe point: " + err.Error()}))
			s.warn(fmt.Sprintf("context budget reached but the ledger entry was incomplete (%v)", err))
			if !force {
				return nil, nil
			}
			reason = runlog.ReasonForcedAfterMisses
			composed, cerr := s.composed(phase)
			if cerr != nil {
				return nil, cerr
			}
			entry = composed
		}
		rec.Ledger = string(ledger.Render(entry))
		// The fresh session: the step's context rebuilt from the
		// workspace as it is now, plus the ledger entry. Never the
		// transcript.
		system, user, _, err := s.context(rec.Ledger)
		if err != nil {
			return nil, err
		}
		rec.System, rec.User = system, user
		// The reset is journalled before its entry is appended, so that a
		// process dying in between appends the same entry on resume
		// (ensureLedger) rather than a second one.
		if err := s.j.recordReset(rec); err != nil {
			return nil, err
		}
		crashPoint("reset recorded")
		// The Iron Law: the entry is on disk before the session is
		// replaced.
		if err := s.r.appendLedger(entry); err != nil {
			return nil, err
		}
	}
	rendered := rec.Ledger
	lt := time.Time{}
	if es, _, err := ledger.Parse([]byte(rendered), s.r.wf.Ledger); err == nil && len(es) > 0 {
		lt = es[0].Time
	}
	// A reset the journal answered was logged when it happened: marked
	// replayed, it is not counted twice.
	s.r.event(s.stepEvent(runlog.Event{Type: runlog.Reset, Reason: reason, LedgerTime: lt, ContextFraction: d.Fraction,
		ContextTokens: d.Projected, Mode: "fresh_session", Note: note, Replayed: replayed}))
	s.r.mu.Lock()
	s.r.result.Resets++
	s.r.mu.Unlock()
	s.r.logf("step %d %s: context budget reached (%d of %d tokens); reset to a fresh session seeded from the ledger", s.seq, s.skillName, d.Projected, d.Threshold)
	s.progress(ProgressEvent{Kind: ProgressReset, Reason: string(reason), ContextTokens: d.Projected})
	// The tracer gets the reset with the budget it was decided against.
	s.r.mark(ctx, s.stepEvent(runlog.Event{Type: runlog.Reset, Reason: reason, LedgerTime: lt, ContextFraction: d.Fraction,
		ContextTokens: d.Projected, ThresholdTokens: d.Threshold, WindowTokens: d.Window}))

	s.session = s.model().budget.NewSession()
	return &llm.Request{
		Model:     req.Model,
		System:    rec.System,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: rec.User}},
		Tools:     req.Tools,
		MaxTokens: req.MaxTokens,
	}, nil
}

// askLedger asks the session to write its ledger entry through the
// write_ledger tool. The exchange is a side request: it is not appended to
// the conversation, which either ends here (reset) or goes on unchanged
// (miss).
func (s *stepRun) askLedger(ctx context.Context, req *llm.Request, phase string) (ledger.Entry, llm.Usage, error) {
	side := *req
	side.Messages = append(append([]llm.Message{}, req.Messages...), llm.Message{Role: llm.RoleUser, Content: ledgerAsk(phase)})
	side.Tools = append(append([]llm.Tool{}, req.Tools...), ledgerTool())
	side.ToolChoice = llm.ToolNamed(toolWriteLedger)
	resp, err := s.call(ctx, &side)
	if err != nil {
		return ledger.Entry{}, llm.Usage{}, err
	}
	for _, c := range resp.ToolCalls {
		if c.Name != toolWriteLedger {
			continue
		}
		in, err := decodeLedger(c)
		if err != nil {
			return ledger.Entry{}, resp.Usage, err
		}
		e := ledger.Entry{
			Phase:           phase,
			Time:            s.r.cfg.Now().UTC().Truncate(time.Second),
			FrozenDecisions: in.FrozenDecisions,
			Artifacts:       in.Artifacts,
			CurrentPhase:    in.CurrentPhase,
			NextStep:        in.NextStep,
			OpenTickets:     in.OpenTickets,
		}
		for _, d := range in.DoneSoFar {
			e.DoneSoFar = append(e.DoneSoFar, ledger.Item{Text: d.Text, Evidence: d.Evidence})
		}
		if err := e.Validate(); err != nil {
			return ledger.Entry{}, resp.Usage, err
		}
		return e, resp.Usage, nil
	}
	return ledger.Entry{}, resp.Usage, fmt.Errorf("%w: the session did not call write_ledger", ledger.ErrIncomplete)
}

// ledgerAsk is the message that asks a session for its ledger entry.
func ledgerAsk(phase string) string {
	return fmt.Sprintf("The context budget of this session is reached. Before the session is replaced by a fresh one, call write_ledger with a complete entry: frozen decisions, what is done so far (each with an evidence pointer), artifacts, the current phase (%s), the next concrete step, and open tickets. The fresh session will start from this entry, the capsule and state.yaml only.", phase)
}

func hashText(parts ...string) string {
	h, _ := requestHash(&llm.Request{System: strings.Join(parts, "\x00")})
	return h
}

// fileSafe keeps a skill name usable as part of a file name: a custom
// skill's name is the user's to choose, and the spec's rules are warnings.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}
