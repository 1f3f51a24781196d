package writepolicy

import (
	"os"
	"strings"
)

// Places other tools run code from without anyone reviewing it. A file
// written there is a command the next `git status`, `python` or `npm test`
// runs, under names no list of configuration files can hold: git takes any
// folder holding HEAD (with objects/ and refs/, or a commondir) for a git
// directory and runs its core.fsmonitor; Python runs every .pth file in
// site-packages at start; npm runs node_modules/.bin. Dependency folders are
// also git-ignored, so `git diff` never shows the change.
const (
	GitDir     Family = "a git directory or another repository"
	Dependency Family = "an installed dependency"
)

// writeOnly are names denied for writing, not reading, wherever they
// appear in a path. HEAD is every git directory's one required file:
// refusing it refuses every embedded git directory a write could create.
var writeOnly = map[string]Family{
	"head": GitDir,

	"node_modules": Dependency, "site-packages": Dependency, "dist-packages": Dependency,
	"__pycache__": Dependency, "pyvenv.cfg": Dependency,
}

// writeOnlyFamily names the family a normalised segment belongs to when it
// may be read but never written, including by its Windows short name.
func writeOnlyFamily(seg string) (Family, bool) {
	if f, ok := writeOnly[seg]; ok {
		return f, true
	}
	tilde := strings.IndexByte(seg, '~')
	if tilde < 1 || tilde > 6 {
		return "", false
	}
	num, ext, _ := strings.Cut(seg[tilde+1:], ".")
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return "", false
	}
	for long, f := range writeOnly {
		base, lext := shortParts(long)
		if strings.HasPrefix(base, seg[:tilde]) && strings.HasPrefix(lext, ext) {
			return f, true
		}
	}
	return "", false
}

// markers are the entries that make a folder, and everything below it,
// somewhere a write could plant code another tool runs: a git directory
// (HEAD), another repository or a worktree (.git, a folder or a file), a
// Python virtual environment (pyvenv.cfg). Git and Python open these exact
// names, so an exact Lstat finds what they would find.
var markers = []struct {
	name     string
	family   Family
	rootToo  bool // the root itself counts (the root's .git is the workspace's own repository)
	describe string
}{
	{"HEAD", GitDir, true, "holds HEAD, so git may take it for a git directory"},
	{".git", GitDir, false, "holds .git: it is another repository"},
	{"pyvenv.cfg", Dependency, true, "holds pyvenv.cfg: it is a Python virtual environment"},
}

// FolderError is a refusal for the folder a write would land in or pass
// through, found on disk: Folder is root-relative ("." for the root).
type FolderError struct {
	Path   string
	Folder string
	Why    string
	Family Family
}

func (e *FolderError) Error() string {
	return "write " + e.Path + ": " + ErrDenied.Error() + " (" + string(e.Family) + ": " + e.Folder + " " + e.Why + ")"
}

func (e *FolderError) Unwrap() error { return ErrDenied }

// checkFolders refuses writing real (root-relative, symlinks resolved) when
// a folder it lands in or passes through holds one of the markers. Each
// folder is opened through its parent, so the walk is linear in the path
// and stays under root; the first missing folder ends it, since what does
// not exist holds nothing.
func checkFolders(root, rel, real string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil // CheckWrite's resolve reported what it could about root
	}
	dir := r
	defer func() { dir.Close() }()
	segs := split(real)
	for i := 0; i < len(segs); i++ {
		for _, m := range markers {
			if i == 0 && !m.rootToo {
				continue
			}
			if _, err := dir.Lstat(m.name); err == nil {
				folder := "."
				if i > 0 {
					folder = strings.Join(segs[:i], "/")
				}
				return &FolderError{Path: rel, Folder: folder, Why: m.describe, Family: m.family}
			}
		}
		if i == len(segs)-1 {
			break
		}
		sub, err := dir.OpenRoot(segs[i])
		if err != nil {
			return nil // missing, or not a folder: the write itself fails
		}
		dir.Close()
		dir = sub
	}
	return nil
}
