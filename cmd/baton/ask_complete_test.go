package main

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

const halfAnswer = "The answer is: the outage lasted"

// A synthesis whose stream is always cut before message_stop fails the run:
// the half-written answer is never printed as the final one.
func TestAskCutSynthesisFails(t *testing.T) {
	isolateEnv(t)
	cut := llmtest.Always(llmtest.NoEnd(llmtest.Text(halfAnswer + " 3 h 42 min."))).WhenSystem("You are the synthesis step")
	s := llmtest.NewServer(t, cut, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--stream", "--json", "--max-attempts", "2", "--runs-dir", t.TempDir(), "task")
	if code == exitOK || code == exitPartial {
		t.Fatalf("exit %d, want a failure\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if strings.Contains(out, halfAnswer) || decodeRecord(t, out).Answer != "" {
		t.Errorf("the half answer was printed:\n%s", out)
	}
	if !strings.Contains(errOut, "message_stop") {
		t.Errorf("stderr does not say why:\n%s", errOut)
	}
}

// In text output --stream shows the answer as it is written, so the cut
// text is on stdout before baton can know it is cut: stderr then says that
// the answer above is incomplete, and the run fails.
func TestAskCutSynthesisStreamedIsMarkedIncomplete(t *testing.T) {
	isolateEnv(t)
	cut := llmtest.Always(llmtest.NoEnd(llmtest.Text(halfAnswer + " 3 h 42 min."))).WhenSystem("You are the synthesis step")
	s := llmtest.NewServer(t, cut, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	code, _, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--stream", "--max-attempts", "2", "--runs-dir", t.TempDir(), "task")
	if code == exitOK || code == exitPartial {
		t.Fatalf("exit %d, want a failure\nstderr: %s", code, errOut)
	}
	if !strings.Contains(errOut, "the answer above is incomplete") || !strings.Contains(errOut, "printed again from the start") {
		t.Errorf("stderr does not mark the streamed answer:\n%s", errOut)
	}
}

// A sub-agent whose stream is always cut in the middle of an event line is
// reported failed, not ok with empty or partial output; one that stalls once
// is abandoned after --idle-timeout and succeeds on its retry.
func TestAskCutAndStalledSubtasks(t *testing.T) {
	isolateEnv(t)
	cut := llmtest.Always(llmtest.CutMidLine(2, llmtest.Text("the retry storm began when every client"))).
		WhenContains("Your subtask: Explain the retry storm")
	stall := llmtest.Always(llmtest.StallAfter(3, llmtest.Text("never"))).
		WhenContains("Your subtask: List the action items").Limit(1)
	s := llmtest.NewServer(t, cut, stall, askScript())
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--stream", "--max-attempts", "2",
		"--idle-timeout", "200ms", "--call-timeout", "10s", "--runs-dir", t.TempDir(), "task")
	if code != exitPartial {
		t.Fatalf("exit %d, want %d\n%s", code, exitPartial, errOut)
	}
	rec := decodeRecord(t, out)
	if st := rec.Subtasks[1]; st.Status != orchestrate.StatusFailed || !strings.Contains(st.Error, "finish_reason") {
		t.Errorf("cut subtask = %+v, want failed for a stream without finish_reason", st)
	}
	if st := rec.Subtasks[2]; st.Status != orchestrate.StatusOK || st.Output != "finding" {
		t.Errorf("stalled-once subtask = %+v, want ok after a retry", st)
	}
	stalled := 0
	for _, r := range s.Requests() {
		if strings.Contains(r.Messages[0].Content, "Your subtask: List the action items") {
			stalled++
		}
	}
	if stalled != 2 {
		t.Errorf("stalled subtask was sent %d times, want 2", stalled)
	}
}

func TestTimeoutFlagsRejectNegative(t *testing.T) {
	isolateEnv(t)
	code, _, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--provider", "openai", "--base-url", "http://127.0.0.1:1/v1",
		"--idle-timeout", "-1s", "--runs-dir", t.TempDir(), "task")
	if code != exitUsage || !strings.Contains(errOut, "--idle-timeout") {
		t.Errorf("exit %d, stderr %q; want a usage error naming the flag", code, errOut)
	}
}
