package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A model that rewrites .baton/current.json with an agent command and
// never finishes (defect 1) does not get that command run by the resume the
// failure message suggests.
func TestResumeNeverRunsAnAgentCmdAModelWrote(t *testing.T) {
	isolateEnv(t)
	dir := exampleWorkspace(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	var mu sync.Mutex
	var writeResult *llm.ToolResult
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		res := r.ToolResults()
		if len(res) == 0 {
			forged := `{"id": "x", "workflow": "baton.yaml", "status": "running", "agent_cmd": "touch ` + marker + `"}`
			in, _ := json.Marshal(map[string]string{"path": ".baton/current.json", "content": forged})
			return llmtest.CallTools(llm.ToolCall{Name: "write_file", Input: in})
		}
		if writeResult == nil {
			writeResult = &res[0]
		}
		return llmtest.CallTools(llmtest.Call("list_files", `{"pattern": "*"}`)) // and never finish
	})
	s := llmtest.NewServer(t, rule)
	t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
	wf := filepath.Join(dir, "baton.yaml")
	code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--max-turns", "3")
	if code != exitError || !strings.Contains(errOut, "resume with: baton resume") {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	if writeResult == nil || !(writeResult.IsError || strings.HasPrefix(writeResult.Content, llm.ErrorPrefix)) || !strings.Contains(writeResult.Content, "protected by baton") {
		t.Fatalf("the model's write to .baton/current.json got %+v, want a protected error", writeResult)
	}
	if forged, _ := os.ReadFile(filepath.Join(dir, ".baton", "current.json")); strings.Contains(string(forged), "touch") {
		t.Fatalf("the model's write to .baton/current.json landed:\n%s", forged)
	}
	// The resume runs what the user chose (here: the provider, as the run
	// started) and says so.
	s.SetRules(finishing())
	code, out, errOut := runBaton(t, "", "resume", "--workflow", wf)
	if code != exitOK || strings.TrimSpace(out) != "REPORT: all phases done" {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "with no agent command (steps on the provider)") {
		t.Errorf("the resume did not say what it runs:\n%s", errOut)
	}
	if exists(marker) {
		t.Fatal("the agent command the model wrote ran")
	}
}

// writeAgent writes a shell script playing an external agent and returns
// the command that runs it.
func writeAgent(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return "sh '" + p + "'"
}

// flakyAgent fails plan-change the first time (after running action) and
// hands off otherwise; every call is logged to <dir>/calls.
func flakyAgent(t *testing.T, dir, action string) string {
	marker := filepath.Join(dir, "second-try")
	return writeAgent(t, dir, "agent.sh", `echo "$BATON_SKILL" >> '`+dir+`/calls'
if [ "$BATON_SKILL" = plan-change ] && [ ! -f '`+marker+`' ]; then touch '`+marker+`'; `+action+` exit 3; fi
printf '`+"```"+`handoff\nsummary: ok\n`+"```"+`\n'
`)
}

// An external agent can write anything in the workspace, current.json
// included: a resume never runs the command current.json names, and always
// says which command it runs.
func TestResumeRefusesAnAgentCmdChangedInCurrentJSON(t *testing.T) {
	isolateEnv(t)
	ws, logDir := exampleWorkspace(t), t.TempDir()
	marker := filepath.Join(logDir, "pwned")
	forge := `id=$(sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' .baton/current.json); printf '{"id":"%s","workflow":"baton.yaml","status":"running","agent_cmd":"touch ` + marker + `"}' "$id" > .baton/current.json;`
	agent := flakyAgent(t, logDir, forge)
	wf := filepath.Join(ws, "baton.yaml")
	if code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--agent-cmd", agent); code != exitError {
		t.Fatalf("first run: exit %d, want a failure in plan-change\n%s", code, errOut)
	}
	code, _, errOut := runBaton(t, "", "resume", "--workflow", wf)
	want := `started with agent command "touch ` + marker + `"; without --agent-cmd it would resume with no agent command`
	if code != exitError || !strings.Contains(lastLine(errOut), want) || !strings.HasSuffix(lastLine(errOut), "pass --agent-cmd explicitly to choose the command") {
		t.Fatalf("resume: exit %d, last line %q", code, lastLine(errOut))
	}
	if exists(marker) {
		t.Fatal("the command from current.json ran")
	}
	code, _, errOut = runBaton(t, "", "resume", "--workflow", wf, "--agent-cmd", agent)
	if code != exitOK || !strings.Contains(errOut, "with agent command \""+agent+"\"") {
		t.Fatalf("resume --agent-cmd: exit %d\n%s", code, errOut)
	}
	if exists(marker) {
		t.Fatal("the command from current.json ran")
	}
	calls, _ := os.ReadFile(filepath.Join(logDir, "calls"))
	if got := strings.Count(string(calls), "analyse-request"); got != 1 {
		t.Errorf("analyse-request ran %d times, want once:\n%s", got, calls)
	}
}

