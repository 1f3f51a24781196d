package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/runner"
	"github.com/baton-dev/baton/state"
)

// Skill suites written for command-line agents tell the agent to keep the
// handoff in specs/state.yaml itself. shellAgent writes an agent of that
// kind: a POSIX sh script whose case for each skill is given, run with the
// log folder in $LOG. Every invocation appends the skill to $LOG/calls and
// keeps its stdin in $LOG/input-<step>.txt.
func shellAgent(t *testing.T, cases map[string]string) (cmd, logDir string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent is a POSIX sh script")
	}
	logDir = t.TempDir()
	var b strings.Builder
	b.WriteString("set -e\necho \"$BATON_SKILL\" >> \"$LOG/calls\"\ncat > \"$LOG/input-$BATON_STEP.txt\"\n")
	// setkey FILE INDENTED-KEY VALUE replaces the first line holding that
	// key, as an agent editing the file by hand would.
	b.WriteString(`setkey() { awk -v k="$2" -v v="$3" 'BEGIN{d=0} !d && index($0, k ":") == 1 {print k ": " v; d=1; next} {print}' "$1" > "$1.tmp" && mv "$1.tmp" "$1"; }` + "\n")
	b.WriteString("case \"$BATON_SKILL\" in\n")
	for skill, body := range cases {
		b.WriteString(skill + ")\n" + body + "\n;;\n")
	}
	b.WriteString("*) echo \"did $BATON_SKILL\";;\nesac\n")
	script := filepath.Join(logDir, "agent.sh")
	if err := os.WriteFile(script, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return "LOG='" + logDir + "' sh '" + script + "'", logDir
}

func calls(t *testing.T, logDir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(logDir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// Defect: an agent that set handoff.next_skill in state.yaml itself had it
// overwritten by the skill's default (and later steps skipped or repeated).
// Its own value is the run's next step, and the line it wrote is kept.
func TestAgentCmdNextSkillWrittenToStateIsHonoured(t *testing.T) {
	dir := copyExample(t)
	agent, logDir := shellAgent(t, map[string]string{
		"analyse-request": `setkey specs/state.yaml "  next_skill" "implement-change   # the agent skips the plan"
echo "analysis done; the change is too small to plan"`,
		"write-report": "printf '```handoff\\nnext_skill: done\\nsummary: REPORT\\n```\\n'",
	})
	var log strings.Builder
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent, Log: &log})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	want := []string{"analyse-request", "implement-change", "write-report"}
	if got := calls(t, logDir); !sameList(got, want) {
		t.Fatalf("the agent ran for %v, want %v\n%s", got, want, log.String())
	}
	in, _ := os.ReadFile(filepath.Join(logDir, "input-2.txt"))
	if !strings.Contains(string(in), "  next_skill: implement-change   # the agent skips the plan\n") {
		t.Errorf("step 2 did not see the agent's own line in state.yaml:\n%s", in)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "analyse-request") && strings.Contains(w, "no handoff block") {
			t.Errorf("warned about a missing handoff block though the agent wrote its handoff to state.yaml: %q", w)
		}
	}
}

