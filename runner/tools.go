package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/state"
)

// Tool names, as the model sees them.
const (
	toolReadFile       = "read_file"
	toolListFiles      = "list_files"
	toolSearch         = "search"
	toolWriteFile      = "write_file"
	toolUpdateState    = "update_state"
	toolDelegateTask   = "delegate_task"
	toolDispatchAgents = "dispatch_agents"
	toolFinish         = "finish"
	toolWriteLedger    = "write_ledger"
)

func obj(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var (
	str     = map[string]any{"type": "string"}
	strList = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	brief   = obj(map[string]any{
		"goal":            map[string]any{"type": "string", "description": "what the sub-agent must find out or produce"},
		"in_scope":        map[string]any{"type": "string", "description": "files, questions or areas it may look at"},
		"out_of_bounds":   map[string]any{"type": "string", "description": "what it must not touch or decide"},
		"verify":          map[string]any{"type": "string", "description": "how it can check its answer"},
		"prior_decisions": map[string]any{"type": "string", "description": "decisions already taken that it must respect"},
	}, "goal")
)

// readTools are the tools every agent, sub-agents included, may use: they
// only look at the workspace.
func readTools() []llm.Tool {
	return []llm.Tool{
		{Name: toolReadFile, Description: "Read a text file of the workspace. Paths are relative to the workspace root. A result too large for the context is cut and kept whole in a spill file; read on with offset and limit, which count lines.", Schema: obj(map[string]any{
			"path":   str,
			"offset": map[string]any{"type": "integer", "description": "the first line to return, counting from 1 (default 1)"},
			"limit":  map[string]any{"type": "integer", "description": "how many lines to return from offset (default: to the end of the file)"},
		}, "path")},
		{Name: toolListFiles, Description: "List workspace files matching a glob pattern (** matches any depth).", Schema: obj(map[string]any{"pattern": str}, "pattern")},
		{Name: toolSearch, Description: "Search the workspace's text files for a string (or a Go regular expression with regexp=true); optional glob limits the files.", Schema: obj(map[string]any{"query": str, "glob": str, "regexp": map[string]any{"type": "boolean"}}, "query")},
	}
}

// stepTools are the tools of a skill step.
func stepTools() []llm.Tool {
	return append(readTools(),
		llm.Tool{Name: toolWriteFile, Description: "Write a text file of the workspace, replacing it whole.", Schema: obj(map[string]any{"path": str, "content": str}, "path", "content")},
		llm.Tool{Name: toolUpdateState, Description: "Update the handoff in state.yaml for the next step: next_skill (a skill name, or done), open_decisions, required_reading, context; and record a decision with its evidence pointer (file:line, a command or an artifact).", Schema: obj(map[string]any{
			"next_skill":       str,
			"open_decisions":   strList,
			"required_reading": strList,
			"context":          str,
			"decision":         obj(map[string]any{"decision": str, "evidence": str}, "decision", "evidence"),
		})},
		llm.Tool{Name: toolDelegateTask, Description: "Give one task to a sub-agent that starts in a fresh context with only your brief and read access to the workspace. Its answer is a bounded summary.", Schema: brief},
		llm.Tool{Name: toolDispatchAgents, Description: "Give several disjoint tasks to sub-agents that run in parallel, each in a fresh context with only its brief.", Schema: obj(map[string]any{"tasks": map[string]any{"type": "array", "items": brief}}, "tasks")},
		llm.Tool{Name: toolFinish, Description: "End this step with a short summary of what it did and left for the next step.", Schema: obj(map[string]any{"summary": str}, "summary")},
	)
}

// ledgerTool is offered only when the context budget asks for a ledger
// entry before a reset.
func ledgerTool() llm.Tool {
	return llm.Tool{Name: toolWriteLedger, Description: "Write the ledger entry the next session will start from. Every field is required; each done item needs an evidence pointer.", Schema: obj(map[string]any{
		"frozen_decisions": strList,
		"done_so_far":      map[string]any{"type": "array", "items": obj(map[string]any{"text": str, "evidence": str}, "text", "evidence")},
		"artifacts":        strList,
		"current_phase":    str,
		"next_step":        str,
		"open_tickets":     strList,
	}, "frozen_decisions", "done_so_far", "artifacts", "current_phase", "next_step", "open_tickets")}
}

// toolEnv is what tool calls act on.
type toolEnv struct {
	// allowed are the tools this agent may call; any other call is an error
	// result, never executed. refusal says why, for the model.
	allowed   map[string]bool
	refusal   string
	ws        *workspace.Workspace
	statePath string // absolute
	skill     string
	// nextSkillSet is the next_skill the agent set in this step, if any.
	nextSkillSet *string
	written      []string // files written in this step
	// spill is the run's spill folder, which read_file may read.
	spill     *spillView
	subagents func(ctx context.Context, briefs []taskBrief) []string

	// checkNext refuses a next_skill the run could not go to (unknown, or
	// an earlier phase's); nil accepts any.
	checkNext func(name string) error
	// agentState is what an external agent wrote to state.yaml itself,
	// which the step's bookkeeping keeps (agentstate.go).
	agentState *stateEdits
}

func toolSet(tools []llm.Tool) map[string]bool {
	m := make(map[string]bool, len(tools))
	for _, t := range tools {
		m[t.Name] = true
	}
	return m
}

// newStepEnv is the environment of a skill step: every step tool.
func newStepEnv(ws *workspace.Workspace, statePath, skill string, subagents func(context.Context, []taskBrief) []string) *toolEnv {
	return &toolEnv{allowed: toolSet(stepTools()), ws: ws, statePath: statePath, skill: skill, subagents: subagents}
}

// newSubagentEnv is the environment of a sub-agent, read-only by
// construction: it has no state file, no way to start sub-agents, and a
// write or any other call is refused before it is decoded.
func newSubagentEnv(ws *workspace.Workspace) *toolEnv {
	return &toolEnv{allowed: toolSet(readTools()), refusal: "is not available to a sub-agent: sub-agents are read-only", ws: ws}
}

type taskBrief struct {
	Goal           string `json:"goal"`
	InScope        string `json:"in_scope"`
	OutOfBounds    string `json:"out_of_bounds"`
	Verify         string `json:"verify"`
	PriorDecisions string `json:"prior_decisions"`
}

// toolOutcome is the result of one call, and whether it ended the step.
type toolOutcome struct {
	result   llm.ToolResult
	finished bool
	summary  string
}

// run executes one call. Its result is whole: the session bounds a round's
// results by what its budget leaves, spilling what does not fit
// (stepRun.fitResults).
func (e *toolEnv) run(ctx context.Context, c llm.ToolCall) toolOutcome {
	out, err := e.dispatch(ctx, c)
	if err != nil {
		return toolOutcome{result: c.ErrorResult(err.Error())}
	}
	return out
}

func (e *toolEnv) dispatch(ctx context.Context, c llm.ToolCall) (toolOutcome, error) {
	ok := func(s string) (toolOutcome, error) { return toolOutcome{result: c.Result(s)}, nil }
	if !e.allowed[c.Name] {
		if e.refusal != "" {
			return toolOutcome{}, errors.New(c.Name + " " + e.refusal)
		}
		return toolOutcome{}, fmt.Errorf("unknown tool %q", c.Name)
	}
	switch c.Name {
	case toolReadFile:
		var in struct {
			Path          string
			Offset, Limit int
		}
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		text, err := e.readFile(in.Path, in.Offset, in.Limit)
		if err != nil {
			return toolOutcome{}, err
		}
		return ok(text)
	case toolListFiles:
		var in struct{ Pattern string }
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		files, err := e.ws.List(in.Pattern)
		if err != nil {
			return toolOutcome{}, err
		}
		if len(files) == 0 {
			return ok("no files match")
		}
		return ok(strings.Join(files, "\n"))
	case toolSearch:
		var in struct {
			Query  string
			Glob   string
			Regexp bool
		}
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		hits, err := e.ws.Search(in.Query, workspace.SearchOptions{Glob: in.Glob, Regexp: in.Regexp})
		var b strings.Builder
		for _, h := range hits {
			fmt.Fprintf(&b, "%s:%d: %s\n", h.Path, h.Line, h.Text)
		}
		if err != nil && len(hits) == 0 {
			return toolOutcome{}, err
		}
		if err != nil {
			fmt.Fprintf(&b, "(%v)\n", err)
		}
		if b.Len() == 0 {
			return ok("no matches")
		}
		return ok(b.String())
	case toolWriteFile:
		var in struct{ Path, Content string }
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		// A file already holding the content is left alone: a call run
		// again on resume (replay.go) does not write it twice. A path baton
		// would refuse is refused even then.
		if err := e.ws.CheckWrite(in.Path); err != nil {
			return toolOutcome{}, e.stateWriteHint(in.Path, err)
		}
		if !holds(e.ws, in.Path, in.Content) {
			if err := e.ws.WriteFile(in.Path, []byte(in.Content)); err != nil {
				return toolOutcome{}, e.stateWriteHint(in.Path, err)
			}
		}
		e.written = append(e.written, in.Path)
		return ok(fmt.Sprintf("wrote %s (%d bytes)", in.Path, len(in.Content)))
	case toolUpdateState:
		return e.updateState(c)
	case toolDelegateTask:
		var in taskBrief
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		if strings.TrimSpace(in.Goal) == "" {
			return toolOutcome{}, errors.New("the brief needs a goal")
		}
		if e.subagents == nil {
			return toolOutcome{}, errors.New("delegate_task is not available here")
		}
		return ok(e.subagents(ctx, []taskBrief{in})[0])
	case toolDispatchAgents:
		var in struct{ Tasks []taskBrief }
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		if len(in.Tasks) == 0 {
			return toolOutcome{}, errors.New("dispatch_agents needs at least one task")
		}
		if e.subagents == nil {
			return toolOutcome{}, errors.New("dispatch_agents is not available here")
		}
		answers := e.subagents(ctx, in.Tasks)
		var b strings.Builder
		for i, a := range answers {
			fmt.Fprintf(&b, "## Task %d: %s\n%s\n\n", i+1, in.Tasks[i].Goal, strings.TrimSpace(a))
		}
		return ok(b.String())
	case toolFinish:
		var in struct{ Summary string }
		if err := c.Decode(&in); err != nil {
			return toolOutcome{}, err
		}
		return toolOutcome{result: c.Result("step finished"), finished: true, summary: in.Summary}, nil
	}
	return toolOutcome{}, fmt.Errorf("unknown tool %q", c.Name)
}

// readFile reads a workspace file, or a file of the run's spill folder,
// whole or the lines offset and limit name.
func (e *toolEnv) readFile(p string, offset, limit int) (string, error) {
	paged := offset != 0 || limit != 0
	var text string
	var err error
	switch sub, inSpill := e.spill.inside(p); {
	case inSpill:
		text, err = e.spill.read(sub)
	case paged:
		text, err = e.ws.ReadFile(p, maxPagedRead)
	default:
		text, err = e.ws.ReadFile(p, 0)
		if errors.Is(err, workspace.ErrTooLarge) {
			err = fmt.Errorf("%w; read it in pages with offset and limit (lines)", err)
		}
	}
	if err != nil || !paged {
		return text, err
	}
	return pageLines(text, offset, limit)
}

func (e *toolEnv) updateState(c llm.ToolCall) (toolOutcome, error) {
	if e.statePath == "" {
		// state.Update("") would lock and write relative to the process's
		// working directory.
		return toolOutcome{}, errors.New("update_state is not available here")
	}
	var in struct {
		NextSkill       *string  `json:"next_skill"`
		OpenDecisions   []string `json:"open_decisions"`
		RequiredReading []string `json:"required_reading"`
		Context         *string  `json:"context"`
		Decision        *struct {
			Decision string `json:"decision"`
			Evidence string `json:"evidence"`
		} `json:"decision"`
	}
	if err := c.Decode(&in); err != nil {
		return toolOutcome{}, err
	}
	if in.Decision != nil && (strings.TrimSpace(in.Decision.Decision) == "" || strings.TrimSpace(in.Decision.Evidence) == "") {
		return toolOutcome{}, errors.New("a decision needs its text and an evidence pointer (file:line, a command or an artifact)")
	}
	// A next step the run cannot take is refused before anything is
	// written, so the model can correct the call; accepted, it would fail
	// the step after its work was done, and a resume would replay it.
	if in.NextSkill != nil && e.checkNext != nil {
		if err := e.checkNext(*in.NextSkill); err != nil {
			return toolOutcome{}, fmt.Errorf("%w; nothing was changed", err)
		}
	}
	err := state.Update(e.statePath, func(f *state.File) error {
		if err := f.SetHandoff(state.HandoffUpdate{
			NextSkill:       in.NextSkill,
			OpenDecisions:   in.OpenDecisions,
			RequiredReading: in.RequiredReading,
			Context:         in.Context,
		}); err != nil {
			return err
		}
		if in.Decision == nil {
			return nil
		}
		// A resumed step replays its tool calls; a decision already
		// recorded is not recorded twice.
		for _, d := range f.Handoff().Decisions {
			if d.Decision == in.Decision.Decision && d.Evidence == in.Decision.Evidence && d.Skill == e.skill {
				return nil
			}
		}
		return f.AddDecision(state.Decision{Decision: in.Decision.Decision, Evidence: in.Decision.Evidence, Skill: e.skill})
	})
	if err != nil {
		return toolOutcome{}, err
	}
	if in.NextSkill != nil {
		v := *in.NextSkill
		e.nextSkillSet = &v
	}
	return toolOutcome{result: c.Result("state updated")}, nil
}

func decodeLedger(c llm.ToolCall) (ledgerInput, error) {
	var in ledgerInput
	err := c.Decode(&in)
	return in, err
}

type ledgerInput struct {
	FrozenDecisions []string `json:"frozen_decisions"`
	DoneSoFar       []struct {
		Text     string `json:"text"`
		Evidence string `json:"evidence"`
	} `json:"done_so_far"`
	Artifacts    []string `json:"artifacts"`
	CurrentPhase string   `json:"current_phase"`
	NextStep     string   `json:"next_step"`
	OpenTickets  []string `json:"open_tickets"`
}
