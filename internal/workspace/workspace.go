// Package workspace confines every path a model or a skill names to one
// directory tree, and offers the file operations baton exposes to models as
// tools (read, write, list, search) on top of that confinement.
//
// A model's tool call is untrusted input: it may name "../../etc/passwd", an
// absolute path, or a symlink someone planted that points out of the tree.
// Every operation goes through one *os.Root opened on the tree, so the
// kernel-level resolution itself cannot leave it, and on top of that baton
// walks the path one component at a time, holding each directory open as it
// goes: symlinks are read and followed by baton, each hop checked, and every
// directory opened is checked to be the one that was inspected. A process
// that swaps a folder for a symlink while a tool runs therefore makes the
// call fail; it cannot make it read or write outside the tree, or reach a
// path the Rules forbid.
//
// Some paths are off limits even inside the tree: .git always, and whatever
// Restrict adds (baton's run state, the workflow, skills, the user's
// protect: list). They are refused by read and write and left out of
// listings and searches, whether named directly, in another letter case, or
// reached through a symlink.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// ErrOutsideWorkspace is wrapped by every error for a path that is, or
// resolves to, a location outside the workspace root.
var ErrOutsideWorkspace = errors.New("outside the workspace")

// Workspace is a directory tree that file operations are confined to. It
// holds the tree's root directory open; it is safe for concurrent use.
type Workspace struct {
	dir   string   // absolute, symlinks resolved, cleaned
	root  *os.Root // shared with every Workspace made from this one by Restrict
	rules *ruleset
}

// New returns the workspace rooted at root, which must be an existing
// directory. The root's own symlinks are resolved once here, so that a
// workspace reached through a symlink still compares paths by their real
// location. The directory stays open until Close (or until the Workspace is
// garbage collected).
func New(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", root)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, unwrapPathError(err))
	}
	return &Workspace{dir: filepath.Clean(real), root: r, rules: defaultRules}, nil
}

// Close releases the workspace's directory. It is shared by w and every
// Workspace made from it with Restrict: after Close none of them can be used.
func (w *Workspace) Close() error { return w.root.Close() }

// Root returns the workspace's real, absolute root directory.
func (w *Workspace) Root() string { return w.dir }

// Resolve maps rel, a slash- or OS-separated path relative to the root, to
// the absolute path it really names, with every existing symlink along it
// followed. It refuses empty paths, NUL bytes, absolute paths, ".." escapes
// and symlinks whose target (or any hop of it) leaves the root; the error
// wraps ErrOutsideWorkspace for the escapes and names rel as given. A path
// the Rules deny is refused with ErrProtected. "." is the root itself.
//
// Resolve only checks: a path it returns can be swapped for a symlink
// before the caller opens it. ReadFile, WriteFile, List and Search do not
// have that gap, so use them to touch files.
func (w *Workspace) Resolve(rel string) (string, error) {
	clean, err := cleanPath(rel)
	if err != nil {
		return "", err
	}
	if w.rules.denies(clean) {
		return "", protected("path", rel)
	}
	l, err := w.locate(clean)
	if errors.Is(err, errProtectedHop) {
		return "", protected("path", rel)
	}
	if err != nil {
		return "", fmt.Errorf("path %q: %w", rel, err)
	}
	l.release()
	if w.rules.denies(l.rel) {
		return "", protected("path", rel)
	}
	return filepath.Join(w.dir, filepath.FromSlash(l.rel)), nil
}

// cleanPath checks rel as given and returns it cleaned, with forward
// slashes; "." is the root. A path over writepolicy's MaxPathBytes or
// MaxPathDepth is refused with writepolicy.ErrPathTooLong.
func cleanPath(rel string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("path is empty")
	}
	// First, so that a huge path costs nothing more than its refusal.
	if err := writepolicy.CheckLimits(rel); err != nil {
		return "", err
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", rel)
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" {
		return "", fmt.Errorf("path %q is absolute: %w (give a path relative to the workspace)", rel, ErrOutsideWorkspace)
	}
	clean := path.Clean(filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel))))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q: %w", rel, ErrOutsideWorkspace)
	}
	return clean, nil
}

// within reports whether abs (cleaned) is the root or below it.
func (w *Workspace) within(abs string) bool {
	if abs == w.dir {
		return true
	}
	prefix := w.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(abs, prefix)
}

// Rel returns abs, a path under the root, relative to the root with forward
// slashes, the form paths are shown to models in.
func (w *Workspace) Rel(abs string) (string, error) {
	r, err := filepath.Rel(w.dir, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q: %w", abs, ErrOutsideWorkspace)
	}
	return filepath.ToSlash(r), nil
}