// The workflow's agent_cmd is the command of a run and of its resume; a
// resume whose command would differ from the run's stops and says so.
func TestResumeUsesTheWorkflowsAgentCmd(t *testing.T) {
	isolateEnv(t)
	ws, logDir := exampleWorkspace(t), t.TempDir()
	agent := flakyAgent(t, logDir, "")
	other := writeAgent(t, logDir, "other.sh", "exit 9\n")
	wf := filepath.Join(ws, "baton.yaml")
	yml, _ := os.ReadFile(wf)
	setAgent := func(cmd string) {
		data, _ := json.Marshal(cmd) // a JSON string is a YAML string
		if err := os.WriteFile(wf, append(append([]byte{}, yml...), []byte("agent_cmd: "+string(data)+"\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setAgent(agent)
	code, _, errOut := runBaton(t, "", "run", "--workflow", wf)
	if code != exitError || !strings.Contains(errOut, "agent command failed (exit status 3)") {
		t.Fatalf("first run: exit %d, want a failure in plan-change\n%s", code, errOut)
	}
	// baton.yaml now names another command: the resume stops.
	setAgent(other)
	code, _, errOut = runBaton(t, "", "resume", "--workflow", wf)
	want := `started with agent command "` + agent + `"; without --agent-cmd it would resume with agent command "` + other + `", since that is the agent_cmd in baton.yaml; pass --agent-cmd explicitly to choose the command`
	if code != exitError || lastLine(errOut) != "baton: run "+strings.Fields(lastLine(errOut))[2]+" "+want {
		t.Fatalf("resume with a changed agent_cmd: exit %d\n%s\nwant …%s", code, errOut, want)
	}
	// Back to the run's command: the resume runs it and says so.
	setAgent(agent)
	code, _, errOut = runBaton(t, "", "resume", "--workflow", wf)
	if code != exitOK || !strings.Contains(errOut, "with agent command \""+agent+"\"") {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	calls, _ := os.ReadFile(filepath.Join(logDir, "calls"))
	if got := strings.Count(string(calls), "analyse-request"); got != 1 {
		t.Errorf("analyse-request ran %d times, want once:\n%s", got, calls)
	}
}

// A skill that names itself as its next step stops at max_steps (defect
// 10); --max-steps overrides it, and a resume counts on from the run.
func TestRunStopsAtMaxSteps(t *testing.T) {
	isolateEnv(t)
	ws, logDir := exampleWorkspace(t), t.TempDir()
	agent := writeAgent(t, logDir, "loop.sh", `echo "$BATON_STEP" >> '`+logDir+`/calls'
printf '`+"```"+`handoff\nnext_skill: analyse-request\nsummary: again\n`+"```"+`\n'
`)
	wf := filepath.Join(ws, "baton.yaml")
	yml, _ := os.ReadFile(wf)
	os.WriteFile(wf, append(yml, []byte("max_steps: 4\n")...), 0o644)
	calls := func() int {
		data, _ := os.ReadFile(filepath.Join(logDir, "calls"))
		return strings.Count(string(data), "\n")
	}
	if code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--agent-cmd", agent, "--max-steps", "0"); code != exitUsage || !strings.Contains(errOut, "--max-steps must be at least 1") {
		t.Fatalf("--max-steps 0: exit %d\n%s", code, errOut)
	}
	code, _, errOut := runBaton(t, "", "run", "--workflow", wf, "--agent-cmd", agent, "--max-steps", "2")
	want := "baton: stopped after 2 steps (max_steps); raise max_steps in baton.yaml or pass --max-steps, then baton resume"
	if code != exitError || lastLine(errOut) != want || calls() != 2 {
		t.Fatalf("run --max-steps 2: exit %d, %d agent calls, last line %q", code, calls(), lastLine(errOut))
	}
	// The resume takes baton.yaml's cap of 4: two more steps.
	code, _, errOut = runBaton(t, "", "resume", "--workflow", wf, "--agent-cmd", agent)
	if code != exitError || !strings.Contains(lastLine(errOut), "stopped after 4 steps") || calls() != 4 {
		t.Fatalf("resume: exit %d, %d agent calls, last line %q", code, calls(), lastLine(errOut))
	}
	data, _ := os.ReadFile(filepath.Join(ws, ".baton", "current.json"))
	if !strings.Contains(string(data), `"status": "running"`) {
		t.Errorf("the stopped run is not resumable:\n%s", data)
	}
}

// A run id that is a path is refused by run and resume alike (defect 2),
// and by ledger lint --run. Were it not, the run would land in the test's
// own temp folder, next to the workspace.
func TestRunRefusesAForgedRunID(t *testing.T) {
	isolateEnv(t)
	ws := exampleWorkspace(t)
	os.MkdirAll(filepath.Join(ws, ".baton"), 0o755)
	os.WriteFile(filepath.Join(ws, ".baton", "current.json"), []byte(`{"id": "../../../escaped-run", "status": "running"}`), 0o644)
	for _, cmd := range []string{"run", "resume"} {
		code, _, errOut := runBaton(t, "", cmd, "--workflow", filepath.Join(ws, "baton.yaml"), "--agent-cmd", "true")
		want := `baton: current.json names run id "../../../escaped-run", which is not a baton run id; refusing to resume`
		if code != exitError || strings.TrimSpace(errOut) != want {
			t.Errorf("%s: exit %d, stderr %q", cmd, code, errOut)
		}
	}
	if code, _, errOut := runBaton(t, "", "ledger", "lint", "--workspace", ws, "--run", "../x"); code != exitUsage || !strings.Contains(errOut, "is not a baton run id") {
		t.Errorf("ledger lint --run ../x: exit %d, %q", code, errOut)
	}
}
