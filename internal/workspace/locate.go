package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// maxSymlinkHops matches the limit Linux puts on symlink resolution, so a
// symlink loop ends in an error rather than a hang.
const maxSymlinkHops = 40

// errChanged reports a path that changed between being inspected and being
// opened: something is racing baton. The call fails rather than guess.
var errChanged = errors.New("changed while being opened; try again")

// errProtectedHop marks a path whose resolution visits a denied location;
// callers turn it into the error naming the path as given.
var errProtectedHop = errors.New("protected")

// loc is where a workspace path leads, found by locate.
type loc struct {
	dir    *os.Root    // the open directory holding the target
	owned  bool        // dir was opened by locate; release closes it
	name   string      // target under dir: "." for dir itself, else one name, or several when parents are missing
	rel    string      // target relative to the workspace root, slash-separated, "." for the root
	info   fs.FileInfo // the target's Lstat (dir's own for "."); nil when it does not exist
	notDir bool        // a component other than the last is a file, not a folder
	err    error       // why the target does not exist, when info is nil
}

func (l *loc) release() {
	if l.owned {
		l.dir.Close()
	}
}

// locate follows clean (from cleanPath) from the root one component at a
// time. Each existing directory is opened through its parent's handle and
// checked to be the directory Lstat saw, so a folder swapped for a symlink
// mid-walk is caught instead of followed; symlinks are read and their
// targets spliced into the remaining components, each hop checked against
// the root. Every location visited is checked against the deny rules as
// the walk reaches it, its key built on its parent's (keyPath), so the
// walk's work is linear in the path's length; symlinks that lead to a
// location over the path limits are refused. Once
// a component does not exist, the rest cannot be symlinks and are appended
// as they are. The caller must release the result.
func (w *Workspace) locate(clean string) (l *loc, err error) {
	stack := []*os.Root{w.root} // stack[i] is the open directory names[:i]
	var names []string          // the location so far, from the root
	var k keyPath               // names as the rules compare them
	size := 0                   // len(strings.Join(names, "/")) + 1
	defer func() {
		keep := len(stack) - 1
		if err != nil {
			keep = 0
		}
		for i := 1; i < len(stack); i++ {
			if i != keep {
				stack[i].Close()
			}
		}
		if err == nil {
			l.dir, l.owned = stack[keep], keep > 0
		}
	}()
	parts := strings.Split(clean, "/")
	hops := 0
	var last fs.FileInfo // Lstat of names[len(names)-1] when it is not an open directory
	var missing error    // set once a component did not exist
	notDir := false
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			// Only symlink targets bring ".." here (clean has none).
			if len(names) == 0 {
				return nil, fmt.Errorf("a symlink leads %w", ErrOutsideWorkspace)
			}
			if len(names) == len(stack)-1 {
				stack[len(stack)-1].Close()
				stack = stack[:len(stack)-1]
			}
			size -= len(names[len(names)-1]) + 1
			names = names[:len(names)-1]
			k.pop()
			last = nil
			if len(names) == len(stack)-1 {
				missing, notDir = nil, false
			}
			continue
		}
		names = append(names, name)
		size += len(name) + 1
		k.push(name)
		if len(names) > writepolicy.MaxPathDepth || size > writepolicy.MaxPathBytes+1 {
			// cleanPath bounds the path as given; only symlinks get here.
			return nil, fmt.Errorf("a symlink leads to a path too long: %w (baton takes paths of at most %d segments and %d bytes)", writepolicy.ErrPathTooLong, writepolicy.MaxPathDepth, writepolicy.MaxPathBytes)
		}
		if w.rules.deniesAt(&k) {
			return nil, errProtectedHop
		}
		if missing != nil || notDir || last != nil {
			// Below something that is not an open directory: a missing
			// component, or a file. Nothing further can be a symlink.
			if last != nil && missing == nil {
				notDir = true
			}
			last = nil
			continue
		}
		top := stack[len(stack)-1]
		fi, err := top.Lstat(name)
		if err != nil {
			// Missing, or unreadable: the operation reports the real problem.
			missing = err
			continue
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			hops++
			if hops > maxSymlinkHops {
				return nil, fmt.Errorf("too many levels of symlinks")
			}
			target, err := top.Readlink(name)
			if err != nil {
				return nil, fmt.Errorf("read symlink: %w", unwrapPathError(err))
			}
			names = names[:len(names)-1]
			size -= len(name) + 1
			k.pop()
			if filepath.IsAbs(target) {
				t := filepath.Clean(target)
				if !w.within(t) {
					return nil, fmt.Errorf("a symlink leads %w", ErrOutsideWorkspace)
				}
				for i := len(stack) - 1; i > 0; i-- {
					stack[i].Close()
				}
				stack, names, size = stack[:1], nil, 0
				k.reset()
				r, _ := filepath.Rel(w.dir, t)
				target = r
			}
			parts = append(strings.Split(filepath.ToSlash(target), "/"), parts...)
		case fi.IsDir():
			sub, err := openDir(top, name, fi)
			if err != nil {
				return nil, err
			}
			stack = append(stack, sub)
		default:
			last = fi
		}
	}
	open := len(stack) - 1
	l = &loc{rel: strings.Join(names, "/"), notDir: notDir, err: missing}
	if l.rel == "" {
		l.rel = "."
	}
	switch {
	case len(names) == open:
		l.name = "."
		fi, err := stack[open].Stat(".")
		if err != nil {
			return nil, unwrapPathError(err)
		}
		l.info = fi
	default:
		l.name = strings.Join(names[open:], "/")
		if missing == nil && !notDir {
			l.info = last
		}
	}
	return l, nil
}

// openDir opens the directory name under parent and checks that it is the
// one want describes, so a symlink swapped in since the Lstat is refused
// rather than followed.
func openDir(parent *os.Root, name string, want fs.FileInfo) (*os.Root, error) {
	sub, err := parent.OpenRoot(name)
	if err != nil {
		if now, lerr := parent.Lstat(name); lerr != nil || !os.SameFile(want, now) {
			return nil, errChanged
		}
		return nil, unwrapPathError(err)
	}
	got, err := sub.Stat(".")
	if err != nil || !os.SameFile(want, got) {
		sub.Close()
		return nil, errChanged
	}
	return sub, nil
}

// openFile opens the file name under dir for reading and checks that it is
// the one want describes.
func openFile(dir *os.Root, name string, want fs.FileInfo) (*os.File, error) {
	f, err := dir.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return nil, err
	}
	got, err := f.Stat()
	if err != nil || !os.SameFile(want, got) {
		f.Close()
		return nil, errChanged
	}
	return f, nil
}
