package mcpserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/baton-dev/baton/internal/writepolicy"
	"github.com/baton-dev/baton/workflow"
)

// The writing tools write only where the work is declared. The deny-list
// (package writepolicy) names what baton knows to be trusted, but the
// files other tools and agents later read as orders are open-ended
// (AGENTS.override.md, .clinerules/, .kiro/steering/...), so ledger_append
// writes only the ledgers the server was given and state_set only its
// state files. The deny-list, the extensions and the content checks stay
// as the second line inside those paths.

// ErrBadDeclaration is matched by New's refusal of a path in
// Config.Ledgers or Config.States (a *DeclarationError).
var ErrBadDeclaration = errors.New("not a path the server can be given")

// DeclarationError is a path in Config.Ledgers or Config.States that the
// server refuses, named by baton mcp's flag for it.
type DeclarationError struct {
	Flag string // "ledger" or "state"
	Err  error
}

func (e *DeclarationError) Error() string { return "mcp --" + e.Flag + ": " + e.Err.Error() }

func (e *DeclarationError) Unwrap() []error { return []error{ErrBadDeclaration, e.Err} }

// declaredKind is one kind of file a writing tool writes.
type declaredKind struct {
	kind string // "ledger" or "state", as confine names it
	tool string // the tool that writes it
	flag string // baton mcp's flag, and the key of baton.yaml
	def  string // the default with nothing declared
}

var (
	ledgerKind = declaredKind{kind: "ledger", tool: "ledger_append", flag: "ledger", def: workflow.DefaultLedger}
	stateKind  = declaredKind{kind: "state", tool: "state_set", flag: "state", def: workflow.DefaultState}
)

func kindOf(kind string) declaredKind {
	if kind == stateKind.kind {
		return stateKind
	}
	return ledgerKind
}

// checkDeclared cleans the paths a server is given for k, refusing one
// that is empty, absolute, out of the root, of the wrong kind of file or
// denied by the write policy by its text.
func checkDeclared(k declaredKind, paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		rel, err := localPath(k.kind, p)
		if err == nil {
			err = checkExt(k.kind, p, rel)
		}
		if err == nil {
			if de := writepolicy.CheckWritePath(rel); de != nil {
				err = fmt.Errorf("%s %q: %w", k.kind, p, de)
			}
		}
		if err != nil {
			return nil, &DeclarationError{Flag: k.flag, Err: err}
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out, nil
}

// allowed is what a server may write of one kind, and why.
type allowed struct {
	paths []string
	// note says where the list comes from when it is the default in
	// place of a baton.yaml that does not parse.
	note string
}

// allowedFor is the list the server was given for k, else the root's
// declaration: its baton.yaml's ledger: or state: (the defaults when the
// file leaves it out), else the default. The workflow is read at each
// call, so an edit of baton.yaml holds without a restart; baton.yaml is
// itself denied to every tool, so no call can change what it declares.
// A baton.yaml that does not parse declares nothing: the default holds,
// as the safe place a host's entry is kept, and a refusal says why.
func (s *Server) allowedFor(k declaredKind) allowed {
	if given := s.declared[k.kind]; len(given) > 0 {
		return allowed{paths: given}
	}
	wf, err := s.rootWorkflow()
	switch {
	case err != nil:
		return allowed{paths: []string{k.def}, note: fmt.Sprintf("the default, since the root's %s is not a valid workflow: %s", workflow.FileName, firstProblem(err))}
	case wf == nil:
		return allowed{paths: []string{k.def}}
	case k == stateKind:
		return allowed{paths: []string{wf.State}}
	default:
		return allowed{paths: []string{wf.Ledger}}
	}
}

// defaultPath is the path a tool of kind uses when a call names none: the
// first declared.
func (s *Server) defaultPath(kind string) string { return s.allowedFor(kindOf(kind)).paths[0] }

// rootWorkflow parses the root's baton.yaml; nil when there is none.
func (s *Server) rootWorkflow() (*workflow.Workflow, error) {
	fi, err := s.root.Stat(workflow.FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Only a regular file is opened: a FIFO would hold the call.
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", workflow.FileName)
	}
	f, err := s.root.Open(workflow.FileName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, workflow.MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > workflow.MaxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", workflow.FileName, workflow.MaxFileSize)
	}
	return workflow.Parse(data, workflow.FileName)
}

// firstProblem is the first of a workflow's errors, on one line.
func firstProblem(err error) string {
	var es workflow.Errors
	if errors.As(err, &es) && len(es) > 0 {
		err = es[0]
	}
	return joinLines(err.Error())
}

// checkAllowed refuses writing rel (a cleaned, root-relative path) as a
// file of k unless it is one the server may write, in one line that
// names the rule and how to declare the path.
func (s *Server) checkAllowed(k declaredKind, rel string) error {
	a := s.allowedFor(k)
	if slices.Contains(a.paths, rel) {
		return nil
	}
	list := strings.Join(a.paths, ", ")
	if a.note != "" {
		list += ", " + a.note
	}
	what := "a ledger"
	if k == stateKind {
		what = "a state file"
	}
	return fmt.Errorf("%s: %s is not %s this server may write (allowed: %s); start baton mcp with --%s %s or name it as %s: in %s",
		k.tool, shown(rel), what, list, k.flag, shown(rel), k.flag, workflow.FileName)
}

// shown is p as a refusal names it: quoted when it holds a space, a quote
// or a control character, so that the line stays one line and the path
// can be pasted into a command.
func shown(p string) string {
	if strings.IndexFunc(p, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '"' || r == '\'' }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
