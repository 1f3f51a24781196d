package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/baton-dev/baton/internal/workspace"
	"github.com/baton-dev/baton/skill"
	"github.com/baton-dev/baton/tokens"
)

// Roles of the parts of a step's input, in the order they appear.
const (
	RoleCapsule = "capsule"
	RoleState   = "state"
	RoleFile    = "file"
	RoleLedger  = "ledger"
)

// MaxInputFileBytes bounds each file a step context includes. Bigger files
// are reported, not cut: a skill that needs one should read parts of it
// with its tools.
const MaxInputFileBytes = workspace.DefaultMaxRead

// FileInfo describes one part of a step's input and its size.
type FileInfo struct {
	Path    string // workspace-relative; empty for the ledger entry
	Role    string // RoleCapsule, RoleState, RoleFile or RoleLedger
	Tokens  int
	Missing bool   // not included; Problem says why
	Problem string // e.g. "not found", "refused: outside the workspace"
}

// Context is the whole input of one fresh skill step: nothing else reaches
// the model, in particular no earlier transcript.
type Context struct {
	Skill  string
	System string // the SKILL.md body
	User   string // capsule, state, declared files, ledger entry, delimited
	Files  []FileInfo
	Tokens int // of System plus User
}

// Hash content-addresses the step's input, so a recorded result can be
// reused when the same input comes round again after a crash.
func (c *Context) Hash() string {
	h := sha256.New()
	h.Write([]byte(c.System))
	h.Write([]byte{0})
	h.Write([]byte(c.User))
	return hex.EncodeToString(h.Sum(nil))
}

// Missing returns the parts that could not be included.
func (c *Context) Missing() []FileInfo {
	var out []FileInfo
	for _, f := range c.Files {
		if f.Missing {
			out = append(out, f)
		}
	}
	return out
}

// StepContext assembles the fresh context of a step running sk in ws.
// capsulePath and statePath are workspace-relative; an empty one is left
// out. A missing capsule is an error (the step would not know its work); a
// missing state.yaml is reported as empty, since the first step of a run
// comes before any state. Files the skill declares that are missing, too
// large, binary or outside the workspace are listed to the model and in
// Files, not fatal. ledgerEntry, when not empty, is the ledger entry a
// session is seeded from after a reset.
func StepContext(ws *workspace.Workspace, sk *skill.Skill, capsulePath, statePath, ledgerEntry string) (*Context, error) {
	if ws == nil || sk == nil {
		return nil, errors.New("step context: no workspace or skill")
	}
	patterns, err := FilesToRead(sk.Body)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", sk.Name, err)
	}
	c := &Context{Skill: sk.Name, System: sk.Body}
	var b strings.Builder
	b.WriteString("This is the whole input of your step: the work capsule, the current state, the files your skill declares")
	if ledgerEntry != "" {
		b.WriteString(" and the ledger entry to continue from")
	}
	b.WriteString(". Nothing from earlier steps is included beyond what they record here.\n")

	included := map[string]bool{}
	if capsulePath != "" {
		text, info, err := readPart(ws, capsulePath, RoleCapsule)
		if err != nil {
			return nil, fmt.Errorf("step context for %s: capsule %w", sk.Name, err)
		}
		writeBlock(&b, "capsule", capsulePath, text)
		c.Files = append(c.Files, info)
		included[info.Path] = true
	}
	if statePath != "" {
		text, info, err := readPart(ws, statePath, RoleState)
		if errors.Is(err, fs.ErrNotExist) {
			info = FileInfo{Path: info.Path, Role: RoleState, Missing: true, Problem: "not found; no state yet"}
			text, err = "", nil
		}
		if err != nil {
			return nil, fmt.Errorf("step context for %s: state %w", sk.Name, err)
		}
		if info.Missing {
			fmt.Fprintf(&b, "\n<state path=%q>\n(no state yet: this is the first step)\n</state>\n", statePath)
		} else {
			writeBlock(&b, "state", statePath, text)
		}
		c.Files = append(c.Files, info)
		included[info.Path] = true
	}

	var unavailable []FileInfo
	for _, m := range Expand(ws, patterns) {
		if len(m.Paths) == 0 {
			unavailable = append(unavailable, FileInfo{Path: m.Pattern, Role: RoleFile, Missing: true, Problem: m.Problem})
			continue
		}
		for _, p := range m.Paths {
			if included[p] {
				continue
			}
			included[p] = true
			text, info, err := readPart(ws, p, RoleFile)
			if err != nil {
				info.Missing, info.Problem = true, problem(err)
				unavailable = append(unavailable, info)
				continue
			}
			writeBlock(&b, "file", p, text)
			c.Files = append(c.Files, info)
		}
	}
	if len(unavailable) > 0 {
		b.WriteString("\n<unavailable_files>\n")
		for _, f := range unavailable {
			fmt.Fprintf(&b, "- %s: %s\n", f.Path, f.Problem)
		}
		b.WriteString("</unavailable_files>\n")
		c.Files = append(c.Files, unavailable...)
	}
	if ledgerEntry != "" {
		b.WriteString("\n<ledger_entry>\n")
		b.WriteString(strings.TrimRight(ledgerEntry, "\n"))
		b.WriteString("\n</ledger_entry>\n")
		c.Files = append(c.Files, FileInfo{Role: RoleLedger, Tokens: tokens.Count(ledgerEntry)})
	}
	c.User = b.String()
	c.Tokens = tokens.Count(c.System) + tokens.Count(c.User)
	return c, nil
}

// readPart reads one workspace file for a context. The FileInfo's Path is
// the cleaned relative form, used to avoid including a file twice.
func readPart(ws *workspace.Workspace, rel, role string) (string, FileInfo, error) {
	info := FileInfo{Path: cleanSlash(rel), Role: role}
	text, err := ws.ReadFile(rel, MaxInputFileBytes)
	if err != nil {
		return "", info, err
	}
	info.Tokens = tokens.Count(text)
	return text, info, nil
}

// writeBlock writes one delimited part. The path travels with the content
// so the model can cite it as evidence (file:line).
func writeBlock(b *strings.Builder, tag, path, text string) {
	fmt.Fprintf(b, "\n<%s path=%q>\n", tag, path)
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "</%s>\n", tag)
}
