package hostgov

import (
	"os"
	"path/filepath"

	"github.com/baton-dev/baton/internal/writepolicy"
	"github.com/baton-dev/baton/workflow"
)

// declared fills the ledger and state file o leaves out from the project's
// baton.yaml, as baton mcp does, so that the hooks and the MCP server's
// ledger_append name one ledger: the hooks tell the agent where to write,
// and the server writes only what is declared. A baton.yaml that is
// missing or not a valid workflow declares nothing, and withDefaults gives
// specs/ledger.md and specs/state.yaml.
func (o Options) declared(project string) Options {
	if (o.Ledger != "" && o.State != "") || project == "" {
		return o
	}
	path := filepath.Join(project, workflow.FileName)
	// Only a regular file is opened: a FIFO would hold the hook until
	// the host gives up on it.
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return o
	}
	wf, err := workflow.Load(path)
	if err != nil {
		return o
	}
	// Only a markdown ledger and a YAML state file are taken, as baton
	// mcp takes them: a baton.yaml shipped in a cloned repository must not
	// point the hooks' appends at a Makefile or a script.
	if writepolicy.HasExt(wf.Ledger, ".md") {
		o.Ledger = cmpOr(o.Ledger, wf.Ledger)
	}
	if writepolicy.HasExt(wf.State, ".yaml", ".yml") {
		o.State = cmpOr(o.State, wf.State)
	}
	return o
}
