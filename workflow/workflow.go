// Package workflow reads baton.yaml, the file that describes a multi-phase
// skill workflow for `baton run`, and assembles the fresh context each skill
// step starts from.
//
// # The workflow file
//
// baton.yaml is a YAML mapping with these keys:
//
//	name: release-notes          # required; shown in logs and run records
//	window_tokens: 200000        # context window to budget against; 0 or absent
//	                             # means "ask the model" (tokens.Window), decided
//	                             # by the runner
//	threshold_fraction: 0.65     # reset when the projected context reaches this
//	                             # fraction of the window; must lie in (0,1)
//	state: specs/state.yaml      # default specs/state.yaml
//	ledger: specs/ledger.md      # default specs/ledger.md
//	capsule: capsule.md          # required: the work capsule every step receives
//	skills: [skills]             # folders of skills, relative to this file; a
//	                             # single string is accepted too
//	subagent_return_tokens: 1500 # bound on a sub-agent's return; default 1500
//	flow: epic                   # state.yaml keeps progress under <flow>_cycle;
//	                             # default: name, with - and spaces as _
//	agent_cmd: claude -p         # optional: run every step as a process of this
//	                             # command-line agent (sh -c); --agent-cmd wins
//	max_steps: 100               # most skill steps one run may take, counted
//	                             # across resumes; default 100
//	protect: ["secrets/**"]      # optional: doublestar globs of workspace files
//	                             # a model's tools may not touch
//	writes: [out/**, docs/drafts/**] # doublestar globs of the paths a step's
//	                             # write_file may write; default [out/**]
//	phases:                      # ordered; at least one; names unique
//	  - name: analysis
//	    skill: analyse-request   # the skill the phase starts with
//	    expect_tokens: 8000      # optional: what the phase is expected to add
//	                             # to the context, for the budget projection
//
// state, ledger and capsule are paths inside the workspace, which is the
// folder holding baton.yaml; they may not be absolute or climb out with "..".
// Unknown keys are reported as warnings, not errors, so a file written for
// a newer baton still runs. Every error names the file and the line.
//
// # Phases and chaining
//
// The phase list is the map from phase to boundary, fixed when a run starts.
// Inside a phase, skills chain through handoff.next_skill in state.yaml, or,
// when a step leaves it empty, through the default next step its SKILL.md
// declares in metadata under NextSkillKey:
//
//	metadata:
//	  next-skill: implement-change
//
// Next decides what a next-skill value means: a skill that starts a later
// phase ends the current phase there (a boundary, where the budget makes its
// reset evaluation), "done" or an empty value after the last phase ends the
// run, and any other skill continues the current phase.
//
// # Declaring the files a step reads
//
// A skill body lists the workspace files its step needs in a block:
//
//	<files_to_read>
//	- docs/requirements.md — what the issue asks for
//	- `app/**/*.py`
//	specs/plan.md
//	# a comment line
//	</files_to_read>
//
// One path or glob per line ("**" crosses folders); bullets, numbering,
// backticks or quotes around the path, and a trailing description after
// " — ", " -- " or " #" are allowed; blank lines and lines starting with "#"
// or "//" are skipped. Paths are relative to the workspace and confined to
// it. A file that is missing, too large, binary or outside the workspace is
// reported to the step, not fatal. An unclosed block is an error, since
// silently reading nothing would hide the mistake.
//
// # Fresh step context
//
// StepContext builds the whole input of one skill step: the SKILL.md body as
// the system prompt, and a user message holding, in this order, the capsule,
// the current state.yaml, the declared files (declaration order, each glob's
// matches sorted), a list of declared files that could not be included and,
// after a reset, the ledger entry the session is seeded from. Each part is
// wrapped in a tag naming its path, such as <file path="docs/a.md">, so the
// model can cite it. Nothing from an earlier transcript can enter it. The
// output is deterministic, so Hash can content-address a step's input for
// resume.
package workflow

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/baton-dev/baton/internal/yamlsafe"
	"github.com/baton-dev/baton/skill"
)

// Defaults for keys a workflow file may leave out.
const (
	DefaultThresholdFraction    = 0.65
	DefaultState                = "specs/state.yaml"
	DefaultLedger               = "specs/ledger.md"
	DefaultSubagentReturnTokens = 1500
	// DefaultMaxSteps bounds the steps of one run: a skill that keeps
	// naming itself as its next step stops there instead of paying forever.
	DefaultMaxSteps = 100
	// FileName is the workflow file `baton run` looks for.
	FileName = "baton.yaml"
	// MaxFileSize bounds how much of a workflow file is read; real ones are
	// a few hundred bytes.
	MaxFileSize = 1 << 20
)

