package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

const cutAnswer = "The outage lasted 3 h 42 min; a retry"

// cutSynthesis answers as askScript does, but its synthesis needs more than
// need tokens of reply: below that it stops half written, with the
// provider's word for a cut (Anthropic's max_tokens, OpenAI's length).
func cutSynthesis(word string, need int) llmtest.Rule {
	base := askScript()
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		rep := base.Respond(r)
		if strings.Contains(r.System, "You are the synthesis step") && r.MaxTokens < need {
			rep = llmtest.Reply{Text: cutAnswer, StopReason: word}
		}
		return rep
	})
}

// A synthesis that stays cut at its limit is not an ok answer: baton ask
// exits 3, says the answer is partial and why, and the record says partial.
func TestAskCutSynthesisExitsPartial(t *testing.T) {
	for _, p := range []struct{ name, word string }{{"anthropic", "max_tokens"}, {"openai", "length"}} {
		t.Run(p.name, func(t *testing.T) {
			isolateEnv(t)
			s := llmtest.NewServer(t, cutSynthesis(p.word, 1<<30))
			setProvider(t, p.name, s)
			runs := t.TempDir()
			code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--runs-dir", runs, "task")
			if code != exitPartial {
				t.Fatalf("exit %d, want %d (partial)\nstdout: %s\nstderr: %s", code, exitPartial, out, errOut)
			}
			if !strings.Contains(out, cutAnswer) {
				t.Errorf("the cut answer is not printed:\n%s", out)
			}
			for _, want := range []string{"baton: partial answer: the answer is incomplete: the synthesis was cut at its token limit",
				"baton: warning: the synthesis was cut at its 4096-token limit (max_tokens), and again at 8192; the answer is incomplete"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			code, out, errOut = runBaton(t, "", "ask", "--doc", exampleDoc, "--no-save", "--json", "task")
			if rec := decodeRecord(t, out); code != exitPartial || rec.Status != orchestrate.RunPartial {
				t.Errorf("--json: exit %d, status %q; want 3 and partial\n%s", code, rec.Status, errOut)
			}
		})
	}
}

// With --stream, a synthesis cut and asked again with a larger limit is
// printed again from the start, as any retried synthesis is: stdout ends
// with the whole answer, stderr says the first was cut off, and the run is
// ok.
func TestAskStreamCutSynthesisIsPrintedAgain(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, cutSynthesis("max_tokens", orchestrate.DefaultSynthesisTokens+1))
	setProvider(t, "anthropic", s)
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--no-save", "--stream", "task")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	whole := "The outage lasted 3 h 42 min; a retry storm exhausted the pool."
	if !strings.HasSuffix(strings.TrimSpace(out), "\n"+whole) || !strings.HasPrefix(out, cutAnswer) {
		t.Errorf("stdout is not the cut answer, then the whole one on a line of its own:\n%q", out)
	}
	if want := fmt.Sprintf("the answer was cut off after %d bytes; it is printed again from the start", len(cutAnswer)); !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}

func setProvider(t *testing.T, name string, s *llmtest.Server) {
	t.Helper()
	switch name {
	case "anthropic":
		t.Setenv("ANTHROPIC_API_KEY", "test-key")
		t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	default:
		t.Setenv("OPENAI_API_KEY", "test-key")
		t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	}
}

