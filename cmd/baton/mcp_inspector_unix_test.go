//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/testdep"
	"github.com/baton-dev/baton/ledger"
)

// mcpContractPrompts are prompts the contract implies: every skill is a
// prompt, and lookup is a built-in skill.
var mcpContractPrompts = []string{"lookup"}

// inspectorCall is one tools/call: its arguments and what its structured
// result must hold beyond "not an error".
type inspectorCall struct {
	args  string
	check func(t *testing.T, root string, out map[string]any)
}

// mcpToolFixtures has one call per tool, keyed by name. A listed tool with
// no fixture fails the test: a new tool has to come with its call. The
// calls do not depend on their order (tools/list sorts by name): each reads
// what the fixture root already holds.
func mcpToolFixtures() map[string]inspectorCall {
	return map[string]inspectorCall{
		"outline": {`{"documents":["docs/guide.md"]}`, func(t *testing.T, _ string, out map[string]any) {
			wantContains(t, out, "text", "Pricing")
		}},
		"slice": {`{"document":"docs/guide.md","sections":["Pricing"],"line_ranges":[[1,1]]}`, func(t *testing.T, _ string, out map[string]any) {
			wantContains(t, out, "text", "Standard plan")
			if m, _ := out["matched"].([]any); len(m) != 2 {
				t.Errorf("matched = %v, want the section and the line range", out["matched"])
			}
		}},
		"count_tokens": {`{"texts":["hello there"],"files":["docs/guide.md"]}`, func(t *testing.T, _ string, out map[string]any) {
			if n, _ := out["total"].(float64); n <= 2 {
				t.Errorf("total = %v, want the text and the file counted", out["total"])
			}
		}},
		"budget_check": {`{"context_tokens":50000,"window":200000,"at_boundary":true}`, func(t *testing.T, _ string, out map[string]any) {
			wantEqual(t, out, "decision", "continue") // 25% of the window, under the 65% threshold
		}},
		"ledger_append": {`{"phase":"verify","time":"2026-12-01T10:00:00Z",` +
			`"frozen_decisions":["The guide is the only source."],` +
			`"done_so_far":[{"text":"Read the pricing section","evidence":"docs/guide.md:7"}],` +
			`"artifacts":["specs/plan.md"],"current_phase":"verify",` +
			`"next_step":"Check the plan against the guide.","open_tickets":[]}`,
			func(t *testing.T, root string, out map[string]any) {
				wantEqual(t, out, "entries", float64(3))
				data, err := os.ReadFile(filepath.Join(root, "specs", "ledger.md"))
				if err != nil || !bytes.Contains(data, []byte("Check the plan against the guide.")) {
					t.Errorf("the ledger does not hold the appended entry (err %v)", err)
				}
			}},
		"ledger_latest": {`{}`, func(t *testing.T, _ string, out map[string]any) {
			wantEqual(t, out, "found", true)
		}},
		"ledger_lint": {`{}`, func(t *testing.T, _ string, out map[string]any) {
			if n, _ := out["entries"].(float64); n < 2 {
				t.Errorf("entries = %v, want at least the fixture's 2", out["entries"])
			}
		}},
		"state_get": {`{"key":"handoff.next_step"}`, func(t *testing.T, _ string, out map[string]any) {
			wantEqual(t, out, "found", true)
			wantEqual(t, out, "value", "Outline the guide")
		}},
		"state_set": {`{"key":"handoff.context","value":"set through the inspector"}`, func(t *testing.T, root string, out map[string]any) {
			wantEqual(t, out, "changed", true)
			data, err := os.ReadFile(filepath.Join(root, "specs", "state.yaml"))
			if err != nil || !bytes.Contains(data, []byte("set through the inspector")) || !bytes.Contains(data, []byte("# ours, not baton's")) {
				t.Errorf("state.yaml lost the value or its comment (err %v):\n%s", err, data)
			}
		}},
		"ask": {`{"task":"What does the Standard plan cost?","documents":["docs/guide.md"],"dry_run":true}`, func(t *testing.T, _ string, out map[string]any) {
			wantEqual(t, out, "dry_run", true) // no provider in the server's environment: asked for
			if id, _ := out["run_id"].(string); id == "" {
				t.Errorf("run_id is empty: %v", out)
			}
		}},
		"skills_list": {`{}`, func(t *testing.T, _ string, out map[string]any) {
			var names []string
			list, _ := out["skills"].([]any)
			for _, s := range list {
				if m, ok := s.(map[string]any); ok {
					names = append(names, fmt.Sprint(m["name"]))
				}
			}
			if !slices.Contains(names, "lookup") {
				t.Errorf("skills = %v, want the built-in lookup among them", names)
			}
		}},
		"skill_get": {`{"name":"lookup"}`, func(t *testing.T, _ string, out map[string]any) {
			wantEqual(t, out, "name", "lookup")
			if b, _ := out["body"].(string); b == "" {
				t.Error("body is empty")
			}
		}},
	}
}

