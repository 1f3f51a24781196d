package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/baton-dev/baton/internal/spill"
	"github.com/baton-dev/baton/internal/yamlsafe"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/runlog"
	"github.com/baton-dev/baton/state"
)

// External agents (Config.AgentCmd). Each skill step runs as one fresh
// process of a command-line agent instead of the built-in tool loop. The
// process is started with `sh -c CMD` in the workspace root and receives
// the step's whole input on stdin as one plain-text document:
//
//	<the skill's SKILL.md body>
//	===== baton: step input =====
//	<capsule, state.yaml, declared files [, the ledger entry to continue from]>
//	===== baton: how to end this step =====
//	<how to write the handoff block>
//
// Its stdout is the step's output. Handoff fields come from a fenced block
// whose info string is "handoff", holding YAML:
//
//	```handoff
//	next_skill: plan-change        # a skill name, or done
//	open_decisions: [...]          # replaces the list; [] clears it
//	required_reading: [...]
//	context: "..."
//	decisions:
//	  - {decision: "...", evidence: "file:line, a command or an artifact"}
//	summary: "..."
//	```
//
// A missing block makes the whole output the summary, and the skill's
// declared default next step applies unless the agent set next_skill in
// state.yaml itself. Skill suites written for command-line agents tell the
// agent to keep the handoff there: after the process baton reads the file
// back and honours what the agent changed (see agentstate.go); a block is
// merged on top and wins a conflict, with a warning. A malformed block, a
// next_skill the run cannot take (in the block or the file), a state.yaml
// baton cannot read, a non-zero exit or a timeout fails the step; such an
// output is not recorded, so a resume asks the agent again.
//
// The environment is the caller's plus BATON_WORKSPACE, BATON_SKILL,
// BATON_STEP and BATON_PHASE.
//
// An accepted output is recorded in the step journal, keyed by the hash of
// the input document, before it is used: a resumed run does not start the
// process again for a step it completed. The command line is not part of
// the key, so resuming with a corrected command does not redo finished
// work.
//
// The agent's token usage is unknown to baton and is counted as zero. The
// budget therefore measures nothing inside an external step: the boundary
// evaluation projects 0 + the next phase's expect_tokens. Since every step
// is a fresh process anyway, what an evaluation can still decide is whether
// the next phase starts from a ledger entry.

// DefaultAgentTimeout bounds one external agent process.
const DefaultAgentTimeout = 30 * time.Minute

// Separator lines of the document an external agent reads on stdin.
const (
	AgentInputSeparator    = "===== baton: step input ====="
	AgentProtocolSeparator = "===== baton: how to end this step ====="
)

// agentProtocol tells an agent that has no update_state or finish tool how
// to hand off instead.
const agentProtocol = "You run as an external agent: where the instructions above mention the update_state or finish tools, write the handoff block below instead. Do the step's work in the workspace (your working directory), then end your answer with one fenced block tagged handoff holding YAML, for example:\n\n" +
	"```handoff\n" +
	"next_skill: <a skill name, or done; leave it out to take the skill's default next step>\n" +
	"open_decisions: [<questions left open>]\n" +
	"required_reading: [<files the next step must read>]\n" +
	"context: <one paragraph the next step needs>\n" +
	"decisions:\n" +
	"  - decision: <what was decided>\n" +
	"    evidence: <file:line, a command or an artifact>\n" +
	"summary: <at most five lines on what this step did>\n" +
	"```\n\n" +
	"Every field is optional. If your instructions tell you to keep the handoff in the state file yourself, do so: baton reads the file back after this step and keeps what you wrote there; where the block and the file disagree, the block wins. Nothing else in your answer is passed to the next step."

// Bounds on what is kept of a process's output. Output over
// maxAgentOutput is spilled whole (up to maxAgentSpill) and the step keeps
// its head, a pointer and its last agentOutputTail bytes, where the handoff
// block is.
const (
	maxAgentOutput  = 4 << 20
	agentOutputTail = 256 << 10
	maxAgentSpill   = 1 << 30
	agentErrTail    = 400
)

