package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
)

// subagentSystem is the system prompt of every sub-agent. A sub-agent sees
// this, its brief and read access to the workspace: no transcript, no state.
const subagentSystem = `You are a sub-agent of a baton workflow step. You start in a fresh context with only the brief below and read access to the workspace (read_file, list_files, search). Do the task in the brief and nothing else: stay in scope, respect the prior decisions, touch nothing out of bounds.

When you are done, answer with a condensed summary for the agent that briefed you: what you found or produced, with evidence pointers (file:line or the command you ran), and anything you could not settle. The summary has a hard size limit; the agent does not want your working notes.`

const subagentMaxTurns = 12

func renderBrief(b taskBrief, contract int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Goal: %s\n", b.Goal)
	for _, f := range []struct{ label, v string }{
		{"In scope", b.InScope}, {"Out of bounds", b.OutOfBounds},
		{"How to verify", b.Verify}, {"Prior decisions", b.PriorDecisions},
	} {
		if strings.TrimSpace(f.v) != "" {
			fmt.Fprintf(&s, "%s: %s\n", f.label, f.v)
		}
	}
	fmt.Fprintf(&s, "\nYour final answer must fit in %d tokens.\n", contract)
	return s.String()
}

// runSubagents runs the briefs in parallel, bounded, each in a fresh
// context, and returns their bounded answers in brief order.
func (s *stepRun) runSubagents(ctx context.Context, briefs []taskBrief) []string {
	out := make([]string, len(briefs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.r.cfg.SubagentConcurrency)
	for i, b := range briefs {
		g.Go(func() error {
			s.subagentStart(i, len(briefs))
			defer func() { s.subagentEnd(i, len(briefs), out[i]) }()
			var err error
			actx, endTrace := s.r.trace(gctx, Part{Kind: PartSubagent, Step: s.seq, Skill: s.skillName, Phase: s.r.wf.Phases[s.phase].Name,
				Agent: i + 1, Agents: len(briefs), Goal: b.Goal})
			defer func() { endTrace(End{Err: err}) }()
			// A panic on this goroutine would end the process with a stack
			// trace, past the command's own recovery; as a failed
			// sub-agent it is one error result the step can work with.
			defer func() {
				if p := recover(); p != nil {
					out[i] = fmt.Sprintf("the sub-agent failed: internal error (a bug in baton): %v", p)
					err = fmt.Errorf("internal error: %v", p)
				}
			}()
			var ans string
			ans, err = s.subagent(actx, b)
			if err != nil {
				out[i] = fmt.Sprintf("the sub-agent failed: %v", err)
				return nil
			}
			out[i] = ans
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// subagent runs one sub-agent and enforces its return contract: a return
// over the contract gets exactly one request for a condensed summary; a
// return still over it is cut with a marker. The parent never ingests more
// than the contract.
func (s *stepRun) subagent(ctx context.Context, b taskBrief) (string, error) {
	contract := s.r.wf.SubagentReturnTokens
	env := newSubagentEnv(s.r.tools)
	env.spill = s.r.spillView()
	req := &llm.Request{
		Model:     s.model().name,
		System:    subagentSystem,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: renderBrief(b, contract)}},
		Tools:     readTools(),
		MaxTokens: s.r.cfg.MaxTokens,
	}
	text, cut, err := s.subagentTurns(ctx, env, req)
	if err != nil {
		return "", err
	}
	// Counted through the step's window: the condense request below
	// carries the same text and is not counted again.
	n := s.guard().countOf(text)
	ev := runlog.Event{Type: runlog.SubagentReturn, Tokens: n, ContractTokens: contract, Action: runlog.ActionAccepted, Note: clip(b.Goal, 120)}
	if n > contract || cut {
		// Nothing is lost: the whole answer is kept in a spill file and the
		// parent gets its path and size with whatever it receives. A cut
		// answer reads as a whole one to the parent, so it is asked for
		// again too, condensed.
		full := text
		pointer, spilled := s.spillAnswer(full, n)
		ev.SpillPath = spilled
		req.ToolChoice = llm.ToolChoiceNone
		ask := fmt.Sprintf("Your answer is %d tokens; the limit is %d. Rewrite it as a condensed summary within the limit: keep findings and evidence pointers, drop working notes.", n, contract)
		if cut {
			ask = fmt.Sprintf("Your answer was cut at its %d-token limit (max_tokens), so it is incomplete. Write it again as a condensed summary within %d tokens: keep findings and evidence pointers, drop working notes.", req.MaxTokens, contract)
		}
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: ask})
		resp, err := s.call(ctx, req)
		switch {
		case errors.Is(err, llm.ErrPromptTooLong):
			// The condense request would not fit the window: the answer
			// is cut, with the pointer.
			ev.Note = clip(b.Goal, 120) + " (no condense request: " + clip(err.Error(), 200) + ")"
		case err != nil:
			return "", err
		default:
			text, cut = resp.Text, resp.Truncated()
			n = s.r.counter.Count(text)
			ev.Action, ev.Tokens = runlog.ActionReRequested, n
		}
		if cut {
			text += "\n[cut by baton: the sub-agent's answer stopped at its token limit twice and is incomplete]"
			ev.Action = runlog.ActionTruncated
			s.warn(fmt.Sprintf("sub-agent %q: its answer was cut at its %d-token limit, and again when asked to condense it", clip(b.Goal, 60), req.MaxTokens))
		}
		if n > contract {
			text = cutToTokens(s.r.counter.Count, text, contract) + "\n[cut by baton: the sub-agent's return exceeded its contract of " + fmt.Sprint(contract) + " tokens]"
			ev.Action, ev.Tokens = runlog.ActionTruncated, s.r.counter.Count(text)
			s.warn(fmt.Sprintf("sub-agent %q returned %d tokens; cut to its %d-token contract", clip(b.Goal, 60), n, contract))
		}
		text += pointer
	}
	s.r.event(s.stepEvent(ev))
	return text, nil
}

// subagentTurns runs a sub-agent's turns until it answers without tools,
// or with tools switched off once out of turns. It returns the answer and
// whether it stopped at its max_tokens (only its start); req ends holding
// the whole session, answer included.
func (s *stepRun) subagentTurns(ctx context.Context, env *toolEnv, req *llm.Request) (string, bool, error) {
	for turn := 0; ; turn++ {
		if turn == subagentMaxTurns {
			// Out of turns: ask for the answer with tools switched off.
			req.ToolChoice = llm.ToolChoiceNone
		}
		resp, hash, err := s.callHashed(ctx, req)
		if err != nil {
			return "", false, err
		}
		if !resp.WantsTools() || turn >= subagentMaxTurns {
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text})
			return resp.Text, resp.Truncated(), nil
		}
		// The step's journal answers a resumed sub-agent's tool calls too.
		outs, err := s.runCalls(ctx, env, hash, resp.ToolCalls)
		if err != nil {
			return "", false, err
		}
		var results []llm.ToolResult
		for _, o := range outs {
			results = append(results, o.result)
		}
		results = s.fitResults(req, resp, resp.ToolCalls, results)
		req.Messages = llm.AppendToolRound(req.Messages, resp, results...)
	}
}

