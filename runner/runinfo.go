package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/runid"
	"github.com/baton-dev/baton/workflow"
)

// ErrBadRunID is wrapped when a run id is not one baton could have made.
var ErrBadRunID = runid.ErrBad

// CheckRunID returns an error wrapping ErrBadRunID unless id is made of
// letters, digits, "-" and "_" (at most 64): a run id that could name a path
// outside .baton/runs/ is never joined into one.
func CheckRunID(id string) error { return runid.Check(id) }

// newID names a new run as baton ask names its runs (package runid).
func newID(t time.Time) string { return runid.New(t) }

// RunInfo is .baton/current.json: the run a later `baton resume` continues.
// Anything under .baton/ may have been written by an external agent, so
// nothing in it is trusted to decide what runs: the id is checked before it
// becomes a path, and AgentCmd is only compared with the command a resume
// was given.
type RunInfo struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	Status   string `json:"status"` // "running" or "done"
	// AgentCmd is the external agent the run was started with, so that a
	// resume can tell the user when it would run a different one.
	AgentCmd string `json:"agent_cmd,omitempty"`
	// Engine names the engine the run's steps are recorded on ("" is
	// local, the steps' journals), so that a resume on another engine,
	// which would not find the record and pay the calls again, is
	// refused.
	Engine string `json:"engine,omitempty"`
}

func infoPath(wf *workflow.Workflow) string { return batondir.At(wf.Dir).Current() }

func (r *runner) writeInfo(status string) error {
	data, _ := json.MarshalIndent(RunInfo{ID: r.id, Workflow: filepath.Base(r.wf.Path), Status: status, AgentCmd: r.cfg.AgentCmd, Engine: r.engineName()}, "", "  ")
	return atomicfile.Write(batondir.At(r.ws.Root()).Current(), append(data, '\n'), 0o644)
}

// Unfinished returns the id of the workspace's unfinished run, if any. A
// current.json that cannot be trusted counts as none here; UnfinishedRun
// says why.
func Unfinished(wf *workflow.Workflow) (string, bool) {
	info, ok, err := UnfinishedRun(wf)
	if err != nil {
		return "", false
	}
	return info.ID, ok
}

// UnfinishedRun reads .baton/current.json. ok is false when there is no
// unfinished run; an error says that the file exists but cannot be used (not
// JSON, or a run id baton would not make).
func UnfinishedRun(wf *workflow.Workflow) (RunInfo, bool, error) {
	p := infoPath(wf)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return RunInfo{}, false, nil
	}
	if err != nil {
		return RunInfo{}, false, fmt.Errorf("read %s: %w", p, err)
	}
	var info RunInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return RunInfo{}, false, fmt.Errorf(".baton/current.json is not valid JSON (%v); refusing to resume (start anew with baton run --fresh)", err)
	}
	if info.Status != "running" {
		return RunInfo{}, false, nil
	}
	if info.ID == "" {
		return RunInfo{}, false, nil
	}
	if err := CheckRunID(info.ID); err != nil {
		return RunInfo{}, false, fmt.Errorf("current.json names run id %q, which is %w; refusing to resume", info.ID, ErrBadRunID)
	}
	return info, true, nil
}
