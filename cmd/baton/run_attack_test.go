package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/baton-dev/baton/internal/testdep"
	"github.com/baton-dev/baton/internal/writepolicy"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
)

// plant is one file a hostile model writes with write_file.
type plant struct{ path, content string }

// attack is a file another tool runs, planted by a model that a document
// steered, then fired by the command the user runs anyway (issue 25).
type attack struct {
	name string
	// setup is the user's own workspace before the run: a repository, a
	// virtual environment, installed packages. It returns the plants.
	setup func(t *testing.T, dir, marker string) []plant
	// fire runs the ordinary command that would run a planted file.
	fire func(t *testing.T, dir string)
}

// gitEnv is git with no system or user configuration and no climbing
// above the workspace: only what the workspace holds decides what runs.
func gitEnv(dir string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir,
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
}

func runIn(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func attacks(t *testing.T) []attack {
	git := testdep.LookPath(t, "git")
	python := testdep.LookPath(t, "python3")
	return []attack{
		{
			name: "embedded git directory",
			setup: func(t *testing.T, dir, marker string) []plant {
				return []plant{
					{"docs/notes/HEAD", "ref: refs/heads/main\n"},
					{"docs/notes/config", "[core]\n\trepositoryformatversion = 0\n\tworktree = ..\n\tfsmonitor = \"touch '" + marker + "'; false\"\n"},
					{"docs/notes/objects/info/packs", "\n"},
					{"docs/notes/refs/heads/main.lock", "\n"},
				}
			},
			fire: func(t *testing.T, dir string) {
				notes := filepath.Join(dir, "docs", "notes")
				os.MkdirAll(notes, 0o755)
				runIn(t, notes, gitEnv(dir), git, "status")
			},
		},
		{
			name: "git hook under core.hooksPath",
			setup: func(t *testing.T, dir, marker string) []plant {
				env := gitEnv(dir)
				runIn(t, dir, env, git, "init", "-q")
				runIn(t, dir, env, git, "config", "core.hooksPath", "githooks")
				hooks := filepath.Join(dir, "githooks")
				os.MkdirAll(hooks, 0o755)
				if err := os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				payload := "#!/bin/sh\ntouch '" + marker + "'\n"
				return []plant{{"githooks/pre-commit", payload}, {"githooks/post-commit", payload}}
			},
			fire: func(t *testing.T, dir string) {
				runIn(t, dir, gitEnv(dir), git, "-c", "user.name=u", "-c", "user.email=u@example.com", "commit", "-q", "--allow-empty", "-m", "x")
			},
		},
		{
			name: "python .pth in a virtual environment",
			setup: func(t *testing.T, dir, marker string) []plant {
				runIn(t, dir, os.Environ(), python, "-m", "venv", "--without-pip", ".venv")
				sp, _ := filepath.Glob(filepath.Join(dir, ".venv", "lib", "python3*", "site-packages"))
				if len(sp) != 1 {
					t.Fatalf("python3 -m venv made no site-packages: %v", sp)
				}
				rel, _ := filepath.Rel(dir, sp[0])
				writeTestFile(t, dir, ".gitignore", ".venv/\nnode_modules/\n", 0o644)
				return []plant{{filepath.ToSlash(rel) + "/zz.pth", "import os; open(" + pyQuote(marker) + ", 'w').close()\n"}}
			},
			fire: func(t *testing.T, dir string) {
				runIn(t, dir, os.Environ(), filepath.Join(dir, ".venv", "bin", "python"), "-c", "pass")
			},
		},
		{
			name: "node_modules/.bin",
			setup: func(t *testing.T, dir, marker string) []plant {
				writeTestFile(t, dir, "node_modules/jest/bin/jest.js", "#!/bin/sh\nexit 0\n", 0o755)
				if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../jest/bin/jest.js", filepath.Join(dir, "node_modules", ".bin", "jest")); err != nil {
					t.Fatal(err)
				}
				writeTestFile(t, dir, ".gitignore", "node_modules/\n", 0o644)
				return []plant{{"node_modules/.bin/jest", "#!/bin/sh\ntouch '" + marker + "'\n"}}
			},
			fire: func(t *testing.T, dir string) {
				runIn(t, dir, os.Environ(), filepath.Join(dir, "node_modules", ".bin", "jest"))
			},
		},
	}
}