// ErrAgentHandoff is wrapped when an agent's handoff block cannot be used.
var ErrAgentHandoff = errors.New("handoff block")

// agentInput is the document an external agent reads on stdin.
func agentInput(system, user string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(system, "\n"))
	b.WriteString("\n\n" + AgentInputSeparator + "\n\n")
	b.WriteString(strings.TrimRight(user, "\n"))
	b.WriteString("\n\n" + AgentProtocolSeparator + "\n\n")
	b.WriteString(agentProtocol)
	b.WriteString("\n")
	return b.String()
}

// agentHandoff is the YAML of a handoff block.
type agentHandoff struct {
	NextSkill       *string         `yaml:"next_skill"`
	OpenDecisions   []string        `yaml:"open_decisions"`
	RequiredReading []string        `yaml:"required_reading"`
	Context         *string         `yaml:"context"`
	Decisions       []agentDecision `yaml:"decisions"`
	Summary         string          `yaml:"summary"`
}

type agentDecision struct {
	Decision string `yaml:"decision"`
	Evidence string `yaml:"evidence"`
}

// parseHandoff finds the last fenced block tagged handoff in out. found is
// false when there is none; rest is out without the block.
func parseHandoff(out string) (h agentHandoff, rest string, found bool, err error) {
	lines := strings.SplitAfter(out, "\n")
	start, end := -1, -1
	var fence string
	for i := 0; i < len(lines); i++ {
		f, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		// Find the block's end, whatever its tag: code blocks before the
		// handoff block may hold anything.
		j := i + 1
		for ; j < len(lines); j++ {
			if closesFence(lines[j], f) {
				break
			}
		}
		if info == "handoff" {
			start, end, fence = i, j, f
		}
		i = j
	}
	if start < 0 {
		return agentHandoff{}, out, false, nil
	}
	if end >= len(lines) {
		return agentHandoff{}, out, true, fmt.Errorf("%w: the %s fence is never closed", ErrAgentHandoff, fence)
	}
	body := strings.Join(lines[start+1:end], "")
	rest = strings.Join(lines[:start], "") + strings.Join(lines[end+1:], "")
	if strings.TrimSpace(body) != "" {
		// The block is a model's output: yamlsafe bounds the parse and
		// turns a panic in the YAML library into an error. Aliases are
		// refused outright; a handoff never needs them.
		f, err := yamlsafe.Parse([]byte(body), 0)
		if err != nil {
			return agentHandoff{}, rest, true, handoffYAMLError(err, start+1)
		}
		for _, d := range f.Docs {
			if d == nil {
				continue
			}
			if alias := yamlsafe.FirstAlias(d.Body); alias != nil {
				ln := 0
				if tk := alias.GetToken(); tk != nil && tk.Position != nil {
					ln = tk.Position.Line
				}
				return agentHandoff{}, rest, true, fmt.Errorf("%w: output line %d: YAML aliases are not accepted", ErrAgentHandoff, start+1+ln)
			}
		}
		if err := yamlsafe.Unmarshal([]byte(body), &h, yaml.DisallowUnknownField()); err != nil {
			return agentHandoff{}, rest, true, handoffYAMLError(err, start+1)
		}
	}
	for i, d := range h.Decisions {
		if strings.TrimSpace(d.Decision) == "" || strings.TrimSpace(d.Evidence) == "" {
			return agentHandoff{}, rest, true, fmt.Errorf("%w: decision %d needs its text and an evidence pointer (file:line, a command or an artifact)", ErrAgentHandoff, i+1)
		}
	}
	return h, rest, true, nil
}