// A handoff block and direct edits of state.yaml are merged; where both
// set a field differently the block wins and the run says so.
func TestAgentCmdHandoffBlockAndStateEditsMerge(t *testing.T) {
	dir := copyExample(t)
	agent, logDir := shellAgent(t, map[string]string{
		"analyse-request": `setkey specs/state.yaml "  next_skill" "plan-change"
setkey specs/state.yaml "  context" "'written straight into the file'"
printf '` + "```" + `handoff\nnext_skill: implement-change\nopen_decisions: [which exit code?]\nsummary: analysed\n` + "```" + `\n'`,
		"implement-change": `cat specs/state.yaml > "$LOG/state-at-implement.yaml"; echo implemented`,
		"write-report":     "printf '```handoff\\nnext_skill: done\\n```\\n'",
	})
	var log strings.Builder
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent, Log: &log})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if got, want := calls(t, logDir), []string{"analyse-request", "implement-change", "write-report"}; !sameList(got, want) {
		t.Fatalf("the agent ran for %v, want %v (the block's next_skill wins)", got, want)
	}
	conflict := false
	for _, w := range res.Warnings {
		if strings.Contains(w, "next_skill") && strings.Contains(w, `"implement-change"`) && strings.Contains(w, `"plan-change"`) && strings.Contains(w, "block") {
			conflict = true
		}
	}
	if !conflict {
		t.Errorf("no warning naming both next_skill values: %q", res.Warnings)
	}
	f, err := state.Load(filepath.Join(logDir, "state-at-implement.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := f.Handoff()
	if h.Context != "written straight into the file" || !sameList(h.OpenDecisions, []string{"which exit code?"}) || h.NextSkill != "implement-change" {
		t.Errorf("handoff after the merge: %+v", h)
	}
}

// Defect: a cockpit whose completed_steps is one comma-separated string
// failed the bookkeeping after step 1, and a multi-line
// last_step_completed became a bare skill name.
func TestBookkeepingKeepsTheFilesShapes(t *testing.T) {
	dir := copyExample(t)
	path := filepath.Join(dir, "specs/state.yaml")
	data, _ := os.ReadFile(path)
	text := strings.Replace(string(data), "  completed_steps: []\n", "  completed_steps: \"\"   # the suite's own shape\n", 1)
	text = strings.Replace(text, "  last_step_completed: \"\"\n", "  last_step_completed: |\n    Nothing has run yet.\n    (the suite's own words)\n", 1)
	if text == string(data) {
		t.Fatal("the example's state.yaml changed shape; update this test")
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	agent, _ := shellAgent(t, map[string]string{
		"write-report": "printf '```handoff\\nnext_skill: done\\nsummary: |\\n  The report is written.\\n  CHANGELOG.md has the entry.\\n```\\n'",
	})
	var log strings.Builder
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent, Log: &log}); err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	after, _ := os.ReadFile(path)
	if !strings.Contains(string(after), "  completed_steps: \"analyse-request, plan-change, implement-change, write-report\"   # the suite's own shape\n") {
		t.Errorf("completed_steps did not grow as a string:\n%s", after)
	}
	if !strings.Contains(string(after), "  last_step_completed: |\n    write-report: The report is written.\n    CHANGELOG.md has the entry.\n") {
		t.Errorf("last_step_completed is not the last step's summary in block style:\n%s", after)
	}
}

// Defect: update_state accepted a next_skill naming no skill ("state
// updated"). It is an error result naming the known skills, and state.yaml
// is left as it was.
func TestUpdateStateRefusesAnUnknownNextSkill(t *testing.T) {
	dir := copyExample(t)
	path := filepath.Join(dir, "specs/state.yaml")
	before, _ := os.ReadFile(path)
	var result *llm.ToolResult
	var during []byte
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "# Analyse the request") {
			switch agentRounds(r) {
			case 0:
				return llmtest.CallTools(call("u1", "update_state", map[string]any{"next_skill": "deploy-to-prod", "context": "must not land"}))
			case 1:
				res := r.ToolResults()
				if len(res) > 0 {
					result = &res[0]
				}
				during, _ = os.ReadFile(path)
				return llmtest.CallTools(call("u2", "update_state", map[string]any{"next_skill": "Implement Change"}))
			}
			return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "ok"}))
		}
		return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "ok"}))
	})
	s := llmtest.NewServer(t, rule)
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	if result == nil {
		t.Fatal("the model never saw the result of its update_state call")
	}
	if !result.IsError || !strings.Contains(result.Content, `"deploy-to-prod"`) || !strings.Contains(result.Content, "plan-change") || !strings.Contains(result.Content, "done") {
		t.Errorf("result %+v, want an error naming the bad value, the known skills and done", result)
	}
	if string(during) != string(before) {
		t.Errorf("state.yaml changed although the call was refused:\n%s", during)
	}
	// A near spelling of a known skill is that skill: the run skipped the plan.
	var skills []string
	for _, r := range s.Requests() {
		if agentRounds(r) == 0 {
			skills = append(skills, strings.SplitN(strings.TrimSpace(r.System), "\n", 2)[0])
		}
	}
	if want := []string{"# Analyse the request", "# Implement the change", "# Write the report"}; !sameList(skills, want) {
		t.Errorf("steps %q, want %q", skills, want)
	}
}

