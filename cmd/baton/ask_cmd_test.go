package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

const exampleDoc = "../../examples/incident-report.md"

// askPlan is what a planner might answer for the example incident report:
// one lookup answered inline, two analyses pointing at sections the way
// models write them (without numbering, with a parent path).
const askPlan = `{"subtasks": [
 {"task": "How long did the outage last?", "skill": "self", "context_pointers": {"sections": [], "line_ranges": []}, "answer": "3 h 42 min"},
 {"task": "Explain the retry storm", "skill": "causal_reasoning", "context_pointers": {"sections": ["Retry storm"], "line_ranges": []}},
 {"task": "List the action items for the root cause", "skill": "fact-extraction", "context_pointers": {"sections": ["Root cause analysis > Connection pool exhaustion", "9. Action Items"], "line_ranges": []}}
], "reasoning": "one lookup, two analyses"}`

// askScript plays planner, sub-agents and synthesis.
func askScript() llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			return llmtest.Text(askPlan)
		case strings.Contains(r.System, "You are the synthesis step"):
			return llmtest.Text("The outage lasted 3 h 42 min; a retry storm exhausted the pool.")
		default:
			return llmtest.Text("finding")
		}
	})
}

// isolateEnv clears every provider variable so that only what a test sets
// counts, and points Ollama detection at a port nothing listens on.
func isolateEnv(t *testing.T) {
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		t.Setenv(k, "")
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:1")
	// The run history of the test's runs is the test's own.
	t.Setenv("BATON_HOME", t.TempDir())
}

func decodeRecord(t *testing.T, data string) orchestrate.Record {
	t.Helper()
	var rec orchestrate.Record
	if err := json.Unmarshal([]byte(data), &rec); err != nil {
		t.Fatalf("record is not JSON: %v\n%s", err, data)
	}
	return rec
}

func TestAskAgainstBothProviders(t *testing.T) {
	const secret = "sk-test-secret-4242"
	cases := []struct {
		name string
		env  func(s *llmtest.Server) map[string]string
	}{
		{"anthropic", func(s *llmtest.Server) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": secret, "ANTHROPIC_BASE_URL": s.AnthropicBaseURL()}
		}},
		{"openai", func(s *llmtest.Server) map[string]string {
			return map[string]string{"OPENAI_API_KEY": secret, "OPENAI_BASE_URL": s.OpenAIBaseURL()}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolateEnv(t)
			s := llmtest.NewServer(t, askScript())
			for k, v := range tc.env(s) {
				t.Setenv(k, v)
			}
			runs := t.TempDir()
			code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--runs-dir", runs, "How long was the outage, why did it happen and what will change?")
			if code != exitOK {
				t.Fatalf("exit %d\nstderr: %s", code, errOut)
			}
			rec := decodeRecord(t, out)
			if rec.Provider != tc.name || !strings.HasPrefix(rec.Answer, "The outage lasted") {
				t.Errorf("provider %q answer %q", rec.Provider, rec.Answer)
			}
			if s.Count() != 4 {
				t.Errorf("server saw %d requests, want 4", s.Count())
			}
			if rec.Usage.Total != s.TotalUsage() {
				t.Errorf("record usage %+v != server-reported %+v", rec.Usage.Total, s.TotalUsage())
			}
			for _, r := range s.Requests() {
				if r.APIKey() != secret {
					t.Errorf("request carried key %q", r.APIKey())
				}
			}
			// The two-pointer subtask got both sections and nothing between.
			sl := rec.Subtasks[2].Slice
			if sl == nil || len(sl.Matched) != 2 || sl.Fallback {
				t.Fatalf("slice of subtask 3 = %+v", sl)
			}
			if sl.Matched[0].Heading != "4.2 Connection pool exhaustion" || sl.Matched[1].Heading != "9. Action items" {
				t.Errorf("matched %+v", sl.Matched)
			}
			// The saved record equals the printed one and holds no secret.
			files, _ := filepath.Glob(filepath.Join(runs, "*.json"))
			if len(files) != 1 {
				t.Fatalf("saved records: %v", files)
			}
			saved, _ := os.ReadFile(files[0])
			if strings.Contains(string(saved), secret) || strings.Contains(out, secret) || strings.Contains(errOut, secret) {
				t.Error("the API key leaked into the record or the output")
			}
			if decodeRecord(t, string(saved)).ID != rec.ID {
				t.Error("saved record differs from the printed one")
			}
		})
	}
}

func TestAskWaitsOutRateLimit(t *testing.T) {
	isolateEnv(t)
	limited := llmtest.Sequence(llmtest.RateLimit(time.Second)).WhenContains("Your subtask: Explain the retry storm").Limit(1)
	s := llmtest.NewServer(t, limited, askScript())
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	start := time.Now()
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--no-save", "task")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("run took %v; the 1 s retry-after was not honoured", waited)
	}
	rec := decodeRecord(t, out)
	if s.Count() != 5 || rec.Subtasks[1].Status != orchestrate.StatusOK || rec.Subtasks[1].Attempts != 2 {
		t.Errorf("requests %d, subtask %+v", s.Count(), rec.Subtasks[1])
	}
	if rec.Usage.Total != s.TotalUsage() {
		t.Errorf("usage %+v != server %+v", rec.Usage.Total, s.TotalUsage())
	}
}