// ErrInvalid is wrapped by every error that reports a malformed workflow
// file or a workflow whose skills do not check out.
var ErrInvalid = errors.New("invalid workflow")

// Workflow is a parsed baton.yaml with defaults filled in.
type Workflow struct {
	Name                 string
	WindowTokens         int // 0: the runner takes the model's window
	ThresholdFraction    float64
	State                string // workspace-relative, slash-separated
	Ledger               string
	Capsule              string
	Skills               []string // as written, relative to Dir
	SubagentReturnTokens int
	// Flow names the cycle in state.yaml: progress is kept under
	// <Flow>_cycle.
	Flow   string
	Phases []Phase
	// AgentCmd is the external agent command `baton run` uses when
	// --agent-cmd is not given; "" runs steps on a provider.
	AgentCmd string
	// MaxSteps bounds the skill steps of one run, across resumes.
	MaxSteps int
	// Protect holds doublestar patterns (workspace-relative) of files a
	// model's tools may not touch, on top of the ones baton always protects.
	Protect []string
	// Writes holds the doublestar patterns (workspace-relative) of every
	// path a step's write_file may write; DefaultWrites when the file
	// declares none. Inside them the protected paths stay refused.
	Writes []string

	// Path is the file the workflow was read from, Dir its folder (the
	// workspace root and the base of Skills).
	Path string
	Dir  string
	// Warnings are one-line, positioned notes about things baton ignored.
	Warnings []string
}

// Phase is one entry of the phase list.
type Phase struct {
	Name         string
	Skill        string
	ExpectTokens int
	Line         int // in the workflow file, for messages
}

// Error is one problem found in a workflow file, positioned by line (0 when
// the problem is not tied to one). It matches ErrInvalid with errors.Is.
type Error struct {
	Path  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Errors is every problem found at once, printed on one line so a user fixes
// them in one pass; errors.As still reaches each *Error.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap exposes each error to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Load reads and parses the workflow file at path.
func Load(path string) (*Workflow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("workflow: read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("is larger than %d bytes", MaxFileSize)}
	}
	return Parse(data, path)
}

// Parse parses a workflow file's contents; path is used in messages and to
// set Path and Dir. A file with any error-level problem yields Errors.
func Parse(data []byte, path string) (*Workflow, error) {
	p := &parseState{path: path}
	w := p.parse(data)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return w, nil
}

type parseState struct {
	path     string
	errs     Errors
	warnings []string
}

func (p *parseState) errorf(line int, field, format string, a ...any) {
	p.errs = append(p.errs, &Error{Path: p.path, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)})
}

func (p *parseState) warnf(line int, field, format string, a ...any) {
	p.warnings = append(p.warnings, (&Error{Path: p.path, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}).Error())
}

