package batondir_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/writepolicy"
)

// The paths are a contract: README.md, docs/run.md, the help texts and
// users' own tools name them, and runs recorded by earlier batons are found
// by them.
func TestLayoutPaths(t *testing.T) {
	root := filepath.Join("work", "proj")
	l := batondir.At(root)
	id := "20261201T134500Z-1a2b3c4d"
	for _, c := range []struct{ got, want string }{
		{l.Dir(), "work/proj/.baton"},
		{l.Runs(), "work/proj/.baton/runs"},
		{l.Run(id), "work/proj/.baton/runs/" + id},
		{l.RunLog(id), "work/proj/.baton/runs/" + id + "/events.jsonl"},
		{l.Steps(id), "work/proj/.baton/runs/" + id + "/steps"},
		{l.Spill(id), "work/proj/.baton/runs/" + id + "/spill"},
		{l.Record(id), "work/proj/.baton/runs/" + id + ".json"},
		{l.Current(), "work/proj/.baton/current.json"},
		{l.RunLock(), "work/proj/.baton/run.lock"},
		{l.Sessions(), "work/proj/.baton/sessions"},
		{l.Session("s1"), "work/proj/.baton/sessions/s1"},
		{l.SessionLog("s1"), "work/proj/.baton/sessions/s1/events.jsonl"},
		{l.Hooks(), "work/proj/.baton/hooks"},
		{l.MCPSpill(), "work/proj/.baton/mcp"},
		{batondir.Rel.RunLog(id), ".baton/runs/" + id + "/events.jsonl"},
		{batondir.Rel.Spill(id), ".baton/runs/" + id + "/spill"},
	} {
		if filepath.ToSlash(c.got) != c.want {
			t.Errorf("got %s, want %s", filepath.ToSlash(c.got), c.want)
		}
	}
}

func TestLayoutRecognisesItsFolders(t *testing.T) {
	l := batondir.At(filepath.Join("work", "proj"))
	if ws, ok := batondir.WorkspaceOfRuns(l.Runs()); !ok || ws != filepath.Join("work", "proj") {
		t.Errorf("WorkspaceOfRuns(%s) = %q, %v", l.Runs(), ws, ok)
	}
	if ws, ok := batondir.WorkspaceOfRuns(l.Runs() + string(filepath.Separator)); !ok || ws != filepath.Join("work", "proj") {
		t.Errorf("WorkspaceOfRuns with a trailing separator = %q, %v", ws, ok)
	}
	if _, ok := batondir.WorkspaceOfRuns(filepath.Join("work", "records")); ok {
		t.Error("a records folder outside .baton was taken for a workspace's runs")
	}
	if !batondir.IsSessions(l.Sessions()) || batondir.IsSessions(l.Runs()) || batondir.IsRuns(l.Sessions()) {
		t.Error("IsRuns and IsSessions confuse the folders")
	}
}

// Everything in the layout is baton's own: no tool a model or a client drives
// may write there, whatever the spelling.
func TestWritePolicyDeniesTheLayout(t *testing.T) {
	id := "20261201T134500Z-1a2b3c4d"
	l := batondir.Rel
	for _, p := range []string{l.Dir(), l.Current(), l.RunLock(), l.RunLog(id), l.Steps(id) + "/001-x.jsonl",
		l.Spill(id) + "/a.txt", l.Record(id), l.SessionLog("s1"), l.Hooks() + "/x.json", l.MCPSpill() + "/r.txt"} {
		err := writepolicy.CheckWritePath(filepath.ToSlash(p))
		if !errors.Is(err, writepolicy.ErrDenied) {
			t.Errorf("CheckWritePath(%s) = %v, want a refusal", filepath.ToSlash(p), err)
		}
	}
}
