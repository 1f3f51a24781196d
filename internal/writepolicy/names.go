package writepolicy

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/baton-dev/baton/internal/batondir"
)

// Family is a group of denied paths, named in every refusal so that a user
// (or a model) sees why, and does not try another spelling.
type Family string

// The denied families. Git's files and secrets may be neither written nor
// read; the others may be read but never written.
const (
	Git      Family = "git's own files"
	Baton    Family = "baton's run state"
	Workflow Family = "a baton workflow file"
	Skill    Family = "a skill definition"
	Host     Family = "host or editor configuration"
	HooksCI  Family = "a hook or CI definition"
	Secrets  Family = "a secrets file"
	// VCS is another version control system's folder: like .git it holds
	// commands its tool runs (Mercurial's [hooks], Jujutsu's config) and
	// remote URLs with credentials.
	VCS Family = "another version control system's own files"
	// Tools are files a build or package tool loads and runs on its own
	// when the user runs it for something else (yarnPath, a pnpmfile's
	// hooks, bun's preload, mise's hooks and env scripts).
	Tools Family = "a build or package tool's configuration"
)

// folders are denied wherever they appear in a path: a host started in a
// subfolder reads that folder's .claude, git treats a nested .git as a
// repository, and baton run takes any folder as its workspace.
var folders = map[string]Family{
	".git":        Git,
	batondir.Name: Baton,

	".claude": Host, ".codex": Host, ".cursor": Host, ".vscode": Host, ".idea": Host,
	".agents": Host, ".gemini": Host, ".windsurf": Host, ".zed": Host, ".continue": Host,
	".devcontainer": Host, ".idx": Host,
	// Other agents' instructions, rules, hooks and MCP servers: each is
	// read as orders by an agent the user runs in the same folder.
	".kiro": Host, ".roo": Host, ".amazonq": Host, ".openhands": Host, ".clinerules": Host,
	".opencode": Host, ".junie": Host, ".trae": Host, ".qwen": Host, ".kilocode": Host, ".augment": Host,

	".hg": VCS, ".jj": VCS,

	".yarn": Tools, ".mise": Tools,

	".github": HooksCI, ".gitlab": HooksCI, ".husky": HooksCI, ".githooks": HooksCI,
	".circleci": HooksCI, ".buildkite": HooksCI, ".woodpecker": HooksCI, ".forgejo": HooksCI,
	".gitea": HooksCI, ".azuredevops": HooksCI,

	".ssh": Secrets, ".aws": Secrets, ".gnupg": Secrets, ".kube": Secrets, ".docker": Secrets,
}

// files are denied by their name in any folder.
var files = map[string]Family{
	"baton.yaml": Workflow, "baton.yml": Workflow,
	"skill.md": Skill,

	".mcp.json": Host, ".envrc": Host, "claude.md": Host, "claude.local.md": Host,
	"agents.md": Host, "gemini.md": Host, ".cursorrules": Host, ".windsurfrules": Host,
	"agents.override.md": Host, "agent.md": Host, "crush.md": Host, "qwen.md": Host,
	".roomodes": Host, ".roorules": Host, "opencode.json": Host, "opencode.jsonc": Host,
	".crush.json": Host, "crush.json": Host, ".aider.conf.yml": Host, ".aider.conf.yaml": Host,
	".goosehints": Host, ".rules": Host, ".augment-guidelines": Host,
	".devcontainer.json": Host, ".gitpod.yml": Host, ".gitpod.yaml": Host, ".gitpod.dockerfile": Host,
	".replit": Host, "replit.nix": Host,
	".exrc": Host, ".nvimrc": Host, ".nvim.lua": Host, ".dir-locals.el": Host, ".dir-locals-2.el": Host,

	".yarnrc": Tools, ".yarnrc.yml": Tools, ".yarnrc.yaml": Tools, ".pnpmfile.cjs": Tools, ".pnpmfile.mjs": Tools,
	"bunfig.toml": Tools, ".bunfig.toml": Tools,
	"mise.toml": Tools, ".mise.toml": Tools, "mise.local.toml": Tools, ".mise.local.toml": Tools,

	".gitmodules": Git, ".gitattributes": Git, ".gitconfig": Git,

	".gitlab-ci.yml": HooksCI, ".gitlab-ci.yaml": HooksCI, ".travis.yml": HooksCI,
	".drone.yml": HooksCI, ".woodpecker.yml": HooksCI, ".woodpecker.yaml": HooksCI,
	"azure-pipelines.yml": HooksCI, "azure-pipelines.yaml": HooksCI,
	"bitbucket-pipelines.yml": HooksCI, "jenkinsfile": HooksCI,
	".pre-commit-config.yaml": HooksCI, ".pre-commit-hooks.yaml": HooksCI,
	"lefthook.yml": HooksCI, "lefthook.yaml": HooksCI, ".lefthook.yml": HooksCI, ".lefthook.yaml": HooksCI,

	".git-credentials": Secrets, ".netrc": Secrets, "_netrc": Secrets, ".npmrc": Secrets,
	".pypirc": Secrets, ".env": Secrets,
}