// The state file is read-only to tools; the refusal of a write says to use
// update_state and why, so the model does not try another spelling.
func TestWriteFileToStateNamesUpdateState(t *testing.T) {
	dir := copyExample(t)
	var result *llm.ToolResult
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if agentRounds(r) == 0 && strings.Contains(r.System, "# Analyse the request") {
			return llmtest.CallTools(call("w", "write_file", map[string]any{"path": "specs/state.yaml", "content": "handoff:\n  next_skill: write-report\n"}))
		}
		if res := r.ToolResults(); len(res) > 0 && result == nil {
			result = &res[0]
		}
		return llmtest.Text("done")
	})
	s := llmtest.NewServer(t, rule)
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	if result == nil || !result.IsError || !strings.Contains(result.Content, "update_state") || !strings.Contains(result.Content, "protected by baton") {
		t.Errorf("result %+v, want a refusal that points to update_state", result)
	}
}

// A run killed after the agent's output was recorded, but before the step
// was marked complete, replays the output on resume; the agent's own edit
// of state.yaml is still told from the file as it was before the agent
// ran (the copy kept beside the journal), so its next_skill still counts.
func TestAgentCmdStateEditsSurviveAResumeFromTheJournal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := copyExample(t)
	agent, logDir := shellAgent(t, map[string]string{
		"analyse-request": `setkey specs/state.yaml "  next_skill" "implement-change"
while [ ! -f "$LOG/go" ]; do sleep 0.01; done
echo "analysis done"`,
		"write-report": "printf '```handoff\\nnext_skill: done\\n```\\n'",
	})
	statePath := filepath.Join(dir, "specs/state.yaml")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BATON_TEST_AGENT_CHILD="+dir, "BATON_TEST_AGENT_CMD="+agent)
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("timed out waiting for %s; child stderr: %s", what, stderr.String())
	}
	waitFor("the agent's edit", func() bool {
		data, _ := os.ReadFile(statePath)
		return strings.Contains(string(data), "  next_skill: implement-change\n")
	})
	// Hold state.yaml's lock so the child records the output and then
	// blocks before its bookkeeping can end the step.
	unlock, err := state.Lock(statePath)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(logDir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the recorded output", func() bool {
		js, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", "*", "steps", "001-analyse-request.jsonl"))
		if len(js) != 1 {
			return false
		}
		data, _ := os.ReadFile(js[0])
		return strings.Contains(string(data), `"kind":"call"`)
	})
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if err := unlock(); err != nil {
		t.Fatal(err)
	}

	res, err := runner.Resume(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if got, want := calls(t, logDir), []string{"analyse-request", "implement-change", "write-report"}; !sameList(got, want) || res.Replayed != 1 {
		t.Errorf("the agent ran for %v with %d replayed, want %v and 1: the agent's own next_skill was lost on resume", got, res.Replayed, want)
	}
}

// A completed_steps no step could be added to stops the run before the
// first step is paid for, with one line naming the key; the dry run says
// the same.
func TestRunRefusesACockpitItCannotRecordIn(t *testing.T) {
	dir := copyExample(t)
	path := filepath.Join(dir, "specs/state.yaml")
	data, _ := os.ReadFile(path)
	text := strings.Replace(string(data), "  completed_steps: []\n", "  completed_steps: {analyse-request: done}\n", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	agent, logDir := shellAgent(t, nil)
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent})
	if err == nil || !strings.Contains(err.Error(), "example_cycle.completed_steps holds a mapping") {
		t.Fatalf("Run: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(logDir, "calls")); statErr == nil {
		t.Error("the agent ran before the cockpit was checked")
	}
	if _, dryErr := runner.DryRun(load(t, dir), "m"); dryErr == nil || dryErr.Error() != err.Error() {
		t.Errorf("dry run: %v, want %v", dryErr, err)
	}
}

