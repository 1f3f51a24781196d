package runner

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

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
			// A panic on this goroutine would end the process with a stack
			// trace, past the command's own recovery; as a failed
			// sub-agent it is one error result the step can work with.
			defer func() {
				if p := recover(); p != nil {
					out[i] = fmt.Sprintf("the sub-agent failed: internal error (a bug in baton): %v", p)
				}
			}()
			ans, err := s.subagent(gctx, b)
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
	req := &llm.Request{
		Model:     s.r.cfg.ModelName,
		System:    subagentSystem,
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: renderBrief(b, contract)}},
		Tools:     readTools(),
		MaxTokens: s.r.cfg.MaxTokens,
	}
	var text string
	for turn := 0; ; turn++ {
		if turn == subagentMaxTurns {
			// Out of turns: ask for the answer with tools switched off.
			req.ToolChoice = llm.ToolChoiceNone
		}
		resp, err := s.call(ctx, req)
		if err != nil {
			return "", err
		}
		if !resp.WantsTools() || turn >= subagentMaxTurns {
			text = resp.Text
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text})
			break
		}
		var results []llm.ToolResult
		for _, c := range resp.ToolCalls {
			results = append(results, env.run(ctx, c).result)
		}
		req.Messages = llm.AppendToolRound(req.Messages, resp, results...)
	}
	n := s.r.counter.Count(text)
	ev := runlog.Event{Type: runlog.SubagentReturn, Tokens: n, ContractTokens: contract, Action: runlog.ActionAccepted, Note: clip(b.Goal, 120)}
	if n > contract {
		req.ToolChoice = llm.ToolChoiceNone
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(
			"Your answer is %d tokens; the limit is %d. Rewrite it as a condensed summary within the limit: keep findings and evidence pointers, drop working notes.", n, contract)})
		resp, err := s.call(ctx, req)
		if err != nil {
			return "", err
		}
		text = resp.Text
		n = s.r.counter.Count(text)
		ev.Action, ev.Tokens = runlog.ActionReRequested, n
		if n > contract {
			text = cutToTokens(s.r.counter.Count, text, contract) + "\n[cut by baton: the sub-agent's return exceeded its contract of " + fmt.Sprint(contract) + " tokens]"
			ev.Action = runlog.ActionTruncated
			s.warn(fmt.Sprintf("sub-agent %q returned %d tokens after a condense request; cut to its %d-token contract", clip(b.Goal, 60), n, contract))
		}
	}
	s.r.event(s.stepEvent(ev))
	return text, nil
}

// cutToTokens returns the longest prefix of text, cut at a line or word
// boundary, whose count fits in limit.
func cutToTokens(count func(string) int, text string, limit int) string {
	lo, hi := 0, len(text)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if count(text[:mid]) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cut := text[:lo]
	if i := strings.LastIndexAny(cut, "\n "); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \n")
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