// unreadable are the families no tool may read either: git's files (and
// another version control system's) hold remote URLs with tokens, and
// secrets files are secrets.
func unreadable(f Family) bool { return f == Git || f == VCS || f == Secrets }

// familyOf names the family a normalised segment belongs to, if any.
// dir is true when the segment is a folder on the way to the target.
func familyOf(seg string) (Family, bool) {
	if f, ok := folders[seg]; ok {
		return f, true
	}
	if f, ok := files[seg]; ok {
		return f, true
	}
	if strings.HasPrefix(seg, ".env.") {
		return Secrets, true // .env.local, .env.production: the same secrets
	}
	return shortNameFamily(seg)
}

// ignorable are the code points HFS+ drops from a name when it compares
// two (git's is_hfs_dotgit lists them), so ".g\u200cit" is ".git" there.
func ignorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e,
		r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// Segment is the form one path segment is compared in: Unicode NFC
// (U+212A KELVIN SIGN is K), HFS+ ignorables dropped, lower case with
// every rune that case-folds to an ASCII letter taken as that letter
// (U+017F LONG S is s), and without the trailing dots and spaces and the
// ":stream" suffix Windows ignores. Every denied name is ASCII, so two
// spellings of one of them meet here.
func Segment(seg string) string {
	seg = norm.NFC.String(seg)
	var b strings.Builder
	for _, r := range seg {
		if ignorable(r) {
			continue
		}
		b.WriteRune(asciiFold(r))
	}
	s := b.String()
	if i := strings.IndexByte(s, ':'); i > 0 {
		s = s[:i] // NTFS: "name::$DATA" and "name:stream" open name
	}
	if t := strings.TrimRight(s, ". "); t != "" {
		s = t
	}
	return s
}

// asciiFold lower-cases r, taking a rune whose case-folding orbit holds an
// ASCII letter as that letter.
func asciiFold(r rune) rune {
	if r < unicode.MaxASCII {
		return unicode.ToLower(r)
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < unicode.MaxASCII {
			return unicode.ToLower(f)
		}
	}
	return unicode.ToLower(r)
}

// Key is the form a relative path is compared in: segments split at "/"
// and "\" (a Windows separator, and a name no real document carries), "."
// and empty segments dropped, each segment as Segment gives it.
func Key(rel string) string {
	parts := strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' })
	out := parts[:0]
	for _, p := range parts {
		if s := Segment(p); s != "." && s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}

// shortNameFamily catches a Windows 8.3 short name (GIT~1, BATON~1.YAM)
// that may stand for a denied long name: the part before "~" begins the
// long name's base (leading dots, inner dots and spaces dropped) and the
// extension begins its extension.
func shortNameFamily(seg string) (Family, bool) {
	tilde := strings.IndexByte(seg, '~')
	if tilde < 1 || tilde > 6 {
		return "", false
	}
	rest := seg[tilde+1:]
	num, ext, _ := strings.Cut(rest, ".")
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return "", false
	}
	prefix := seg[:tilde]
	// A short name may stand for several denied names (GIT~1 for .git or
	// .github): the name it spells out wins, then the strictest family, so
	// an unreadable file is never read by its short name.
	var found Family
	best := -1
	for _, m := range []map[string]Family{folders, files} {
		for long, f := range m {
			base, lext := shortParts(long)
			if !strings.HasPrefix(base, prefix) || !strings.HasPrefix(lext, ext) {
				continue
			}
			score := 0
			if base == prefix && lext == ext {
				score += 4
			} else if base == prefix {
				score += 2
			}
			if unreadable(f) {
				score++
			}
			if score > best || (score == best && f < found) {
				found, best = f, score
			}
		}
	}
	return found, found != ""
}

// shortParts is the base and the extension Windows builds a short name
// from.
func shortParts(long string) (base, ext string) {
	long = strings.TrimLeft(long, ". ")
	if i := strings.LastIndexByte(long, '.'); i >= 0 {
		base, ext = long[:i], long[i+1:]
	} else {
		base = long
	}
	base = strings.NewReplacer(".", "", " ", "").Replace(base)
	if len(ext) > 3 {
		ext = ext[:3]
	}
	return base, ext
}
