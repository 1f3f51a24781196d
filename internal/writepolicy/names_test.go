package writepolicy_test

import (
	"errors"
	"testing"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// othersDenied are files other tools and agents run or take as orders,
// each written by a model's tool before these names were denied: the
// ones seen (a yarnPath, a pnpmfile, Mercurial's hooks, a Gitpod task,
// Kiro's hooks and steering, opencode's and Roo's MCP servers, aider's
// configuration, OpenHands' setup script, and other agents' instruction
// files), with the spellings that reach them on Windows and macOS.
var othersDenied = map[writepolicy.Family][]string{
	writepolicy.Host: {
		"AGENTS.override.md", "sub/AGENTS.override.md", "agents.OVERRIDE.md", "AGENTS.override.md.", "AGENT.md",
		".clinerules", ".clinerules/x.md", "sub/.clinerules/rules.md", ".kiro/steering/x.md", ".kiro/hooks/run.kiro.hook",
		".Kiro/settings/mcp.json", ".roo/rules/x.md", ".roo/mcp.json", ".roomodes", ".amazonq/rules/x.md",
		".openhands/setup.sh", "opencode.json", ".opencode/agent/x.md", ".aider.conf.yml", ".gitpod.yml",
		".gitpod.Dockerfile", ".devcontainer.json", ".replit", ".goosehints", "CRUSH.md", ".crush.json",
		".junie/guidelines.md", ".trae/rules/x.md", ".exrc", ".nvim.lua", ".dir-locals.el",
	},
	writepolicy.VCS: {".hg/hgrc", ".hg", ".HG/hgrc", ".hg./hgrc", "sub/.hg/hgrc", ".jj/repo/config.toml"},
	writepolicy.Tools: {
		".yarnrc.yml", ".yarnrc", ".Yarnrc.YML", ".yarn/releases/yarn.cjs", ".yarn/plugins/p.cjs", ".pnpmfile.cjs",
		".pnpmfile.mjs", "bunfig.toml", "mise.toml", ".mise.toml", "sub/.yarnrc.yml",
	},
}

// Each is refused for a write with its family named; Mercurial's and
// Jujutsu's folders, like git's, are not read either.
func TestOtherToolsFilesDenied(t *testing.T) {
	for fam, paths := range othersDenied {
		for _, p := range paths {
			err := writepolicy.CheckWritePath(p)
			var de *writepolicy.DeniedError
			if !errors.As(err, &de) || de.Family != fam {
				t.Errorf("CheckWritePath(%q) = %v, want a refusal for %s", p, err, fam)
			}
			readDenied := errors.Is(writepolicy.CheckReadPath(p), writepolicy.ErrDenied)
			if readDenied != (fam == writepolicy.VCS) {
				t.Errorf("CheckReadPath(%q): denied %v, want %v", p, readDenied, fam == writepolicy.VCS)
			}
		}
	}
}

// Names close to the denied ones are a workspace's own documents.
func TestNearNamesAllowed(t *testing.T) {
	for _, p := range []string{
		"docs/agents-override.md", "docs/agent-notes.md", "agent.md.txt", "hg/notes.md", "docs/hg.md", "yarnrc.md",
		"docs/kiro.md", "roo.md", "docs/rules.md", "rules/x.md", "opencode.md", "notes/gitpod.md", "mise.md",
	} {
		if err := writepolicy.CheckWritePath(p); err != nil {
			t.Errorf("CheckWritePath(%q) = %v, want nil", p, err)
		}
	}
}