// TestMCPInspector checks baton mcp against the reference client, the MCP
// Inspector's CLI (.ci/run installs it and sets BATON_MCP_INSPECTOR), over
// stdio as examples/host/.mcp.json starts it and over Streamable HTTP with
// a bearer token: the tool schemas pass its portability lint, every tool
// the contract names is listed, and a call of each returns a structured
// result that is not an error.
func TestMCPInspector(t *testing.T) {
	insp := inspectorPath(t)
	bin := buildBaton(t)
	t.Run("stdio", func(t *testing.T) {
		root := inspectorRoot(t)
		hostFile, err := filepath.Abs("../../examples/host/.mcp.json")
		if err != nil {
			t.Fatal(err)
		}
		// The file docs/hosts.md shows, with "baton" found on PATH as a host finds
		// it. -e reaches the server: a local Ollama must not answer ask.
		target := []string{"--config", hostFile, "--server", "baton", "-e", "OLLAMA_HOST=127.0.0.1:1"}
		runInspectorSuite(t, insp, bin, root, target)
	})
	t.Run("http", func(t *testing.T) {
		root := inspectorRoot(t)
		const token = "inspector-test-token-7311"
		url := startMCPHTTP(t, bin, root, token)
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a request without the token got %s, want 401", resp.Status)
		}
		target := []string{"--server-url", url, "--transport", "http", "--header", "Authorization: Bearer " + token}
		runInspectorSuite(t, insp, bin, root, target)
	})
}

// inspectorPath finds the Inspector or skips the test (fails it under
// CI=true): it needs Node 22 and the npm registry, which .ci/run provides
// and a plain `go test` may not have.
func inspectorPath(t *testing.T) string {
	return testdep.FromEnv(t, "BATON_MCP_INSPECTOR", "the MCP Inspector")
}

// inspectorRoot is the server's root: a markdown document, a commented
// state.yaml and a ledger with two complete entries.
func inspectorRoot(t *testing.T) string {
	root := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/guide.md", []byte("# Guide\n\nHow the service is sold.\n\n## Plans\n\n### Pricing\n\nThe Standard plan costs 40 EUR a month; the Team plan 120 EUR.\n\n## Support\n\nMail support answers within one working day.\n"))
	write("specs/state.yaml", []byte("# The cockpit of the inspector test.\nowner: docs-team   # ours, not baton's\nhandoff:\n  next_step: Outline the guide   # set by the last step\n  context: \"\"\n  open_decisions: []\n"))
	var ldg bytes.Buffer
	ldg.WriteString("# Ledger of the inspector test\n\n")
	for i, phase := range []string{"analysis", "plan"} {
		e := ledger.Entry{
			Phase:           phase,
			Time:            time.Date(2026, 11, 30, 9+i, 0, 0, 0, time.UTC),
			FrozenDecisions: []string{"The guide is the only source."},
			DoneSoFar:       []ledger.Item{{Text: "Read the guide", Evidence: "docs/guide.md:1"}},
			Artifacts:       []string{"specs/plan.md"},
			CurrentPhase:    phase,
			NextStep:        "Go on with the " + phase + " phase.",
		}
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
		ldg.Write(ledger.Render(e))
		ldg.WriteString("\n")
	}
	write("specs/ledger.md", ldg.Bytes())
	return root
}

// startMCPHTTP starts `baton mcp --http 127.0.0.1:0` with the token set and
// no provider, and returns the URL from its one "serving" line.
func startMCPHTTP(t *testing.T, bin, root, token string) string {
	cmd := exec.Command(bin, "mcp", "--http", "127.0.0.1:0", "--root", root)
	cmd.Env = append(noProviderEnv(t.TempDir(), os.Getenv("PATH")), "BATON_MCP_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	serving := regexp.MustCompile(`^baton: mcp: serving (http://[^ ]+/mcp)$`)
	found := make(chan string, 1)
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				continue
			}
			if len(lines) < 20 {
				lines = append(lines, sc.Text())
			}
		}
	}()
	select {
	case url := <-found:
		return url
	case <-done:
		t.Fatalf("baton mcp --http ended without its serving line; stderr:\n%s", strings.Join(lines, "\n"))
	case <-time.After(30 * time.Second):
		t.Fatal("no serving line from baton mcp --http in 30 s")
	}
	return ""
}

// runInspectorSuite lints the schemas, checks the listed tools against the
// contract and the fixtures, and calls each tool once.
func runInspectorSuite(t *testing.T, insp, bin, root string, target []string) {
	env := inspectorEnv(t, insp, bin)
	listed := inspectorTools(t, insp, root, env, target)
	callInspectorTools(t, insp, root, env, target, listed)
	checkInspectorPrompts(t, insp, root, env, target)
}

