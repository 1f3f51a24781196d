package runner

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseHandoff(t *testing.T) {
	for _, tc := range []struct {
		name      string
		out       string
		found     bool
		next      string // "" when unset
		summary   string
		decisions int
		rest      string // checked when not empty
		err       string // a part of the error, "" for none
	}{
		{name: "no block", out: "just prose\n", rest: "just prose\n"},
		{name: "full block", found: true, next: "plan-change", summary: "done it", decisions: 1, rest: "prose\n",
			out: "prose\n```handoff\nnext_skill: plan-change\nopen_decisions: [a, b]\nrequired_reading: [x.md]\ncontext: c\ndecisions:\n  - decision: d\n    evidence: f.go:3\nsummary: done it\n```\n"},
		{name: "tilde fence, CRLF", found: true, next: "done", out: "~~~handoff\r\nnext_skill: done\r\n~~~\r\n"},
		{name: "info string case and trailing words", found: true, next: "x", out: "```Handoff yaml\nnext_skill: x\n```\n"},
		{name: "last block wins", found: true, next: "second", out: "```handoff\nnext_skill: first\n```\n```handoff\nnext_skill: second\n```\n"},
		{name: "a handoff fence inside another code block is content", found: true, next: "outer",
			out: "````markdown\n```handoff\nnext_skill: inner\n```\n````\n```handoff\nnext_skill: outer\n```\n"},
		{name: "only inside another code block", out: "````\n```handoff\nnext_skill: inner\n```\n````\n"},
		{name: "indented four spaces is not a fence", out: "    ```handoff\n    next_skill: x\n    ```\n"},
		{name: "empty block", found: true, out: "```handoff\n```\n"},
		{name: "unclosed", found: true, out: "```handoff\nnext_skill: x\n", err: "never closed"},
		{name: "closing fence shorter than opening", found: true, out: "````handoff\nnext_skill: x\n```\n", err: "never closed"},
		{name: "unknown field", found: true, out: "```handoff\nnext-skill: x\n```\n", err: "output line 2"},
		{name: "bad YAML", found: true, out: "a\n```handoff\nnext_skill: [x\n```\n", err: "output line 3"},
		{name: "wrong type", found: true, out: "```handoff\ndecisions: yes\n```\n", err: "handoff block"},
		{name: "decision without evidence", found: true, out: "```handoff\ndecisions:\n  - decision: d\n```\n", err: "evidence pointer"},
		{name: "aliases", found: true, out: "```handoff\nopen_decisions: &a [x]\nrequired_reading: *a\n```\n", err: "aliases"},
		// Found by FuzzParseHandoff: the YAML library panicked decoding it.
		{name: "tag on a comment where a list belongs", found: true, out: "```handoff\nnext_skill: x\ndecisions:\n !0 #0000000000000000000000000\n``` ", err: "handoff block"},
		{name: "nesting too deep", found: true, out: "```handoff\ncontext: " + strings.Repeat("[", 1000) + "\n```\n", err: "output line 2: nesting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, rest, found, err := parseHandoff(tc.out)
			if found != tc.found {
				t.Errorf("found = %v, want %v", found, tc.found)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrAgentHandoff) || strings.Contains(err.Error(), "\n") {
					t.Errorf("err = %v, want one line with %q wrapping ErrAgentHandoff", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			next := ""
			if h.NextSkill != nil {
				next = *h.NextSkill
			}
			if next != tc.next || h.Summary != tc.summary || len(h.Decisions) != tc.decisions {
				t.Errorf("handoff %+v (next %q)", h, next)
			}
			if tc.rest != "" && rest != tc.rest {
				t.Errorf("rest = %q, want %q", rest, tc.rest)
			}
		})
	}
}

func TestAgentInputLayout(t *testing.T) {
	in := agentInput("# Skill\nbody\n\n", "capsule\nstate\n")
	want := "# Skill\nbody\n\n" + AgentInputSeparator + "\n\ncapsule\nstate\n\n" + AgentProtocolSeparator + "\n\n"
	if !strings.HasPrefix(in, want) || !strings.HasSuffix(in, "\n") {
		t.Errorf("input document:\n%s", in)
	}
}

// TestParseHandoffAliasBomb: a handoff block whose aliases would expand
// to 10^9 values is refused at once, as one line, without the memory.
func TestParseHandoffAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("prose\n```handoff\nsummary: s\nx0: &x0 [a,a,a,a,a,a,a,a,a,a]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x%d: &x%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*x%d,", i-1), 10), ","))
	}
	b.WriteString("```\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan error, 1)
	go func() { _, _, _, err := parseHandoff(b.String()); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still parsing a handoff alias bomb after 10 s")
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d-byte output refused in %v with %d KB allocated: %v", b.Len(), elapsed, alloc>>10, err)
	if !errors.Is(err, ErrAgentHandoff) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q, want one line wrapping ErrAgentHandoff", err)
	}
	if alloc > 100<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
}

func FuzzParseHandoff(f *testing.F) {
	f.Add("```handoff\nnext_skill: x\ndecisions:\n  - {decision: d, evidence: e}\n```\n")
	f.Add("````\n```handoff\n````\n~~~handoff\nsummary: s\n~~~")
	f.Add("```handoff\nopen_decisions: &a [x]\n```")
	f.Add("```handoff\nnext_skill: x\ndecisions:\n !0 #0000000000000000000000000\n``` ")
	f.Add("```handoff\ndecisions: &d\n  - {decision: d, evidence: e}\nx: {<<: *d}\n```\n")
	f.Add("```handoff\nsummary: !!str &s s\ncontext: !!binary aGk=\n```\n")
	f.Fuzz(func(t *testing.T, out string) {
		h, rest, found, err := parseHandoff(out)
		if err != nil {
			if !errors.Is(err, ErrAgentHandoff) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one handoff line", err)
			}
			return
		}
		if !found && rest != out {
			t.Error("no block, yet the output changed")
		}
		if found && len(rest) > len(out) {
			t.Error("the rest is longer than the output")
		}
		for _, d := range h.Decisions {
			if strings.TrimSpace(d.Decision) == "" || strings.TrimSpace(d.Evidence) == "" {
				t.Error("a decision without evidence was accepted")
			}
		}
	})
}
