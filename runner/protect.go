package runner

import (
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/workflow"
)

// protectedRules is what a model's tools may not touch in a workflow's
// workspace (for workspace.Rules), beyond baton's write policy (package
// writepolicy), which the workspace applies in every run: git's files,
// baton's own, workflow and skill files, host, editor, hook and CI
// configuration and secrets. deny adds what this run decides and what its
// resume trusts, for reading too: .baton (run records and journals, which
// the policy leaves readable), .git (named as well, so a run's rules read
// whole), the workflow file by whatever name it has,
// every skill folder the workflow names (a skill's body is a later step's
// system prompt) and the workflow's own protect: patterns. readOnly holds the files baton itself writes for the
// run (state.yaml through update_state, the ledger through write_ledger)
// and the capsule every step receives: a model reads them, baton owns
// their writes. Paths are workspace-relative and slash-separated.
func protectedRules(wf *workflow.Workflow) (deny, readOnly []string) {
	deny = []string{batondir.Name, ".git"}
	add := func(abs string) {
		rel, ok := inside(wf.Dir, abs)
		if ok && rel != "." && !contains(deny, rel) {
			deny = append(deny, rel)
		}
	}
	add(wf.Path)
	for _, dir := range wf.SkillDirs() {
		if rel, ok := inside(wf.Dir, dir); ok && rel == "." {
			// Skills kept in the workspace root: deny each skill's folder,
			// not the whole workspace.
			if lib, _, err := wf.Library(); err == nil {
				for _, sk := range lib.List() {
					if !sk.BuiltIn {
						add(filepath.Dir(sk.Path))
					}
				}
			}
			continue
		}
		add(dir)
	}
	for _, p := range wf.Protect {
		if !contains(deny, p) {
			deny = append(deny, p)
		}
	}
	for _, p := range []string{wf.State, wf.Ledger, wf.Capsule} {
		if p != "" && !contains(readOnly, p) {
			readOnly = append(readOnly, p)
		}
	}
	return deny, readOnly
}

// inside returns path relative to root, slash-separated, when it lies
// inside root.
func inside(root, path string) (string, bool) {
	r, err := filepath.Abs(root)
	if err != nil {
		return "", false
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(r, p)
	if err != nil {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