// openingFence reports whether line opens a fenced code block (up to three
// spaces of indent, then ``` or ~~~), with the fence and the info string's
// first word.
func openingFence(line string) (fence, info string, ok bool) {
	t := strings.TrimRight(line, "\r\n")
	trimmed := strings.TrimLeft(t, " ")
	if len(t)-len(trimmed) > 3 {
		return "", "", false
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == c {
			n++
		}
		if n >= 3 {
			rest := trimmed[n:]
			if c == '`' && strings.Contains(rest, "`") {
				return "", "", false
			}
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				info = strings.ToLower(fields[0])
			}
			return trimmed[:n], info, true
		}
	}
	return "", "", false
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" && t[0] == fence[0]
}

// handoffYAMLError is yamlsafe's one-line error numbered as a line of the
// agent's output.
func handoffYAMLError(err error, offset int) error {
	var ye *yamlsafe.Error
	if errors.As(err, &ye) && ye.Line > 0 {
		return fmt.Errorf("%w: output line %d: %s", ErrAgentHandoff, offset+ye.Line, oneLine(ye.Msg))
	}
	return fmt.Errorf("%w: %s", ErrAgentHandoff, oneLine(err.Error()))
}

func oneLine(s string) string {
	f := strings.Fields(s)
	return strings.Join(f, " ")
}

// agentProcess runs an external agent. It is an llm.Model so that its
// outputs go through the step journal exactly as model responses do: the
// request's System holds the input document.
type agentProcess struct {
	cmd     string
	dir     string
	timeout time.Duration
	env     []string
	// check refuses an output before it is recorded.
	check func(out string) error
	// spill keeps an output over maxAgentOutput in full; rel is its folder
	// as the workspace names it; label names its file. onSpill, when set,
	// is told of the file.
	spill   spill.Dir
	rel     string
	label   string
	onSpill func(f spill.File)
}

func (p *agentProcess) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", p.cmd)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdin = strings.NewReader(req.System)
	stdout := &spilling{max: maxAgentOutput, dir: p.spill, label: p.label, end: tail{max: agentOutputTail}}
	defer stdout.abort()
	stderr := &tail{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && err != nil:
		return nil, fmt.Errorf("agent command timed out after %s%s", p.timeout, stderr.clause())
	case ctx.Err() != nil && err != nil:
		return nil, fmt.Errorf("agent command: %w", ctx.Err())
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("agent command failed (%s)%s", ee.ProcessState, stderr.clause())
		}
		return nil, fmt.Errorf("agent command: %w", err)
	}
	out, err := stdout.text(p.rel, p.onSpill)
	if err != nil {
		return nil, err
	}
	if p.check != nil {
		if err := p.check(out); err != nil {
			return nil, err
		}
	}
	return &llm.Response{Model: "agent-cmd", Text: out, StopReason: "exit 0"}, nil
}

// spilling keeps a process's output in memory up to max bytes. Past that
// it streams the whole output to a spill file, keeping the first max bytes
// and the end in memory, so nothing is lost and memory stays bounded.
type spilling struct {
	b     bytes.Buffer
	max   int
	dir   spill.Dir
	label string
	s     *spill.Stream
	end   tail // the last bytes, once spilling
	n     int64
	err   error
}

func (c *spilling) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if c.s == nil && c.b.Len()+len(p) <= c.max {
		return c.b.Write(p)
	}
	if c.err != nil {
		return len(p), nil
	}
	if c.s == nil {
		s, err := c.dir.Create(c.label)
		if err != nil {
			c.err = err
			return len(p), nil
		}
		c.s = s
		if _, err := s.Write(c.b.Bytes()); err != nil {
			c.err = err
			return len(p), nil
		}
		c.end.Write(c.b.Bytes())
		// The head in memory is the first max bytes, whatever the writes'
		// sizes.
		c.b.Write(p[:max(c.max-c.b.Len(), 0)])
	}
	c.end.Write(p)
	if room := maxAgentSpill - c.s.Size(); room > 0 {
		if _, err := c.s.Write(p[:min(int64(len(p)), room)]); err != nil {
			c.err = err
		}
	}
	// Reading on keeps the process from blocking on a full pipe.
	return len(p), nil
}

