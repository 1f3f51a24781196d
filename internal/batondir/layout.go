package batondir

import "path/filepath"

// The names inside the .baton folder. They are part of what users and their
// tools read (docs/run.md describes them), so they change only with care.
const (
	RunsName     = "runs"         // workflow runs' folders and ask's records
	SessionsName = "sessions"     // host sessions the hooks govern
	HooksName    = "hooks"        // state of the installed hooks
	MCPName      = "mcp"          // MCP results too large to send
	CurrentName  = "current.json" // the run a later resume continues
	RunLockName  = "run.lock"     // the workspace-wide run lock
	RunLogName   = "events.jsonl" // a run's or a session's log
	StepsName    = "steps"        // a run's step journals
	SpillName    = "spill"        // a run's spilled tool results
)

// Layout is the .baton folder of one workspace: every path baton keeps there
// comes from its methods, so that the folder is spelled in one place. A
// Layout with an empty Root gives paths relative to the workspace, the form
// run logs record and os.Root opens.
type Layout struct {
	// Root is the workspace folder that holds .baton.
	Root string
}

// At returns the layout of the workspace at root.
func At(root string) Layout { return Layout{Root: root} }

// Rel is the layout relative to the workspace.
var Rel = Layout{}

func (l Layout) join(elem ...string) string {
	return filepath.Join(append([]string{l.Root, Name}, elem...)...)
}

// Dir is the .baton folder itself.
func (l Layout) Dir() string { return l.join() }

// Runs is the folder of workflow runs and of ask's run records.
func (l Layout) Runs() string { return l.join(RunsName) }

// Run is the folder of the workflow run id. The caller checks id first
// (runid.Check): an id is never trusted to stay inside the folder.
func (l Layout) Run(id string) string { return l.join(RunsName, id) }

// RunLog is the run log of the workflow run id.
func (l Layout) RunLog(id string) string { return l.join(RunsName, id, RunLogName) }

// Steps is the folder of the step journals of run id.
func (l Layout) Steps(id string) string { return l.join(RunsName, id, StepsName) }

// Spill is the folder of the spilled tool results of run id.
func (l Layout) Spill(id string) string { return l.join(RunsName, id, SpillName) }

// Record is the run record `baton ask` saves for run id.
func (l Layout) Record(id string) string { return l.join(RunsName, id+".json") }

// Current is current.json, the run a later `baton resume` continues.
func (l Layout) Current() string { return l.join(CurrentName) }

// RunLock is the workspace-wide run lock.
func (l Layout) RunLock() string { return l.join(RunLockName) }

// Sessions is the folder of the host sessions baton's hooks govern.
func (l Layout) Sessions() string { return l.join(SessionsName) }

// Session is the folder of host session id.
func (l Layout) Session(id string) string { return l.join(SessionsName, id) }

// SessionLog is the log of host session id.
func (l Layout) SessionLog(id string) string { return l.join(SessionsName, id, RunLogName) }

// Hooks is the folder of the installed hooks' state.
func (l Layout) Hooks() string { return l.join(HooksName) }

// MCPSpill is the folder of MCP results too large to send.
func (l Layout) MCPSpill() string { return l.join(MCPName) }

// IsRuns reports whether p is a workspace's .baton/runs folder.
func IsRuns(p string) bool { return isIn(p, RunsName) }

// IsSessions reports whether p is a workspace's .baton/sessions folder.
func IsSessions(p string) bool { return isIn(p, SessionsName) }

func isIn(p, name string) bool {
	p = filepath.Clean(p)
	return filepath.Base(p) == name && filepath.Base(filepath.Dir(p)) == Name
}

// WorkspaceOfRuns returns the workspace whose .baton/runs folder is runs;
// ok is false when runs is not such a folder (a --runs-dir elsewhere).
func WorkspaceOfRuns(runs string) (ws string, ok bool) {
	if !IsRuns(runs) {
		return "", false
	}
	return filepath.Dir(filepath.Dir(filepath.Clean(runs))), true
}
