package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
)

// Replaying tool calls.
//
// A resumed step must send exactly the requests it sent before, or every
// later request misses the journal. A tool call's result is not a pure
// function of its input: a listing changes when the step writes a file, a
// read changes when the user edits one, and baton itself writes a ledger
// entry at resume. So each call's result is journalled once it has run, with
// its effects on the step (files written, next_skill set, the step
// finished), and a resumed step takes both from the journal instead of
// running the call again. Nothing a recorded call did is done twice.
//
// The window this leaves is narrow and at-least-once: a process that dies
// after a call ran but before its record reached the disk runs that call
// again on resume. Every step tool tolerates that: reads read again,
// write_file leaves a file that already holds the content untouched,
// update_state sets the same fields and records a decision once, and a
// sub-agent's model calls are answered from the journal.

// journalTool is one tool call as it ran: what the model was given back and
// what the call did to the step.
type journalTool struct {
	Result llm.ToolResult `json:"result"`
	// Written are the files the call wrote (workspace-relative).
	Written []string `json:"written,omitempty"`
	// NextSkill is the next_skill the call set, if it set one.
	NextSkill *string `json:"next_skill,omitempty"`
	Finished  bool    `json:"finished,omitempty"`
	Summary   string  `json:"summary,omitempty"`
	// Calls and Usage are the model calls the tool made (a sub-agent's)
	// and what they cost, so a replay accounts for them without making
	// them.
	Calls int       `json:"calls,omitempty"`
	Usage llm.Usage `json:"usage,omitzero"`
}

// toolKey names the call at index i, with id, of the response to the
// request whose hash is reqHash: unique within a step, and the same when a
// resumed step gets the same response from the journal.
func toolKey(reqHash string, i int, id string) string {
	return sha256Hex(fmt.Appendf(nil, "tool\x00%s\x00%d\x00%s", reqHash, i, id))
}

// recordedTool returns what an earlier attempt recorded for key, if anything.
func (j *journal) recordedTool(key string) (journalTool, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rs := j.tools[key]
	if len(rs) == 0 {
		return journalTool{}, false
	}
	j.tools[key] = rs[1:]
	return rs[0], true
}

func (j *journal) recordTool(key string, t journalTool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.append(journalRecord{Kind: "tool", Hash: key, Tool: &t})
}

// runCalls runs the tool calls of one response through the step's journal:
// a call an earlier attempt recorded is answered from the record and its
// effects restored, without running; any other runs and is recorded before
// its result is used. A call that returns after the run was cancelled is not
// recorded (a cancelled sub-agent's failure is not the call's result) and
// the step stops, to run that call again on resume.
func (s *stepRun) runCalls(ctx context.Context, env *toolEnv, reqHash string, calls []llm.ToolCall) ([]toolOutcome, error) {
	outs := make([]toolOutcome, 0, len(calls))
	for i, c := range calls {
		key := toolKey(reqHash, i, c.ID)
		own := env == s.env // the step's own calls are shown as progress
		if own {
			s.toolStart(c)
		}
		part := Part{Kind: PartTool, Step: s.seq, Skill: s.skillName, Phase: s.r.wf.Phases[s.phase].Name, Call: c}
		if s.durable(ctx) {
			out, err := s.durableTool(ctx, env, key, c, part, own)
			if err != nil {
				return nil, err
			}
			outs = append(outs, out)
			continue
		}
		if rec, ok := s.j.recordedTool(key); ok {
			outs = append(outs, s.replayTool(ctx, env, c, part, own, rec))
			continue
		}
		out, rec, err := s.runTool(ctx, env, c, part, own)
		if err != nil {
			return nil, err
		}
		if err := s.j.recordTool(key, rec); err != nil {
			return nil, err
		}
		s.logTool(c, out, !own, false)
		outs = append(outs, out)
	}
	return outs, nil
}

// replayTool restores a recorded tool call: its result, its effects on the
// step and the model calls it made, without running it.
func (s *stepRun) replayTool(ctx context.Context, env *toolEnv, c llm.ToolCall, part Part, own bool, rec journalTool) toolOutcome {
	part.Replayed = true
	_, endTrace := s.r.trace(ctx, part)
	endTrace(End{Tool: &rec.Result, Calls: rec.Calls, Usage: rec.Usage})
	env.written = append(env.written, rec.Written...)
	if rec.NextSkill != nil {
		v := *rec.NextSkill
		env.nextSkillSet = &v
	}
	s.addUsage(rec.Usage)
	s.r.mu.Lock()
	s.r.result.ReplayedTools++
	s.r.result.Replayed += rec.Calls
	s.calls += rec.Calls
	s.r.mu.Unlock()
	out := toolOutcome{result: rec.Result, finished: rec.Finished, summary: rec.Summary}
	if own {
		s.toolEnd(c, out)
	}
	s.logTool(c, out, !own, true)
	return out
}