// text is the output the step uses: all of it when it fit, else its head,
// a pointer to the spill file under rel and its end.
func (c *spilling) text(rel string, onSpill func(spill.File)) (string, error) {
	if c.s == nil {
		return c.b.String(), nil
	}
	if c.err != nil {
		return "", fmt.Errorf("agent command wrote %d bytes to stdout, more than %d MiB, and they could not be kept: %w", c.n, maxAgentOutput>>20, c.err)
	}
	f, err := c.s.Commit()
	c.s = nil
	if err != nil {
		return "", fmt.Errorf("agent command wrote %d bytes to stdout, more than %d MiB, and they could not be kept: %w", c.n, maxAgentOutput>>20, err)
	}
	if onSpill != nil {
		onSpill(f)
	}
	kept := ""
	if f.Bytes < c.n {
		kept = fmt.Sprintf(" (its first %d MiB)", maxAgentSpill>>20)
	}
	head := c.b.Bytes()[:min(c.b.Len(), c.max-agentOutputTail)]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	end := c.end.b
	if i := bytes.IndexByte(end, '\n'); i >= 0 && c.n > int64(len(end)) {
		end = end[i+1:] // from a line's start
	}
	return fmt.Sprintf("%s\n[cut by baton: the agent wrote %d bytes to stdout, more than %d MiB; the whole output%s is in %s/%s]\n\n%s",
		head, c.n, maxAgentOutput>>20, kept, rel, f.Name, end), nil
}

// abort removes a spill stream that was never committed (the process
// failed).
func (c *spilling) abort() {
	if c.s != nil {
		c.s.Abort()
	}
}

