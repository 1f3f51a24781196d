package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/writepolicy"
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
// returns it joined to the root. With create, the file is to be written:
// the write policy (package writepolicy) and the allow-list (declared.go)
// are asked before the file's folder is made (through the root) when it is
// missing, since an append or a set creates the file; without it, the file is to be read, the read policy is
// asked, and a missing file is an error. A ledger must be a .md file and a
// state file a .yaml or .yml one, so that neither tool takes another kind
// of file for its own.
func (s *Server) confine(kind, name string, create bool) (confined, error) {
	rel, err := localPath(kind, name)
	if err != nil {
		return confined{}, err
	}
	if err := checkExt(kind, name, rel); err != nil {
		return confined{}, err
	}
	if err := s.checkPolicy(kind, name, rel, create); err != nil {
		return confined{}, err
	}
	// A denied path is refused as such first (declaring it would not
	// help); any other is written only when declared (declared.go).
	if create {
		if err := s.checkAllowed(kindOf(kind), rel); err != nil {
			return confined{}, err
		}
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

// checkExt refuses a ledger that is not markdown and a state file that is
// not YAML, compared in the policy's normalised form (LEDGER.MD. is a
// ledger.md on Windows).
func checkExt(kind, name, rel string) error {
	switch kind {
	case "ledger":
		if !writepolicy.HasExt(rel, ".md") {
			return fmt.Errorf("ledger %q: a ledger is a markdown file ending in .md", name)
		}
	case "state":
		if !writepolicy.HasExt(rel, ".yaml", ".yml") {
			return fmt.Errorf("state %q: a state file is a YAML file ending in .yaml or .yml", name)
		}
	}
	return nil
}

// checkPolicy asks the write policy (write) or the read policy about rel,
// symlinks inside the root followed.
func (s *Server) checkPolicy(kind, name, rel string, write bool) error {
	check := writepolicy.CheckRead
	if write {
		check = writepolicy.CheckWrite
	}
	err := check(s.root.Name(), rel)
	if errors.Is(err, writepolicy.ErrOutside) {
		// os.Root refuses the same path below, in the words the other
		// refusals of an escape use.
		return nil
	}
	if err != nil {
		var de *writepolicy.DeniedError
		if errors.As(err, &de) {
			return fmt.Errorf("%s %q: %w", kind, name, policyErr{de})
		}
		return fmt.Errorf("%s %q: %w", kind, name, err)
	}
	return nil
}

// policyErr words a refusal for a host: the family, and where a symlink
// led, without repeating the path the host gave.
type policyErr struct{ de *writepolicy.DeniedError }

func (e policyErr) Error() string {
	via := ""
	if e.de.Via != "" && e.de.Via != e.de.Path {
		via = ", through a symlink to " + e.de.Via
	}
	return fmt.Sprintf("%s: %s%s; baton never %ss these files for a tool", writepolicy.ErrDenied, e.de.Family, via, e.de.Op)
}

func (e policyErr) Unwrap() error { return e.de }

// localPath refuses an absolute path, one that leaves the root by its
// text and one over the write policy's path limits, and returns it cleaned
// with forward slashes, as os.Root and its FS take it.
func localPath(kind, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("the %s path is empty", kind)
	}
	// First, and without quoting name: the refusal quotes only its head.
	if err := writepolicy.CheckLimits(name); err != nil {
		return "", fmt.Errorf("%s %w", kind, err)
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