func (p *parseState) parse(data []byte) *Workflow {
	w := &Workflow{
		ThresholdFraction:    DefaultThresholdFraction,
		State:                DefaultState,
		Ledger:               DefaultLedger,
		SubagentReturnTokens: DefaultSubagentReturnTokens,
		MaxSteps:             DefaultMaxSteps,
		Path:                 p.path,
		Dir:                  filepath.Dir(p.path),
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	if strings.TrimSpace(text) == "" {
		p.errorf(0, "", "is empty")
		return nil
	}
	// yamlsafe bounds the parse (size, nesting, alias expansion) and turns a
	// panic in the YAML library into an error.
	file, err := yamlsafe.Limits{MaxBytes: MaxFileSize}.Parse([]byte(text), 0)
	if err != nil {
		line, msg := yamlMessage(err)
		p.errorf(line, "", "%s", msg)
		return nil
	}
	var docs []*ast.DocumentNode
	for _, d := range file.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d)
		}
	}
	if len(docs) != 1 {
		p.errorf(0, "", "want one YAML document, found %d", len(docs))
		return nil
	}
	root, ok := docs[0].Body.(*ast.MappingNode)
	if !ok {
		p.errorf(line(docs[0].Body), "", "must be a mapping of keys such as name and phases, not a %s", nodeKind(docs[0].Body))
		return nil
	}
	seen := map[string]bool{}
	for _, mv := range root.Values {
		key, kl := mv.Key.GetToken().Value, line(mv.Key)
		if seen[key] {
			p.errorf(kl, key, "appears twice")
			continue
		}
		seen[key] = true
		switch key {
		case "name":
			w.Name = p.str(mv.Value, key)
		case "window_tokens":
			w.WindowTokens = p.count(mv.Value, key, true)
		case "threshold_fraction":
			v, ok := p.number(mv.Value, key)
			if ok && (v <= 0 || v >= 1 || math.IsNaN(v)) {
				p.errorf(line(mv.Value), key, "must lie between 0 and 1 (exclusive), got %v", v)
			} else if ok {
				w.ThresholdFraction = v
			}
		case "state":
			w.State = p.relPath(mv.Value, key, w.State)
		case "ledger":
			w.Ledger = p.relPath(mv.Value, key, w.Ledger)
		case "capsule":
			w.Capsule = p.relPath(mv.Value, key, "")
		case "skills":
			w.Skills = p.strList(mv.Value, key)
		case "subagent_return_tokens":
			if v := p.count(mv.Value, key, false); v > 0 {
				w.SubagentReturnTokens = v
			}
		case "flow":
			w.Flow = p.str(mv.Value, key)
		case "phases":
			w.Phases = p.phases(mv.Value)
		case "agent_cmd":
			w.AgentCmd = p.str(mv.Value, key)
		case "max_steps":
			if v := p.count(mv.Value, key, false); v > 0 {
				w.MaxSteps = v
			}
		case "protect":
			w.Protect = p.patterns(mv.Value, key)
		case "writes":
			w.Writes = p.writes(mv.Value, key)
		default:
			p.warnf(kl, key, "unknown key; baton ignores it")
		}
	}
	if !seen["writes"] {
		w.Writes = append([]string(nil), DefaultWrites...)
	}
	if !seen["name"] {
		p.errorf(0, "name", "is required")
	}
	if w.Flow == "" {
		w.Flow = strings.NewReplacer("-", "_", " ", "_").Replace(w.Name)
	}
	if !seen["capsule"] {
		p.errorf(0, "capsule", "is required: it names the work capsule every step receives")
	}
	if !seen["phases"] {
		p.errorf(0, "phases", "is required: list at least one phase with a name and a skill")
	}
	for _, pair := range [][2]string{{"state", w.State}, {"ledger", w.Ledger}, {"capsule", w.Capsule}} {
		for _, other := range [][2]string{{"state", w.State}, {"ledger", w.Ledger}, {"capsule", w.Capsule}} {
			if pair[0] < other[0] && pair[1] != "" && pair[1] == other[1] {
				p.errorf(0, other[0], "is the same file as %s (%s)", pair[0], pair[1])
			}
		}
	}
	w.Warnings = p.warnings
	return w
}

// SkillDirs returns the skill folders with relative ones taken from Dir.
func (w *Workflow) SkillDirs() []string {
	out := make([]string, len(w.Skills))
	for i, d := range w.Skills {
		if filepath.IsAbs(d) {
			out[i] = d
		} else {
			out[i] = filepath.Join(w.Dir, filepath.FromSlash(d))
		}
	}
	return out
}

// Library returns baton's built-in skills plus the workflow's skill
// folders; a custom skill replaces a built-in of the same name. Problems
// are the warnings and errors of individual SKILL.md files.
func (w *Workflow) Library() (*skill.Library, []skill.Problem, error) {
	lib := skill.Builtins()
	var all []skill.Problem
	for _, dir := range w.SkillDirs() {
		ps, err := lib.AddDir(dir)
		all = append(all, ps...)
		if err != nil {
			return nil, all, fmt.Errorf("workflow %s: skills: %w", w.Path, err)
		}
	}
	return lib, all, nil
}

// Validate checks the workflow against a skill library: every phase's
// skill, and every default next step a phase's skill declares, must exist.
func (w *Workflow) Validate(lib *skill.Library) error {
	var errs Errors
	for i, ph := range w.Phases {
		sk, ok := lib.Get(ph.Skill)
		if !ok {
			errs = append(errs, &Error{Path: w.Path, Line: ph.Line, Field: fmt.Sprintf("phases[%d].skill", i),
				Msg: fmt.Sprintf("no skill named %q (have: %s)", ph.Skill, strings.Join(lib.Names(), ", "))})
			continue
		}
		if next := DefaultNext(sk); next != "" && !isDone(next) {
			if _, ok := lib.Get(next); !ok {
				errs = append(errs, &Error{Path: w.Path, Line: ph.Line, Field: fmt.Sprintf("phases[%d].skill", i),
					Msg: fmt.Sprintf("skill %q declares next step %q, which is not a known skill", sk.Name, next)})
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
