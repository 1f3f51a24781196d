package writepolicy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// Denied holds, per family, paths a tool may not write, each with the
// spellings Windows (case, trailing dots and spaces, streams, 8.3 short
// names) and macOS (case, ignorable code points, NFD) take for the same
// file. Every family has its own test through it.
var denied = map[writepolicy.Family][]string{
	writepolicy.Git: {
		".git/config", ".git/hooks/pre-commit", "sub/.git/config", ".gitmodules", ".gitattributes",
		".GIT/config", ".Git/CONFIG", ".git./config", ".git /config", ".git. . /config",
		"git~1/config", "GIT~1/config", ".git::$INDEX_ALLOCATION/config", ".git:stream/config",
		".g\u200cit/config", ".gi\u200dt/config", "\ufeff.git/config", ".g\u206ait/config",
		"./.git//config", ".//.git/./config", `.git\config`, "docs/../.git/config",
	},
	writepolicy.Baton: {
		".baton/current.json", ".baton/runs/x/journal.jsonl", ".BATON/current.json", "baton~1/current.json",
		".bat\u200con/x",
	},
	writepolicy.Workflow: {
		"baton.yaml", "Baton.YAML", "baton.yaml.", "baton.yaml ", "sub/baton.yml", "BATON~1.YAM", "baton.yaml::$DATA",
	},
	writepolicy.Skill: {
		"SKILL.md", "skills/review/SKILL.md", "skill.MD", "S\u212aILL.md" /* KELVIN SIGN */, "SKILL.md.",
	},
	writepolicy.Host: {
		".claude/settings.json", ".claude/skills/x/run.sh", ".codex/config.toml", ".cursor/mcp.json",
		".vscode/tasks.json", ".mcp.json", ".envrc", "CLAUDE.md", "AGENTS.md", ".Claude/settings.json",
		"claude~1/settings.json", ".cla\u200cude/settings.json", ".agents/skills/x/SKILL.md",
	},
	writepolicy.HooksCI: {
		".github/workflows/ci.yml", ".gitlab-ci.yml", ".husky/pre-commit", ".githooks/pre-push",
		".circleci/config.yml", ".pre-commit-config.yaml", "lefthook.yml", "Jenkinsfile", ".GitHub/workflows/x.yml",
		"github~1/workflows/ci.yml", ".hu\u017fky/pre-commit", /* LONG S */
	},
	writepolicy.Secrets: {
		".env", ".env.local", ".ENV", ".netrc", ".git-credentials", ".ssh/id_ed25519", ".aws/credentials",
	},
}

// allowed are a workspace's documents and its ledger and state files.
var allowed = []string{
	"specs/ledger.md", "specs/state.yaml", "notes/ledger.md", "doc.md", "docs/git.md", "docs/.gitignore",
	"github/workflows.md", "skills.md", "baton.md", "my.git/x", "env.md", ".environment/x.md", "docs/skill.md.txt",
	"git~x", "report~1.md",
}

func TestWritePathDeniedPerFamily(t *testing.T) {
	for fam, paths := range denied {
		t.Run(string(fam), func(t *testing.T) {
			for _, p := range paths {
				err := writepolicy.CheckWritePath(p)
				var de *writepolicy.DeniedError
				if !errors.Is(err, writepolicy.ErrDenied) || !errors.As(err, &de) || de.Family != fam {
					t.Errorf("CheckWritePath(%q) = %v, want a refusal for %s", p, err, fam)
					continue
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("CheckWritePath(%q): the error is not one line: %q", p, err)
				}
			}
		})
	}
}

func TestReadPathDeniedOnlyForGitAndSecrets(t *testing.T) {
	for fam, paths := range denied {
		for _, p := range paths {
			err := writepolicy.CheckReadPath(p)
			want := fam == writepolicy.Git || fam == writepolicy.Secrets
			if got := errors.Is(err, writepolicy.ErrDenied); got != want {
				t.Errorf("CheckReadPath(%q) = %v; want denied %v", p, err, want)
			}
		}
	}
}

func TestAllowedPaths(t *testing.T) {
	for _, p := range allowed {
		if err := writepolicy.CheckWritePath(p); err != nil {
			t.Errorf("CheckWritePath(%q) = %v, want nil", p, err)
		}
		if err := writepolicy.CheckReadPath(p); err != nil {
			t.Errorf("CheckReadPath(%q) = %v, want nil", p, err)
		}
	}
}

// NFD and NFC spellings of one name have one key, and so do the cases.
func TestKeyNormalises(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"caf\u00e9.md", "cafe\u0301.md"},
		{"Docs/Notes.MD", "docs/notes.md"},
		{"./a//b/", "a/b"},
		{"a./b ", "a/b"},
	} {
		if writepolicy.Key(c.a) != writepolicy.Key(c.b) {
			t.Errorf("Key(%q) = %q, Key(%q) = %q; want one key", c.a, writepolicy.Key(c.a), c.b, writepolicy.Key(c.b))
		}
	}
}

// A symlink inside the root to a denied place is refused when written
// through, whether it is the file itself or a folder on the way; a path
// leading out is refused as outside; a plain document is allowed.
func TestCheckWriteFollowsSymlinks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git", ".claude", "docs", "skills/review/scripts"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(root, "skills", "review", "SKILL.md"), []byte("---\nname: review\n---\n"), 0o644)
	links := map[string]string{
		"notes.md":        ".git/config",
		"settings.md":     filepath.Join(root, ".claude", "settings.json"),
		"gitdir":          ".git",
		"docs/up":         "..",
		"out.md":          filepath.Join(filepath.Dir(root), "elsewhere.md"),
		"docs/claude-dir": "../.claude",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skipf("SKIPPED: no symlinks here: %v", err)
		}
	}
	for _, c := range []struct {
		rel  string
		want error
	}{
		{"notes.md", writepolicy.ErrDenied},
		{"settings.md", writepolicy.ErrDenied},
		{"gitdir/config", writepolicy.ErrDenied},
		{"gitdir/hooks/pre-commit", writepolicy.ErrDenied},
		{"docs/up/.git/config", writepolicy.ErrDenied},
		{"docs/claude-dir/settings.json", writepolicy.ErrDenied},
		{"out.md", writepolicy.ErrOutside},
		{"../x.md", writepolicy.ErrOutside},
		{"skills/review/scripts/run.sh", writepolicy.ErrDenied},
		{"skills/review/notes.md", writepolicy.ErrDenied},
		{"docs/new.md", nil},
		{"docs/up/docs/new.md", nil},
		{"specs/ledger.md", nil},
	} {
		err := writepolicy.CheckWrite(root, c.rel)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("CheckWrite(%q) = %v, want %v", c.rel, err, c.want)
		}
	}
	for _, c := range []struct {
		rel    string
		denied bool
	}{{"notes.md", true}, {"gitdir/config", true}, {"settings.md", false}, {"docs/new.md", false}} {
		err := writepolicy.CheckRead(root, c.rel)
		if errors.Is(err, writepolicy.ErrDenied) != c.denied {
			t.Errorf("CheckRead(%q) = %v, want denied %v", c.rel, err, c.denied)
		}
	}
}

func TestSymlinkLoopIsAnError(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Skipf("SKIPPED: no symlinks here: %v", err)
	}
	os.Symlink("a", filepath.Join(root, "b"))
	if err := writepolicy.CheckWrite(root, "a/x.md"); err == nil {
		t.Error("a symlink loop was accepted")
	}
}
