package mcpserver

import (
	"fmt"

	"github.com/baton-dev/baton/state"
)

// state_set edits a file that a later step trusts as its cockpit, so it
// edits nothing else. It writes only a state file the server was given or
// the root's baton.yaml names (declared.go), which the write policy allows
// and which is a .yaml or .yml file (confine), and whose content is not a
// workflow (no phases or agent_cmd at the top). Any other YAML file in the
// root (a compose file, a CI or tool configuration) may be read with
// state_get but never set.

// workflowKeys are top-level keys only a workflow file has: a file with
// one is what baton run executes, not what it records.
var workflowKeys = []string{"phases", "agent_cmd"}

// checkNotWorkflow refuses a state file whose content is a workflow's.
func checkNotWorkflow(name string, f *state.File) error {
	for _, k := range workflowKeys {
		if _, ok := f.Get(k); ok {
			return fmt.Errorf("state %q: not a state file: it has the workflow key %s at the top", name, k)
		}
	}
	return nil
}
