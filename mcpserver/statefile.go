package mcpserver

import (
	"fmt"
	"path"
	"strings"

	"github.com/baton-dev/baton/internal/writepolicy"
	"github.com/baton-dev/baton/internal/yamlsafe"
	"github.com/baton-dev/baton/state"
	"github.com/baton-dev/baton/workflow"
)

// state_set edits a file that a later step trusts as its cockpit, so it
// edits nothing else. A state file is recognised by three things: it is a
// .yaml or .yml file the write policy allows (confine), its name says it
// is one (state.yaml, or a name ending in -state, _state or .state before
// the extension) or the root's baton.yaml names it as its state:, and its
// content is not a workflow (no phases or agent_cmd at the top). Any other
// YAML file in the root (a compose file, a CI or tool configuration) may
// be read with state_get but never set.

// workflowKeys are top-level keys only a workflow file has: a file with
// one is what baton run executes, not what it records.
var workflowKeys = []string{"phases", "agent_cmd"}

// checkStateName refuses a state_set on a file whose name does not say it
// is a state file, unless the root's workflow names it.
func (s *Server) checkStateName(name string) error {
	rel, err := localPath("state", name)
	if err != nil {
		return err
	}
	// A denied file is refused as such first: the policy's reason is the
	// one a host should see for baton.yaml or a CI file.
	if err := s.checkPolicy("state", name, rel, true); err != nil {
		return err
	}
	base := path.Base(writepolicy.Key(rel))
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
	if stem == "state" || strings.HasSuffix(stem, "-state") || strings.HasSuffix(stem, "_state") || strings.HasSuffix(stem, ".state") {
		return nil
	}
	if wf := s.workflowState(); wf != "" && writepolicy.Key(wf) == writepolicy.Key(rel) {
		return nil
	}
	return fmt.Errorf("state %q: not a state file: state_set edits state.yaml (or a file named like *-state.yaml, or the state: the root's %s names), never another YAML file", name, workflow.FileName)
}

// workflowState is the state: path the root's baton.yaml names, or "".
func (s *Server) workflowState() string {
	data, err := s.root.ReadFile(workflow.FileName)
	if err != nil || len(data) > workflow.MaxFileSize {
		return ""
	}
	var wf struct {
		State string `yaml:"state"`
	}
	if yamlsafe.Unmarshal(data, &wf) != nil {
		return ""
	}
	return wf.State
}

// checkNotWorkflow refuses a state file whose content is a workflow's.
func checkNotWorkflow(name string, f *state.File) error {
	for _, k := range workflowKeys {
		if _, ok := f.Get(k); ok {
			return fmt.Errorf("state %q: not a state file: it has the workflow key %s at the top", name, k)
		}
	}
	return nil
}
