// Package workspace confines every path a model or a skill names to one
// directory tree, and offers the file operations baton exposes to models as
// tools (read, write, list, search) on top of that confinement.
//
// A model's tool call is untrusted input: it may name "../../etc/passwd", an
// absolute path, or a symlink someone planted that points out of the tree.
// Resolve is the single gate every operation goes through. It walks the path
// one component at a time from the workspace root, following symlinks itself
// so it can check each hop, and refuses the path as soon as any hop leaves
// the root. Paths that do not exist yet (a file about to be written) are
// checked through their existing parent, so a dangling symlink pointing out
// of the tree cannot be used to create a file outside it either.
//
// The check and the use of a path are two system calls apart; a process that
// swaps a directory for a symlink in between could still win that race.
// baton's tools run one at a time inside one run, so this is accepted rather
// than paid for with platform-specific openat calls.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is wrapped by every error for a path that is, or
// resolves to, a location outside the workspace root.
var ErrOutsideWorkspace = errors.New("outside the workspace")

// maxSymlinkHops matches the limit Linux puts on symlink resolution, so a
// symlink loop ends in an error rather than a hang.
const maxSymlinkHops = 40

// Workspace is a directory tree that file operations are confined to. It
// holds no open files and is safe for concurrent use.
type Workspace struct {
	root string // absolute, symlinks resolved, cleaned
}

// New returns the workspace rooted at root, which must be an existing
// directory. The root's own symlinks are resolved once here, so that a
// workspace reached through a symlink still compares paths by their real
// location.
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
	return &Workspace{root: filepath.Clean(real)}, nil
}

// Root returns the workspace's real, absolute root directory.
func (w *Workspace) Root() string { return w.root }

// Resolve maps rel, a slash- or OS-separated path relative to the root, to
// the absolute path it really names, with every existing symlink along it
// followed. It refuses empty paths, NUL bytes, absolute paths, ".." escapes
// and symlinks whose target (or any hop of it) leaves the root; the error
// wraps ErrOutsideWorkspace for the escapes and names rel as given. "." is
// the root itself.
func (w *Workspace) Resolve(rel string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("path is empty")
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", rel)
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" {
		return "", fmt.Errorf("path %q is absolute: %w (give a path relative to the workspace)", rel, ErrOutsideWorkspace)
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q: %w", rel, ErrOutsideWorkspace)
	}
	p, err := w.walk(clean)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", rel, err)
	}
	return p, nil
}

// walk follows clean (relative, cleaned, not escaping lexically) from the
// root one component at a time. Existing symlinks are read and their
// targets spliced into the remaining components, so each hop is checked
// against the root. Once a component does not exist, the rest cannot be
// symlinks and are appended as they are.
func (w *Workspace) walk(clean string) (string, error) {
	cur := w.root
	parts := splitPath(clean)
	hops := 0
	exists := true
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			// Only symlink targets bring ".." here (rel was cleaned); cur has
			// no symlinks in it, so its lexical parent is its real parent.
			if cur == w.root {
				return "", fmt.Errorf("a symlink leads %w", ErrOutsideWorkspace)
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		if !exists {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing, or a parent that is a file: nothing further can be a
			// symlink, and the operation itself reports the real problem.
			exists = false
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fmt.Errorf("too many levels of symlinks")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("read symlink: %w", err)
		}
		if filepath.IsAbs(target) {
			t := filepath.Clean(target)
			if !w.within(t) {
				return "", fmt.Errorf("a symlink leads %w", ErrOutsideWorkspace)
			}
			r, _ := filepath.Rel(w.root, t)
			parts = append(splitPath(r), parts...)
			cur = w.root
			continue
		}
		parts = append(splitPath(target), parts...)
	}
	if !w.within(cur) {
		// Unreachable by construction; kept so a future change to the walk
		// cannot silently hand out a path outside the root.
		return "", ErrOutsideWorkspace
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// within reports whether abs (cleaned) is the root or below it.
func (w *Workspace) within(abs string) bool {
	if abs == w.root {
		return true
	}
	prefix := w.root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(abs, prefix)
}

// Rel returns abs, a path under the root, relative to the root with forward
// slashes, the form paths are shown to models in.
func (w *Workspace) Rel(abs string) (string, error) {
	r, err := filepath.Rel(w.root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q: %w", abs, ErrOutsideWorkspace)
	}
	return filepath.ToSlash(r), nil
}