// A next_skill that would send the run back to an earlier phase is refused
// by update_state too, while the model can still correct it, instead of
// failing the step after its work is done.
func TestUpdateStateRefusesAnEarlierPhasesSkill(t *testing.T) {
	dir := copyExample(t)
	var result *llm.ToolResult
	rule := llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "# Implement the change") {
			switch agentRounds(r) {
			case 0:
				return llmtest.CallTools(call("u", "update_state", map[string]any{"next_skill": "analyse-request"}))
			case 1:
				if res := r.ToolResults(); len(res) > 0 {
					result = &res[0]
				}
			}
		}
		return llmtest.CallTools(call("f", "finish", map[string]string{"summary": "ok"}))
	})
	s := llmtest.NewServer(t, rule)
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), Model: providers["anthropic"](t, s), ModelName: "m"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if result == nil || !result.IsError || !strings.Contains(result.Content, "earlier phase") || !strings.Contains(result.Content, "nothing was changed") {
		t.Errorf("result %+v, want a refusal naming the earlier phase", result)
	}
}

// An agent that leaves state.yaml unreadable fails its step with one line
// that says where the file as it was before the step is kept.
func TestAgentCmdThatBreaksStateYAML(t *testing.T) {
	dir := copyExample(t)
	path := filepath.Join(dir, "specs/state.yaml")
	before, _ := os.ReadFile(path)
	agent, _ := shellAgent(t, map[string]string{
		"analyse-request": `printf 'handoff:\n  next_skill: plan-change\n  next_skill: oops\n' > specs/state.yaml; echo done`,
	})
	_, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "already defined") || !strings.Contains(err.Error(), "state-before.yaml") {
		t.Fatalf("Run: %v", err)
	}
	_, copyPath, _ := strings.Cut(err.Error(), "before the step is ")
	copyPath = strings.TrimSuffix(copyPath, ")")
	if kept, rerr := os.ReadFile(filepath.Join(dir, filepath.FromSlash(copyPath))); rerr != nil || string(kept) != string(before) {
		t.Errorf("the copy %s (%v) is not the file as it was before the step", copyPath, rerr)
	}
}

// Some suites name the next step in their cycle block rather than under
// handoff; baton keeps the two in step, so that counts the same.
func TestAgentCmdNextSkillWrittenToTheCycleIsHonoured(t *testing.T) {
	dir := copyExample(t)
	agent, logDir := shellAgent(t, map[string]string{
		"analyse-request": `sed 's/^  next_skill: analyse-request$/  next_skill: implement-change/' specs/state.yaml > s.tmp && mv s.tmp specs/state.yaml; echo analysed`,
		"write-report":    "printf '```handoff\\nnext_skill: done\\n```\\n'",
	})
	if _, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent}); err != nil {
		t.Fatal(err)
	}
	if got, want := calls(t, logDir), []string{"analyse-request", "implement-change", "write-report"}; !sameList(got, want) {
		t.Errorf("the agent ran for %v, want %v", got, want)
	}
}

// A next_skill the agent wrote to state.yaml that names no skill fails the
// step before its output is recorded, with a line naming the known skills,
// so that a resume asks the agent again.
func TestAgentCmdUnknownNextSkillInStateYAML(t *testing.T) {
	dir := copyExample(t)
	agent, _ := shellAgent(t, map[string]string{
		"analyse-request": `setkey specs/state.yaml "  next_skill" "ship-it"; echo done`,
	})
	res, err := runner.Run(context.Background(), runner.Config{Workflow: load(t, dir), AgentCmd: agent})
	if err == nil || !strings.Contains(err.Error(), `in specs/state.yaml, as the agent left it: next_skill "ship-it" names no skill of this workflow; use one of analyse-request, implement-change, plan-change, write-report`) {
		t.Fatalf("Run: %v", err)
	}
	js, _ := filepath.Glob(filepath.Join(dir, ".baton", "runs", res.RunID, "steps", "001-*.jsonl"))
	if len(js) != 1 {
		t.Fatalf("journals of step 1: %v", js)
	}
	for _, j := range js {
		if data, _ := os.ReadFile(j); strings.Contains(string(data), `"kind":"call"`) {
			t.Errorf("the refused output was recorded in %s", j)
		}
	}
}