func TestAskPartialExitCode(t *testing.T) {
	isolateEnv(t)
	broken := llmtest.Always(llmtest.Fail(503, "api_error", "backend down")).WhenContains("Your subtask: Explain the retry storm")
	s := llmtest.NewServer(t, broken, askScript())
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	runs := t.TempDir()
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--json", "--max-attempts", "2", "--runs-dir", runs, "task")
	if code != exitPartial {
		t.Fatalf("exit %d, want %d\n%s", code, exitPartial, errOut)
	}
	rec := decodeRecord(t, out)
	st := rec.Subtasks[1]
	if st.Status != orchestrate.StatusFailed || !strings.Contains(st.Error, "503") {
		t.Errorf("failed subtask = %+v", st)
	}
	if rec.Answer == "" {
		t.Error("no partial answer")
	}
	if !strings.Contains(errOut, "partial") {
		t.Errorf("stderr does not say the answer is partial: %s", errOut)
	}
}

func TestAskWithoutProviderIsADryRun(t *testing.T) {
	isolateEnv(t)
	runs := t.TempDir()
	code, out, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--runs-dir", runs, "How long did the outage last? What caused the retry storm?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not name %s:\n%s", want, errOut)
		}
	}
	for _, want := range []string{"No model was called", "Plan (retrieval planner", "slice:", "naive input:"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestReadmeMainCommand runs the README's first command as written, from
// the repository root, with no provider configured.
func TestReadmeMainCommand(t *testing.T) {
	isolateEnv(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmdline string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "go run ./cmd/baton ") {
			cmdline = strings.TrimPrefix(line, "go run ./cmd/baton ")
			break
		}
	}
	if cmdline == "" {
		t.Fatal("README has no `go run ./cmd/baton` command")
	}
	args := shellWords(t, cmdline)
	t.Chdir("../..")
	args = append(args[:1], append([]string{"--runs-dir", t.TempDir()}, args[1:]...)...)
	code, out, errOut := runBaton(t, "", args...)
	if code != exitOK || !strings.Contains(out, "No model was called") || !strings.Contains(out, "saving:") {
		t.Fatalf("README command: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// shellWords splits a command line with double-quoted arguments.
func shellWords(t *testing.T, s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				t.Fatalf("unbalanced quote in %q", s)
			}
			out = append(out, s[1:end+1])
			s = s[end+2:]
			continue
		}
		word, rest, _ := strings.Cut(s, " ")
		out = append(out, word)
		s = rest
	}
	return out
}

func TestAskUsageAndInputErrors(t *testing.T) {
	isolateEnv(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ask", "task"}, exitUsage, "--doc"},
		{[]string{"ask", "--doc", exampleDoc}, exitUsage, "TASK"},
		{[]string{"ask", "--doc", exampleDoc, "--planner", "oracle", "t"}, exitUsage, "--planner"},
		{[]string{"ask", "--doc", exampleDoc, "--concurrency", "0", "t"}, exitUsage, "--concurrency"},
		{[]string{"ask", "--doc", exampleDoc, "--planner", "outlines", "t"}, exitUsage, "--planner"},
		{[]string{"ask", "--doc", exampleDoc, "--window", "-1", "t"}, exitUsage, "--window"},
		{[]string{"ask", "--doc", "no/such/file.md", "t"}, exitError, "no/such/file.md"},
		{[]string{"ask", "--doc", exampleDoc, "--provider", "anthropic", "t"}, exitError, "ANTHROPIC_API_KEY"},
		{[]string{"ask", "--doc", exampleDoc, "--provider", "nonsense", "t"}, exitError, "nonsense"},
	}
	for _, tc := range cases {
		code, _, errOut := runBaton(t, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errOut, tc.code, tc.want)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: error is more than one line: %q", tc.args, errOut)
		}
	}
}

func TestAskInvalidPlanKeepsRecord(t *testing.T) {
	isolateEnv(t)
	s := llmtest.NewServer(t, llmtest.Always(llmtest.Text("no plan here")))
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicBaseURL())
	runs := t.TempDir()
	// Asked for by name, the LLM planner does not fall back.
	code, _, errOut := runBaton(t, "", "ask", "--doc", exampleDoc, "--planner", "full", "--runs-dir", runs, "task")
	if code != exitError || !strings.Contains(errOut, "valid plan") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(runs, "*.json"))
	if len(files) != 1 {
		t.Fatalf("no record saved: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	rec := decodeRecord(t, string(data))
	if len(rec.PlannerOutputs) != 2 || rec.PlannerOutputs[1] != "no plan here" || s.Count() != 2 {
		t.Errorf("planner outputs %q, requests %d", rec.PlannerOutputs, s.Count())
	}
	if !rec.ModelCalled || rec.Status != orchestrate.RunFailed || rec.Usage.Planner.InputTokens == 0 {
		t.Errorf("model_called %v, status %q, planner usage %+v; want the paid calls recorded", rec.ModelCalled, rec.Status, rec.Usage.Planner)
	}
}

func TestAskReadsStdinAndFolders(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Alpha\n\nalpha facts\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("beta notes\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "image.png"), []byte{0x89, 'P', 'N', 'G', 0}, 0o644)
	code, out, errOut := runBaton(t, "# Gamma\n\ngamma from stdin\n", "ask", "--doc", dir, "--doc", "-", "--dry-run", "--json", "--no-save", "What are the alpha facts?")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec := decodeRecord(t, out)
	if len(rec.Documents) != 3 || rec.Documents[2] != "-" {
		t.Fatalf("documents = %v", rec.Documents)
	}
	if rec.ModelCalled {
		t.Error("--dry-run called a model")
	}
}