// spillAnswer keeps a sub-agent's whole answer of n tokens in a spill file
// and returns the pointer the parent receives with the bounded answer, and
// the file's workspace-relative path ("" when it could not be written).
func (s *stepRun) spillAnswer(full string, n int) (string, string) {
	f, err := s.r.spillDir().Write(fmt.Sprintf("%03d-subagent", s.seq), []byte(full))
	if err != nil {
		s.warn(fmt.Sprintf("a sub-agent's answer of %d bytes could not be kept in full: %v", len(full), err))
		return fmt.Sprintf("\n[baton: the sub-agent's full answer (%d tokens) could not be kept: %v]", n, err), ""
	}
	p := path.Join(s.r.spillRel(), f.Name)
	return fmt.Sprintf("\n[baton: the sub-agent's full answer (%d tokens, %d bytes, %d lines) is in %s; read it with read_file {\"path\": %q, \"offset\": 1, \"limit\": 100}]", n, f.Bytes, f.Lines, p, p), p
}

// cutToTokens returns the longest prefix of text, cut at a line or word
// boundary, whose count fits in limit.
func cutToTokens(count func(string) int, text string, limit int) string {
	cut := prefixWithin(count, text, limit)
	if i := strings.LastIndexAny(cut, "\n "); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \n")
}

// clip puts s on one line and cuts it to n characters, for a log note.
func clip(s string, n int) string {
	return textclip.Runes(strings.Join(strings.Fields(s), " "), n)
}