// inspectorTools lists the tools through the Inspector, strictly, and
// checks the contract's tools are among them.
func inspectorTools(t *testing.T, insp, root string, env, target []string) []string {
	t.Helper()
	out, errOut, code := runInspector(t, insp, root, env, target, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\nstderr:\n%s", code, errOut)
	}
	// --strict exits 6 on an error and prints every warning with a summary
	// line; a list with nothing to report prints neither. baton rewrites
	// its schemas to be portable (mcpserver/schema.go), so a warning fails
	// too: a host that maps schemas onto a single-type dialect is a host.
	if m := regexp.MustCompile(`(\d+) errors?, (\d+) warnings?`).FindStringSubmatch(errOut); m != nil && (m[1] != "0" || m[2] != "0") || strings.Contains(errOut, "Warning") || strings.Contains(errOut, "Error") {
		t.Errorf("tools/list --strict reported findings:\n%s", errOut)
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	var listed []string
	for _, tl := range list.Result.Tools {
		listed = append(listed, tl.Name)
	}
	var missing []string
	for _, name := range mcpContractTools {
		if !slices.Contains(listed, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("tools named in the contract but missing from tools/list: %s", strings.Join(missing, ", "))
	}
	return listed
}

// callInspectorTools calls each listed tool with its fixture's arguments
// and checks its structured result.
func callInspectorTools(t *testing.T, insp, root string, env, target, listed []string) {
	t.Helper()
	fixtures := mcpToolFixtures()
	for _, name := range listed {
		fx, ok := fixtures[name]
		if !ok {
			t.Errorf("tool %q is listed but has no fixture in mcpToolFixtures", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runInspector(t, insp, root, env, target,
				"--method", "tools/call", "--tool-name", name, "--tool-args-json", fx.args)
			var res struct {
				Result struct {
					IsError           bool            `json:"isError"`
					Content           json.RawMessage `json:"content"`
					StructuredContent map[string]any  `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("exit %d, stdout is not the result: %v\nstdout: %s\nstderr: %s", code, err, out, errOut)
			}
			if code != 0 || res.Result.IsError {
				t.Fatalf("exit %d, isError %v: %s\nstderr: %s", code, res.Result.IsError, res.Result.Content, errOut)
			}
			if res.Result.StructuredContent == nil {
				t.Fatalf("no structuredContent: %s", out)
			}
			fx.check(t, root, res.Result.StructuredContent)
		})
	}
}

// checkInspectorPrompts: every prompt of the contract is listed, and
// getting it puts the task in its messages.
func checkInspectorPrompts(t *testing.T, insp, root string, env, target []string) {
	t.Helper()
	out, errOut, code := runInspector(t, insp, root, env, target, "--method", "prompts/list")
	var prompts struct {
		Result struct {
			Prompts []struct {
				Name string `json:"name"`
			} `json:"prompts"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &prompts); code != 0 || err != nil {
		t.Fatalf("prompts/list: exit %d, %v\nstdout: %s\nstderr: %s", code, err, out, errOut)
	}
	var promptNames []string
	for _, p := range prompts.Result.Prompts {
		promptNames = append(promptNames, p.Name)
	}
	for _, name := range mcpContractPrompts {
		if !slices.Contains(promptNames, name) {
			t.Errorf("prompt %q is missing from prompts/list", name)
			continue
		}
		out, errOut, code := runInspector(t, insp, root, env, target,
			"--method", "prompts/get", "--prompt-name", name, "--prompt-args", "task=What does the Standard plan cost?")
		if code != 0 || !strings.Contains(out, "Standard plan") {
			t.Errorf("prompts/get %s: exit %d, want the task in the messages\nstdout: %s\nstderr: %s", name, code, out, errOut)
		}
	}
}

// runInspector runs one Inspector CLI command in dir and returns its
// standard output and error and its exit code. The bound is a hang guard.
func runInspector(t *testing.T, insp, dir string, env, target []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"--cli"}, target...)
	argv = append(argv, args...)
	argv = append(argv, "--format", "json")
	cmd := exec.CommandContext(ctx, insp, argv...)
	cmd.Dir = dir
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("mcp-inspector %s: no answer in 2 minutes\nstderr: %s", strings.Join(args, " "), e.String())
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("mcp-inspector: %v", err)
	}
	return o.String(), e.String(), code
}

// inspectorEnv is the Inspector's environment: no provider settings, its
// own HOME, baton's folder first on PATH (so "baton" in .mcp.json is the
// binary just built) and the Inspector's folder next (npm puts Node 22's
// node there, which the Inspector's launcher needs).
func inspectorEnv(t *testing.T, insp, bin string) []string {
	path := filepath.Dir(bin) + string(os.PathListSeparator) + filepath.Dir(insp) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(noProviderEnv(t.TempDir(), path), "MCP_INSPECTOR_SECRET_STORE=memory")
}

// noProviderEnv is the environment without any provider setting or baton
// variable, with home as HOME, path as PATH and an Ollama address nothing
// answers.
func noProviderEnv(home, path string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "BATON_") ||
			k == "OLLAMA_HOST" || k == "HOME" || k == "PATH" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "PATH="+path, "OLLAMA_HOST=127.0.0.1:1")
}

func wantEqual(t *testing.T, out map[string]any, key string, want any) {
	t.Helper()
	if got := out[key]; got != want {
		t.Errorf("%s = %v (%T), want %v", key, got, got, want)
	}
}

func wantContains(t *testing.T, out map[string]any, key, sub string) {
	t.Helper()
	if s, _ := out[key].(string); !strings.Contains(s, sub) {
		t.Errorf("%s = %s, want it to contain %q", key, strconv.Quote(s), sub)
	}
}
