// Package writepolicy decides which paths inside a root a tool may write
// and read on someone else's behalf: a model in `baton run`, a host over
// MCP, a work item on a worker. It is the one place that knows what baton
// or the user's own tools trust later, so that nothing a model or a
// document controls can plant a command there: git's files (hooks,
// core.fsmonitor), baton's run state and workflow files, skill
// definitions, host and editor configuration, hook and CI definitions.
// Git's files and secrets files are not readable either.
//
// Paths are compared in one normalised form (Key): case, Unicode
// normalisation and the code points HFS+ ignores, the trailing dots and
// spaces and the streams and 8.3 short names of NTFS. The same rules hold
// on every system, since a repository moves between them and a Linux
// checkout can sit on a case-insensitive or NTFS volume. CheckWrite and
// CheckRead also follow symlinks inside the root, checking every place a
// path passes through and the place it ends at.
package writepolicy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrDenied is wrapped by every refusal of the policy.
var ErrDenied = errors.New("denied by baton's write policy")

// ErrOutside is a path that leaves the root, by its text or a symlink.
var ErrOutside = errors.New("the path leads out of the root")

// DeniedError is one refusal: what was asked, and the family of the place
// it would have touched. Via is the place reached through a symlink, when
// it differs from Path.
type DeniedError struct {
	Op     string // "write" or "read"
	Path   string // as the caller gave it
	Via    string // the denied place, root-relative, when a symlink led there
	Family Family
}

func (e *DeniedError) Error() string {
	via := ""
	if e.Via != "" {
		via = " (through a symlink to " + e.Via + ")"
	}
	return fmt.Sprintf("%s %s%s: %s (%s)", e.Op, e.Path, via, ErrDenied, e.Family)
}

func (e *DeniedError) Unwrap() error { return ErrDenied }

// WriteFamily reports the family that forbids writing rel, judged by its
// text alone: any segment naming a denied folder or file.
func WriteFamily(rel string) (f Family, denied bool) {
	denied = eachKey(rel, func(seg string) bool {
		f, denied = SegmentWriteFamily(seg)
		return denied
	})
	return f, denied
}

// ReadFamily reports the family that forbids reading rel, judged by its
// text alone.
func ReadFamily(rel string) (f Family, denied bool) {
	denied = eachKey(rel, func(seg string) bool {
		f, denied = SegmentReadFamily(seg)
		return denied
	})
	return f, denied
}

// CheckWritePath refuses rel, by its text, when the policy forbids writing
// it. CheckWrite also follows symlinks and looks for skill folders.
func CheckWritePath(rel string) error {
	if f, ok := WriteFamily(rel); ok {
		return &DeniedError{Op: "write", Path: rel, Family: f}
	}
	return nil
}

// CheckReadPath refuses rel, by its text, when the policy forbids reading
// it.
func CheckReadPath(rel string) error {
	if f, ok := ReadFamily(rel); ok {
		return &DeniedError{Op: "read", Path: rel, Family: f}
	}
	return nil
}

// CheckWrite refuses writing rel (relative to root) when rel, any place it
// passes through on the way (a symlinked folder included) or the place it
// ends at is denied, or when that place lies in a skill's folder (one
// holding a SKILL.md, below the root), a git directory, another repository
// or a Python virtual environment (checkFolders). A path that leaves the
// root is refused with ErrOutside, and one over MaxPathBytes or
// MaxPathDepth with ErrPathTooLong. The result wraps ErrDenied for a
// refusal.
func CheckWrite(root, rel string) error {
	if err := CheckLimits(rel); err != nil {
		return err
	}
	if err := CheckWritePath(rel); err != nil {
		return err
	}
	real, err := resolve(root, rel, "write", SegmentWriteFamily)
	if err != nil {
		return err
	}
	if dir, ok := skillFolder(root, real); ok {
		return &DeniedError{Op: "write", Path: rel, Via: dir + "/SKILL.md", Family: Skill}
	}
	return checkFolders(root, rel, real)
}

// CheckRead refuses reading rel (relative to root) when rel or any place
// it passes through or ends at is unreadable. The result wraps ErrDenied
// for a refusal, ErrOutside for a path that leaves the root and
// ErrPathTooLong for one over the limits.
func CheckRead(root, rel string) error {
	if err := CheckLimits(rel); err != nil {
		return err
	}
	if err := CheckReadPath(rel); err != nil {
		return err
	}
	_, err := resolve(root, rel, "read", SegmentReadFamily)
	return err
}

// maxHops bounds the symlinks one path may pass, as the kernel does.
const maxHops = 40

// resolve follows rel from root one segment at a time, splicing symlink
// targets in, and asks family about each segment as the walk reaches it:
// a walk that checks every place it visits has then checked every place's
// whole path, so no prefix is keyed twice. A refusal names the place,
// root-relative and slash-separated, and op. It returns the place rel ends
// at. Once a segment does not exist, the rest cannot be symlinks and are
// taken as they are.
func resolve(root, rel, op string, family func(seg string) (Family, bool)) (string, error) {
	base, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root %q: %w", root, err)
	}
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	if filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" {
		return "", fmt.Errorf("%s: %w", rel, ErrOutside)
	}
	parts := split(rel)
	var names []string
	size := 0 // bytes of the place so far, joined by "/"
	hops, missing := 0, false
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if len(names) == 0 {
				return "", fmt.Errorf("%s: %w", rel, ErrOutside)
			}
			size -= len(names[len(names)-1]) + 1
			names = names[:len(names)-1]
			continue
		}
		names = append(names, name)
		size += len(name) + 1
		if len(names) > MaxPathDepth || size > MaxPathBytes+1 {
			// Only symlinks make the place outgrow the path as given.
			return "", limitErr(rel, "leads through symlinks to a longer path")
		}
		// eachKey, since a name may hold a backslash, which Key splits at.
		var f Family
		if eachKey(name, func(seg string) (ok bool) { f, ok = family(seg); return ok }) {
			return "", &DeniedError{Op: op, Path: rel, Via: strings.Join(names, "/"), Family: f}
		}
		if missing {
			continue
		}
		// The kernel walks here's segments again; with the limits above
		// that is at most MaxPathDepth short lookups per segment.
		full := filepath.Join(base, filepath.FromSlash(strings.Join(names, "/")))
		fi, err := os.Lstat(full)
		if err != nil {
			missing = true
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if hops++; hops > maxHops {
			return "", fmt.Errorf("%s: too many levels of symlinks", rel)
		}
		target, err := os.Readlink(full)
		if err != nil {
			return "", fmt.Errorf("%s: read symlink %s: %w", rel, strings.Join(names, "/"), err)
		}
		size -= len(name) + 1
		names = names[:len(names)-1]
		if filepath.IsAbs(target) {
			r, err := filepath.Rel(base, filepath.Clean(target))
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return "", fmt.Errorf("%s: %w (through a symlink)", rel, ErrOutside)
			}
			names, size, target = nil, 0, r
		}
		parts = append(split(target), parts...)
	}
	return strings.Join(names, "/"), nil
}

func split(p string) []string {
	return strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' })
}

// skillFolder reports the folder, below the root, holding real (a
// root-relative path) that holds a SKILL.md: a skill's scripts and
// references are read and run as the skill's own.
func skillFolder(root, real string) (string, bool) {
	dir := real
	for {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			return "", false
		}
		dir = dir[:i]
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if Segment(e.Name()) == "skill.md" {
				return dir, true
			}
		}
	}
}