// closedURL is the address of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// A provider error is the first thing baton ask prints, before the summary,
// with what to check: the key variable after a 401, the base URL variable
// when nothing answers there.
func TestAskProviderErrorFirstWithAHint(t *testing.T) {
	for _, c := range []struct {
		name, keyVar, urlVar string
		url                  func(s *llmtest.Server) string
		hint                 string
	}{
		{"anthropic 401", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", (*llmtest.Server).AnthropicBaseURL, "check ANTHROPIC_API_KEY"},
		{"openai 401", "OPENAI_API_KEY", "OPENAI_BASE_URL", (*llmtest.Server).OpenAIBaseURL, "check OPENAI_API_KEY"},
		{"anthropic closed port", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", nil, "check ANTHROPIC_BASE_URL"},
		{"openai closed port", "OPENAI_API_KEY", "OPENAI_BASE_URL", nil, "check OPENAI_BASE_URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			isolateEnv(t)
			s := llmtest.NewServer(t, llmtest.Func(func(llmtest.RecordedRequest) llmtest.Reply {
				return llmtest.Fail(401, "authentication_error", "invalid x-api-key")
			}))
			url := closedURL(t)
			if c.url != nil {
				url = c.url(s)
			}
			t.Setenv(c.keyVar, "wrong-key")
			t.Setenv(c.urlVar, url)
			code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--no-save", "--max-attempts", "1", "task")
			if code != exitError || out != "" {
				t.Fatalf("exit %d, stdout %q; want 1 and nothing\n%s", code, out, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if len(lines) < 3 || !strings.HasPrefix(lines[0], "baton: plan: ") || !strings.HasPrefix(lines[1], "baton: hint: ") || !strings.Contains(lines[1], c.hint) {
				t.Fatalf("stderr does not start with the error and a hint to %s:\n%s", c.hint, errOut)
			}
			if c.url != nil && !strings.Contains(lines[0], "401") {
				t.Errorf("the error line does not give the status: %s", lines[0])
			}
			if strings.Contains(errOut, "wrong-key") {
				t.Error("the key was printed")
			}
			if !strings.Contains(errOut, " subtasks (") || strings.Contains(errOut, "plain call") {
				t.Errorf("the summary after the error should say what was done and compare nothing:\n%s", errOut)
			}
		})
	}
}

// The README's first command, a dry run without a key, leads its summary
// with the comparison against one plain call, with the record's figures,
// and says plainly when baton would send more; the naive saving comes after
// and says what it is against.
func TestAskReadmeFirstCommandComparesWithTheSingleCall(t *testing.T) {
	isolateEnv(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmdline string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "go run ./cmd/baton ask ") {
			cmdline = strings.TrimPrefix(line, "go run ./cmd/baton ")
			break
		}
	}
	if cmdline == "" {
		t.Fatal("the README has no go run ./cmd/baton ask line")
	}
	args := shellWords(t, cmdline)
	t.Chdir("../..")
	args = append(args[:1], append([]string{"--no-save"}, args[1:]...)...)
	code, out, errOut := runBaton(t, "", args...)
	if code != exitOK {
		t.Fatalf("README command: exit %d\n%s", code, errOut)
	}
	code, js, errOut := runBaton(t, "", append(args[:1], append([]string{"--json"}, args[1:]...)...)...)
	if code != exitOK {
		t.Fatalf("README command --json: exit %d\n%s", code, errOut)
	}
	a := decodeRecord(t, js).Accounting
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || lines[0] != "No model was called: this is a dry run." {
		t.Fatalf("the dry run does not start by saying so:\n%s", out)
	}
	figures := fmt.Sprintf("(%s vs %s tokens", thousands(a.OrchestratedInputTokens), thousands(a.SingleCallInputTokens))
	first := lines[1]
	if !strings.HasPrefix(first, "baton would send ") || !strings.Contains(first, "one plain call "+figures) {
		t.Errorf("the first summary line does not compare with one plain call %s:\n%s", figures, out)
	}
	if a.OrchestratedInputTokens > a.SingleCallInputTokens {
		ratio := fmt.Sprintf("%.2f× the input of one plain call", float64(a.OrchestratedInputTokens)/float64(a.SingleCallInputTokens))
		if !strings.HasPrefix(first, "baton would send "+ratio) {
			t.Errorf("baton would send more than the single call, and the first line does not start by saying %q:\n%s", ratio, first)
		}
	}
	naive := strings.Index(out, "naive saving:")
	if naive < 0 || naive < strings.Index(out, first) || !strings.Contains(out[naive:], "against the naive input") {
		t.Errorf("the naive saving is missing, first, or not labelled:\n%s", out)
	}
}

// A sub-agent's return that stays cut at its limit is the start of a
// finding, not one: baton ask exits 3 and the record says partial, where
// it used to warn and exit 0.
func TestAskCutSubagentExitsPartial(t *testing.T) {
	isolateEnv(t)
	base := askScript()
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		rep := base.Respond(r)
		if !strings.Contains(r.System, "You are the planner") && !strings.Contains(r.System, "You are the synthesis step") {
			rep = llmtest.Reply{Text: "fin", StopReason: "max_tokens"}
		}
		return rep
	}))
	setProvider(t, "anthropic", s)
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--planner", "full", "--no-save", "--json", "task")
	if rec := decodeRecord(t, out); code != exitPartial || rec.Status != orchestrate.RunPartial {
		t.Fatalf("exit %d, status %q; want 3 and partial\nstderr: %s", code, rec.Status, errOut)
	}
	if !strings.Contains(errOut, "return was cut at its 1500-token limit (max_tokens), and again at 3000") {
		t.Errorf("stderr does not name the cut return and both limits:\n%s", errOut)
	}
}
