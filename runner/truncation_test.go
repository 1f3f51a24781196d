package runner_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
)

// A step's closing reply cut at its max_tokens (Anthropic's max_tokens,
// OpenAI's length) is not taken as the step's summary: the agent is told it
// was cut, in the same session, and finishes with the finish tool.
func TestStepReplyCutAtItsLimitIsNotTheSummary(t *testing.T) {
	const whole = "REPORT: the --shout flag is in."
	for name, mk := range providers {
		t.Run(name, func(t *testing.T) {
			word := map[string]string{"anthropic": "max_tokens", "openai": "length"}[name]
			dir := copyExample(t)
			base := script(false)
			var noted atomic.Int32
			s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				rep := base.Respond(r)
				if rep.Text != whole {
					return rep
				}
				last := r.Messages[len(r.Messages)-1].Content
				if strings.Contains(last, "was cut at its 4096-token limit") {
					noted.Add(1)
					return llmtest.CallTools(call("fin", "finish", map[string]string{"summary": whole}))
				}
				return llmtest.Reply{Text: whole[:12], StopReason: word}
			}))
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: mk(t, s), ModelName: "test-model"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Summary != whole || noted.Load() != 1 {
				t.Errorf("summary %q after %d notes of the cut; want %q after one", res.Summary, noted.Load(), whole)
			}
			for _, r := range s.Requests() {
				for i, m := range r.Messages {
					if strings.Contains(m.Content, "was cut at its") && (i == 0 || r.Messages[i-1].Role != llm.RoleAssistant || r.Messages[i-1].Content != whole[:12]) {
						t.Errorf("the note of the cut does not follow the cut reply in its session: %+v", r.Messages)
					}
				}
			}
		})
	}
}

// A sub-agent's answer cut at its max_tokens reads as a whole finding to
// the parent: it is asked for again, condensed; the parent gets the second
// answer, or, when that is cut too, the answer marked incomplete and a
// warning.
func TestSubagentAnswerCutIsAskedAgain(t *testing.T) {
	const whole = subFinding + ": condensed, whole"
	for _, again := range []bool{true, false} {
		t.Run(map[bool]string{true: "whole the second time", false: "cut twice"}[again], func(t *testing.T) {
			dir := copyExample(t)
			base := script(false)
			var asked atomic.Int32
			s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
				if !strings.Contains(r.System, "You are a sub-agent") {
					return base.Respond(r)
				}
				last := r.Messages[len(r.Messages)-1].Content
				if strings.Contains(last, "was cut at its 4096-token limit (max_tokens)") {
					asked.Add(1)
					if again {
						return llmtest.Text(whole)
					}
				}
				return llmtest.Reply{Text: subFinding[:10], StopReason: "max_tokens"}
			}))
			res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "test-model"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if asked.Load() != 2 {
				t.Errorf("%d cut answers asked for again; want both sub-agents' 2", asked.Load())
			}
			var got []string
			for _, r := range s.Requests() {
				for _, tr := range r.ToolResults() {
					if strings.Contains(tr.Content, subFinding[:10]) {
						got = append(got, tr.Content)
					}
				}
			}
			marked := 0
			for _, c := range got {
				switch {
				case again && !strings.Contains(c, whole):
					t.Errorf("the parent got %q; want the whole answer asked for again", c)
				case strings.Contains(c, "[cut by baton: the sub-agent's answer stopped at its token limit twice"):
					marked++
				}
			}
			warned := false
			for _, w := range res.Warnings {
				warned = warned || strings.Contains(w, "its answer was cut at its 4096-token limit, and again")
			}
			if again && (marked > 0 || warned) {
				t.Errorf("a whole second answer is marked cut (%d marks, warnings %v)", marked, res.Warnings)
			}
			if !again && (marked == 0 || !warned) {
				t.Errorf("an answer cut twice reached the parent unmarked (%d marks) or unwarned (%v)", marked, res.Warnings)
			}
		})
	}
}
