package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// The ledger and state packages open their files by path (each through an
// os.Root at the file's own folder, refusing a symlinked ledger or a state
// file linked out of its folder). A path a host names is therefore first
// confined to the server's root through s.root, which refuses `..`, absolute
// paths and any symlink on the way that leads out; only then is the
// root-joined path handed to the package.

// confined is a host's path checked against the root.
type confined struct {
	rel string // as the host gave it, cleaned, with forward slashes
	abs string // the root's own path joined with rel, for the packages
}

// confine checks name (kind names it in errors: "ledger", "state") and
// returns it joined to the root. With create, the file's folder is made
// (through the root) when it is missing, since an append or a set creates
// the file; without it, a missing file is an error.
func (s *Server) confine(kind, name string, create bool) (confined, error) {
	rel, err := localPath(kind, name)
	if err != nil {
		return confined{}, err
	}
	if dir := path.Dir(rel); dir != "." {
		if create {
			if err := s.root.MkdirAll(dir, 0o755); err != nil {
				return confined{}, fmt.Errorf("%s %q: %w", kind, name, rootErr(err))
			}
		}
		info, err := s.root.Stat(dir)
		if err != nil {
			return confined{}, fmt.Errorf("%s %q: %w", kind, name, rootErr(err))
		}
		if !info.IsDir() {
			return confined{}, fmt.Errorf("%s %q: %s is not a folder", kind, name, dir)
		}
	}
	// Stat follows a symlink at the end, so one leading out of the root is
	// caught here; one inside it is the package's to accept or refuse.
	info, err := s.root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
	case err != nil:
		return confined{}, fmt.Errorf("%s %q: %w", kind, name, rootErr(err))
	case !info.Mode().IsRegular():
		return confined{}, fmt.Errorf("%s %q is not a regular file", kind, name)
	}
	return confined{rel: rel, abs: filepath.Join(s.root.Name(), filepath.FromSlash(rel))}, nil
}

// localPath refuses an absolute path and one that leaves the root by its
// text, and returns it cleaned with forward slashes, as os.Root and its FS
// take it.
func localPath(kind, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("the %s path is empty", kind)
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("%s %q: an absolute path; give a path relative to the server's root", kind, name)
	}
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%s %q: the path escapes the server's root", kind, name)
	}
	return path.Clean(filepath.ToSlash(name)), nil
}

// rootErr words os.Root's refusal of an escape for a host, and otherwise
// drops the *PathError's repeat of the path.
func rootErr(err error) error {
	err = plainPathErr(err)
	if err != nil && strings.Contains(err.Error(), "escapes") {
		return errors.New("the path escapes the server's root (through a symlink)")
	}
	return err
}

// relErr names the file in a package's error as the host gave it, not by
// the server's own path to it.
type relErr struct {
	err error
	c   confined
}

func (e relErr) Error() string {
	msg := e.err.Error()
	if e.c.abs != e.c.rel {
		msg = strings.ReplaceAll(msg, e.c.abs, e.c.rel)
	}
	return joinLines(msg)
}

func (e relErr) Unwrap() error { return e.err }

func (c confined) wrap(err error) error {
	if err == nil {
		return nil
	}
	return relErr{err: err, c: c}
}

// joinLines keeps a tool error to one line, as a host shows it.
func joinLines(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