// tail keeps the last max bytes written.
type tail struct {
	b   []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// clause is the stderr tail as one line, for an error message.
func (t *tail) clause() string {
	s := oneLine(string(t.b))
	if s == "" {
		return ""
	}
	if len(s) > agentErrTail {
		s = "…" + s[len(s)-agentErrTail:]
	}
	return ": " + s
}

// runAgentCmd is stepRun.run for an external agent: system and user are
// the step's fresh context, already recorded in the journal.
func (s *stepRun) runAgentCmd(ctx context.Context, system, user string) (string, error) {
	s.session = s.r.budget.NewSession()
	before, err := s.stateBefore()
	if err != nil {
		return "", err
	}
	timeout := s.r.cfg.AgentTimeout
	if timeout <= 0 {
		timeout = DefaultAgentTimeout
	}
	proc := &agentProcess{
		cmd:     s.r.cfg.AgentCmd,
		dir:     s.r.ws.Root(),
		timeout: timeout,
		env: []string{
			"BATON_WORKSPACE=" + s.r.ws.Root(),
			"BATON_SKILL=" + s.skillName,
			"BATON_STEP=" + fmt.Sprint(s.seq),
			"BATON_PHASE=" + s.r.wf.Phases[s.phase].Name,
		},
		check: func(out string) error {
			h, _, _, err := parseHandoff(out)
			if err != nil {
				return err
			}
			if err := s.checkNextSkill(h); err != nil {
				return err
			}
			_, err = s.readStateEdits(before, h)
			return err
		},
		spill: s.r.spillDir(),
		rel:   s.r.spillRel(),
		label: fmt.Sprintf("%03d-agent-output", s.seq),
		onSpill: func(f spill.File) {
			s.warn(fmt.Sprintf("the agent wrote %d bytes to stdout, more than %d MiB: kept whole in %s/%s; the step used its head and its end", f.Bytes, maxAgentOutput>>20, s.r.spillRel(), f.Name))
		},
	}
	req := &llm.Request{Model: "agent-cmd", System: agentInput(system, user)}
	hash, err := requestHash(req)
	if err != nil {
		return "", err
	}
	s.progress(ProgressEvent{Kind: ProgressAgentStart})
	resp, replayed, err := s.j.call(ctx, proc, req)
	if err != nil {
		return "", err
	}
	if replayed {
		s.r.logf("step %d %s: the agent's output was answered from the step journal", s.seq, s.skillName)
	}
	ev := s.stepEvent(runlog.Event{Type: runlog.ModelCall, Model: "agent-cmd", InputHash: hash, Usage: &runlog.Usage{},
		Note: "external agent process: its token usage is unknown and counted as zero"})
	if replayed {
		ev.Note = "external agent output answered from the step journal; usage unknown, counted as zero"
		ev.Replayed = true
		s.r.mu.Lock()
		s.r.result.Replayed++
		s.r.mu.Unlock()
	}
	s.r.event(ev)

	h, rest, found, err := parseHandoff(resp.Text)
	if err != nil {
		return "", err
	}
	edits, err := s.readStateEdits(before, h)
	if err != nil {
		return "", err
	}
	// The agent's own last_step_completed stays, unless a block summary
	// is there to replace it in the file's multi-line style.
	multiLine := strings.Contains(edits.after.Handoff().LastStepCompleted, "\n")
	edits.keepLastStep = edits.has("last_step_completed") && (strings.TrimSpace(h.Summary) == "" || !multiLine)
	s.env.agentState = &edits
	if edits.nextSkill != nil && *edits.nextSkill != "" {
		v := *edits.nextSkill
		s.env.nextSkillSet = &v
	}
	if !found {
		if edits.handedOff() {
			s.r.logf("step %d %s: the agent wrote its handoff to %s itself", s.seq, s.skillName, s.r.wf.State)
		} else {
			s.warn("the agent's output has no handoff block: its whole output is the summary and the skill's default next step applies")
		}
		return strings.TrimSpace(resp.Text), nil
	}
	s.warnConflicts(h, edits)
	if err := s.applyHandoff(h); err != nil {
		return "", err
	}
	if strings.TrimSpace(h.Summary) != "" {
		return strings.TrimSpace(h.Summary), nil
	}
	return strings.TrimSpace(rest), nil
}

// checkNextSkill refuses a next_skill naming no skill before the output is
// recorded, so that a resume asks the agent again rather than replaying it.
func (s *stepRun) checkNextSkill(h agentHandoff) error {
	if blank(h.NextSkill) {
		return nil
	}
	if err := s.nextSkillProblem(*h.NextSkill); err != nil {
		return fmt.Errorf("%w: %w", ErrAgentHandoff, err)
	}
	return nil
}

// applyHandoff writes the handoff block to state.yaml as the update_state
// tool would, and sets the step's next skill.
func (s *stepRun) applyHandoff(h agentHandoff) error {
	if h.NextSkill != nil {
		v := strings.TrimSpace(*h.NextSkill)
		h.NextSkill = &v
		if v == "" {
			// An empty next_skill in a block sets nothing: the agent's own
			// edit of state.yaml, or else the skill's default, applies.
			h.NextSkill = nil
		}
	}
	err := state.Update(s.r.statePath(), func(f *state.File) error {
		if err := f.SetHandoff(state.HandoffUpdate{
			NextSkill:       h.NextSkill,
			OpenDecisions:   h.OpenDecisions,
			RequiredReading: h.RequiredReading,
			Context:         h.Context,
		}); err != nil {
			return err
		}
		// A step answered from its journal applies its block again; a
		// decision already recorded is not recorded twice.
		have := f.Handoff().Decisions
	next:
		for _, d := range h.Decisions {
			for _, o := range have {
				if o.Decision == d.Decision && o.Evidence == d.Evidence && o.Skill == s.skillName {
					continue next
				}
			}
			rec := state.Decision{Decision: d.Decision, Evidence: d.Evidence, Skill: s.skillName}
			if err := f.AddDecision(rec); err != nil {
				return err
			}
			have = append(have, rec)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if h.NextSkill != nil && *h.NextSkill != "" {
		v := *h.NextSkill
		s.env.nextSkillSet = &v
	}
	return nil
}