// runTool runs tool call c and returns what to record of it. A call that
// returns after the run was cancelled is an error, not a result.
func (s *stepRun) runTool(ctx context.Context, env *toolEnv, c llm.ToolCall, part Part, own bool) (toolOutcome, journalTool, error) {
	wrote, next := len(env.written), env.nextSkillSet
	s.r.mu.Lock()
	calls, usage := s.calls, s.usage
	s.r.mu.Unlock()
	tctx, endTrace := s.r.trace(ctx, part)
	out, err := runCancellable(tctx, env, c)
	if err != nil {
		// Left to finish on its own, as if the process had been killed
		// in it: the call is not recorded, and the resume runs it again,
		// which every tool bears (write_file leaves a file that already
		// holds the content, update_state sets the same fields).
		endTrace(End{Err: err})
		return out, journalTool{}, fmt.Errorf("tool %s: %w", c.Name, err)
	}
	endTrace(End{Tool: &out.result, Err: ctx.Err()})
	if own {
		s.toolEnd(c, out)
	}
	if err := ctx.Err(); err != nil {
		return out, journalTool{}, fmt.Errorf("tool %s: %w", c.Name, err)
	}
	rec := journalTool{Result: out.result, Finished: out.finished, Summary: out.summary}
	if env == s.env {
		// The step's own calls run one at a time, so what was spent
		// meanwhile is this call's sub-agents. (A sub-agent's calls
		// run beside its siblings' and start no model calls.)
		s.r.mu.Lock()
		rec.Calls, rec.Usage = s.calls-calls, usageSince(s.usage, usage)
		s.r.mu.Unlock()
	}
	rec.Written = append(rec.Written, env.written[wrote:]...)
	if env.nextSkillSet != next {
		rec.NextSkill = env.nextSkillSet
	}
	return out, rec, nil
}

// runToolCall is how a tool call runs; a test swaps it to play a slow
// tool.
var runToolCall = (*toolEnv).run

// runCancellable runs call c and returns its outcome, or ctx's error as
// soon as ctx is done: a tool that does not watch ctx (a file operation
// on a slow disk, a long search) must not keep an interrupted run from
// ending. The call goes on in the background until the process exits.
func runCancellable(ctx context.Context, env *toolEnv, c llm.ToolCall) (toolOutcome, error) {
	if err := ctx.Err(); err != nil {
		return toolOutcome{}, err
	}
	run, done := runToolCall, make(chan toolOutcome, 1)
	go func() { done <- run(env, ctx, c) }()
	select {
	case out := <-done:
		return out, nil
	case <-ctx.Done():
		return toolOutcome{}, ctx.Err()
	}
}

// logTool writes the tool_call event of call c: its name, whether it
// failed, and whether a resumed step took it from the journal.
func (s *stepRun) logTool(c llm.ToolCall, out toolOutcome, subagent, replayed bool) {
	ev := s.stepEvent(runlog.Event{Type: runlog.ToolCall, Tool: c.Name, Status: runlog.ToolOK, Turn: s.turns, Subagent: subagent, Replayed: replayed})
	if out.result.IsError {
		ev.Status = runlog.ToolError
		ev.Note = clip(strings.TrimPrefix(out.result.Content, llm.ErrorPrefix), 200)
	}
	s.r.event(ev)
}

// holds reports whether the file rel already holds content, through the
// same rules as the write (a file the agent may not read is written).
func holds(ws *workspace.Workspace, rel, content string) bool {
	cur, err := ws.ReadFile(rel, len(content))
	return err == nil && cur == content
}

// usageSince is what was spent from before to now.
func usageSince(now, before llm.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:              now.InputTokens - before.InputTokens,
		OutputTokens:             now.OutputTokens - before.OutputTokens,
		CacheReadInputTokens:     now.CacheReadInputTokens - before.CacheReadInputTokens,
		CacheCreationInputTokens: now.CacheCreationInputTokens - before.CacheCreationInputTokens,
	}
}

// ensureLedger appends the entry a journalled reset wrote (rendered) if the
// ledger does not hold it: the process died between journalling the reset
// and appending the entry.
func (r *runner) ensureLedger(rendered string) error {
	entries, _, err := ledger.Read(r.ledgerPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if string(ledger.Render(e)) == rendered {
			return nil
		}
	}
	es, _, err := ledger.Parse([]byte(rendered), r.wf.Ledger)
	if err != nil || len(es) != 1 {
		return fmt.Errorf("step journal: the ledger entry of a recorded reset does not parse (%v)", err)
	}
	return r.appendLedger(es[0])
}

// crashHook, set by tests only, runs at points where a process dying would
// leave a half-done record: the test panics there to play the crash.
var crashHook func(point string)

func crashPoint(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

// recordEnding notes, before the step's end is written to state.yaml, what
// the file holds then (its hash).
func (j *journal) recordEnding(statePath string) error {
	h, err := fileHash(statePath)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.ending = h
	return j.append(journalRecord{Kind: "ending", Hash: h})
}

// stepRecorded reports whether an earlier attempt of the step already wrote
// its end to state.yaml: it noted the file's hash before writing, and the
// file no longer has it. It is asked when the step opens, before anything
// of this attempt writes the file. (A file the user edited meanwhile counts
// as written: the step is not recorded twice.)
func (j *journal) stepRecorded(statePath string) bool {
	if j.ending == "" {
		return false
	}
	h, err := fileHash(statePath)
	return err == nil && h != j.ending
}

func fileHash(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("state: %w", err)
	}
	return sha256Hex(data), nil
}
