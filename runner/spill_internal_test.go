package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/llm"
)

// spillEnv is a step's tool environment over a workspace whose run has a
// spill folder holding one file.
func spillEnv(t *testing.T) (*toolEnv, string) {
	t.Helper()
	dir := t.TempDir()
	run := filepath.Join(dir, ".baton", "runs", "R")
	if err := os.MkdirAll(filepath.Join(run, "spill"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(run, "events.jsonl"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(run, "spill", "001-read_file-x.txt"), []byte("one\ntwo\nthree\nfour\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "huge.txt"), []byte(strings.Repeat("a line of the huge file\n", 20000)), 0o644)
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	tools, err := ws.Restrict(workspace.Rules{Deny: []string{".baton", ".git"}})
	if err != nil {
		t.Fatal(err)
	}
	env := newStepEnv(tools, filepath.Join(dir, "state.yaml"), "s", nil)
	env.spill = &spillView{rel: ".baton/runs/R/spill", dir: filepath.Join(run, "spill")}
	return env, dir
}

func runTool(env *toolEnv, name string, input any) llm.ToolResult {
	b, _ := json.Marshal(input)
	return env.run(context.Background(), llm.ToolCall{ID: "c", Name: name, Input: b}).result
}

// read_file reads exactly the run's spill folder, read-only; the rest of
// .baton stays denied, however the path is spelled.
func TestReadFileReadsOnlyTheRunsSpillFolder(t *testing.T) {
	env, dir := spillEnv(t)
	os.Symlink(filepath.Join(dir, ".baton", "runs", "R", "events.jsonl"), filepath.Join(dir, ".baton", "runs", "R", "spill", "link.txt"))
	tests := []struct {
		name  string
		input map[string]any
		want  string
		isErr bool
	}{
		{"the spill file", map[string]any{"path": ".baton/runs/R/spill/001-read_file-x.txt"}, "one\ntwo\nthree\nfour\n", false},
		{"a page of it", map[string]any{"path": "./.baton/runs/R/spill/001-read_file-x.txt", "offset": 2, "limit": 2}, "two\nthree\n[baton: lines 2–3 of 4]", false},
		{"to the end", map[string]any{"path": ".baton/runs/R/spill/001-read_file-x.txt", "offset": 4}, "four\n[baton: lines 4–4 of 4]", false},
		{"past the end", map[string]any{"path": ".baton/runs/R/spill/001-read_file-x.txt", "offset": 9}, "offset 9 is past the end: the file has 4 lines", true},
		{"negative", map[string]any{"path": ".baton/runs/R/spill/001-read_file-x.txt", "limit": -1}, "cannot be negative", true},
		{"out of the folder by ..", map[string]any{"path": ".baton/runs/R/spill/../events.jsonl"}, "protected by baton", true},
		{"the run log", map[string]any{"path": ".baton/runs/R/events.jsonl"}, "protected by baton", true},
		{"the folder itself", map[string]any{"path": ".baton/runs/R/spill"}, "protected by baton", true},
		{"a symlink out of the folder", map[string]any{"path": ".baton/runs/R/spill/link.txt"}, "spill file", true},
		{"a file too large to read whole", map[string]any{"path": "huge.txt"}, "read it in pages with offset and limit", true},
		{"a page of it", map[string]any{"path": "huge.txt", "offset": 20000}, "a line of the huge file\n[baton: lines 20000–20000 of 20000]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runTool(env, toolReadFile, tt.input)
			if res.IsError != tt.isErr || !strings.Contains(res.Content, tt.want) {
				t.Errorf("got %q (error %v), want %q (error %v)", res.Content, res.IsError, tt.want, tt.isErr)
			}
		})
	}
	res := runTool(env, toolWriteFile, map[string]any{"path": ".baton/runs/R/spill/001-read_file-x.txt", "content": "changed"})
	if !res.IsError || !strings.Contains(res.Content, "protected by baton") {
		t.Errorf("write to the spill folder: %q, want it refused", res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".baton", "runs", "R", "spill", "001-read_file-x.txt")); string(b) != "one\ntwo\nthree\nfour\n" {
		t.Errorf("the spill file changed: %q", b)
	}
}

// A cut keeps whole lines, fits its limit, and its pointer names the next
// line of the spill file.
func TestSpillHeadKeepsWholeLinesAndPointsOn(t *testing.T) {
	w := newWindow(12000, func(s string) int { return len(strings.Fields(s)) })
	text := strings.Repeat("alpha beta gamma delta\n", 1000)
	got := spillHead(w, text, 300, ".baton/runs/R/spill/f.txt", 1)
	head, pointer, ok := strings.Cut(got, "\n[cut by baton")
	if !ok {
		t.Fatalf("no pointer in %q", got)
	}
	if n := w.count(got); n > 300 {
		t.Errorf("the cut result counts %d, over its limit of 300", n)
	}
	shown := strings.Count(head, "\n")
	if !strings.HasPrefix(text, head) || !strings.HasSuffix(head, "\n") || shown == 0 {
		t.Errorf("the head is not whole lines of the text: %q", head)
	}
	want := `"offset": ` + itoa(shown+1)
	if !strings.Contains(pointer, want) || !strings.Contains(pointer, "of 1000 lines") {
		t.Errorf("pointer %q, want %s and the total", pointer, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A request over the window is never sent: fit refuses it with an error
// that matches llm.ErrPromptTooLong, and lowers max_tokens when only the
// reply tips it over.
func TestWindowFit(t *testing.T) {
	w := newWindow(3000, func(s string) int { return len(s) })
	req := func(n, maxTokens int) *llm.Request {
		return &llm.Request{System: strings.Repeat("x", n), MaxTokens: maxTokens}
	}
	if got, err := w.fit(req(100, 500)); err != nil || got.MaxTokens != 500 {
		t.Errorf("a request that fits: %v, %v", got, err)
	}
	got, err := w.fit(req(1500, 4096))
	if err != nil || got.MaxTokens != 3000-w.prompt(req(1500, 0)) {
		t.Errorf("max_tokens over the window: %+v, %v; want max_tokens lowered to what is left", got, err)
	}
	if _, err := w.fit(req(2900, 10)); !errors.Is(err, llm.ErrPromptTooLong) {
		t.Errorf("a prompt over the window: err = %v, want llm.ErrPromptTooLong", err)
	}
	if _, err := w.fit(req(2000, 4096)); !errors.Is(err, llm.ErrPromptTooLong) {
		t.Errorf("a prompt that leaves less than the least reply: err = %v", err)
	}
	// The margin: 2716 local tokens are 2988 with it, over a 3000 window
	// with a 100-token reply.
	if _, err := w.fit(req(2700, 100)); !errors.Is(err, llm.ErrPromptTooLong) {
		t.Errorf("the margin is not applied: err = %v", err)
	}
}

// The margin grows with a provider that counts more than baton does, and
// is capped so that absurd reported usage cannot refuse every request.
func TestWindowScaleFollowsTheProvider(t *testing.T) {
	w := newWindow(100000, func(s string) int { return len(s) })
	req := &llm.Request{System: strings.Repeat("x", 984)} // 1000 local with the overhead
	if got := w.prompt(req); got != 1100 {
		t.Errorf("no calls observed: prompt %d, want 1100 (the 10%% margin)", got)
	}
	w.observe(req, llm.Usage{InputTokens: 1000, CacheReadInputTokens: 300})
	if got := w.prompt(req); got != 1350 {
		t.Errorf("a provider counting 1.3×: prompt %d, want 1350 (its ratio and 5%%)", got)
	}
	w.observe(req, llm.Usage{InputTokens: 1_000_000})
	if got := w.prompt(req); got != 2000 {
		t.Errorf("absurd usage: prompt %d, want 2000 (capped at 2×)", got)
	}
}

// Room is shared smallest first; what is left over goes to the larger.
func TestShares(t *testing.T) {
	for _, tt := range []struct {
		sizes []int
		room  int
		want  []int
	}{
		{[]int{100, 5000, 300}, 1000, []int{100, 600, 300}},
		{[]int{4000, 4000}, 1000, []int{500, 500}},
		{[]int{10, 20}, 1000, []int{10, 20}},
		{[]int{10, 20}, -5, []int{0, 0}},
	} {
		got := shares(tt.sizes, tt.room)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("shares(%v, %d) = %v, want %v", tt.sizes, tt.room, got, tt.want)
		}
	}
}