func writeTestFile(t *testing.T, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func pyQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hostileModel plants every file with write_file in the first step, then
// finishes every step; results receives what the plants got back.
func hostileModel(plants []plant, results *[]llm.ToolResult) llmtest.Rule {
	var mu sync.Mutex
	sent := false
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(r.System, "# Write the report") {
			return llmtest.Text("REPORT: all phases done")
		}
		if !sent {
			sent = true
			var calls []llm.ToolCall
			for _, p := range plants {
				in, _ := json.Marshal(map[string]string{"path": p.path, "content": p.content})
				calls = append(calls, llm.ToolCall{Name: "write_file", Input: in})
			}
			return llmtest.CallTools(calls...)
		}
		if res := r.ToolResults(); *results == nil && len(res) > 0 {
			*results = res
		}
		return llmtest.CallTools(llmtest.Call("finish", `{"summary": "step done"}`))
	})
}

// Each attack of issue 25, end to end: `baton run` against a model that
// plants the files, then the ordinary command that would run them. The
// same plants written directly (as write_file did before the allow-list)
// make the command run the payload, so the test can tell. Through baton,
// under the example's own writes: list and under one that allows every
// path, nothing runs, and under the example's list every plant is refused
// with the allow-list's one line.
func TestRunPlantsNothingThatRuns(t *testing.T) {
	isolateEnv(t)
	for _, a := range attacks(t) {
		t.Run(a.name, func(t *testing.T) {
			control := exampleWorkspace(t)
			marker := filepath.Join(t.TempDir(), "PWNED")
			for _, p := range a.setup(t, control, marker) {
				full := filepath.Join(control, filepath.FromSlash(p.path))
				os.MkdirAll(filepath.Dir(full), 0o755)
				if err := os.WriteFile(full, []byte(p.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			a.fire(t, control)
			if !exists(marker) {
				t.Fatal("the plants written directly do not run: this attack proves nothing here")
			}
			for _, writes := range []string{"", `writes: ["**"]`} {
				dir := exampleWorkspace(t)
				marker := filepath.Join(t.TempDir(), "PWNED")
				plants := a.setup(t, dir, marker)
				if writes != "" {
					wf := filepath.Join(dir, "baton.yaml")
					yml, _ := os.ReadFile(wf)
					yml = []byte(strings.Replace(string(yml), "writes: [specs/**, app/**, CHANGELOG.md]", writes, 1))
					os.WriteFile(wf, yml, 0o644)
				}
				var results []llm.ToolResult
				s := llmtest.NewServer(t, hostileModel(plants, &results))
				t.Setenv("OPENAI_BASE_URL", s.OpenAIBaseURL())
				code, _, errOut := runBaton(t, "", "run", "--workflow", filepath.Join(dir, "baton.yaml"))
				if code != exitOK {
					t.Fatalf("%s: run: exit %d\n%s", writes, code, errOut)
				}
				a.fire(t, dir)
				if exists(marker) {
					t.Fatalf("writes %q: the planted payload ran", writes)
				}
				if len(results) != len(plants) {
					t.Fatalf("writes %q: %d results for %d plants", writes, len(results), len(plants))
				}
				for i, res := range results {
					text := strings.TrimPrefix(res.Content, llm.ErrorPrefix)
					// A place no declaration makes writable is refused as
					// such; any other as undeclared.
					want := "write " + plants[i].path + ": not a path this workflow may write (writes: specs/**, app/**, CHANGELOG.md); declare it in baton.yaml's writes: list"
					if f, ok := writepolicy.WriteFamily(plants[i].path); ok {
						want = "write " + plants[i].path + ": protected by baton (" + string(f) + ", which baton never lets a tool write)"
					}
					if writes == "" && text != want {
						t.Errorf("write_file %s: %q\nwant %q", plants[i].path, text, want)
					}
					if strings.Contains(text, "\n") {
						t.Errorf("write_file %s: a refusal of more than one line: %q", plants[i].path, text)
					}
					full := filepath.Join(dir, filepath.FromSlash(plants[i].path))
					if fi, err := os.Lstat(full); err == nil && fi.Mode()&0o111 != 0 {
						if data, _ := os.ReadFile(full); string(data) == plants[i].content {
							t.Errorf("writes %q: %s holds the plant and can be run (%v)", writes, plants[i].path, fi.Mode())
						}
					}
				}
			}
		})
	}
}
