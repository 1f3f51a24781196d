package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/writepolicy"
)

// Sentinels callers branch on when turning a failed tool call into an
// error result for the model.
var (
	// ErrTooLarge is wrapped when a file is over the size limit asked for.
	ErrTooLarge = errors.New("file is too large")
	// ErrBinary is wrapped when a file does not look like UTF-8 text.
	ErrBinary = errors.New("file is not text")
	// ErrTruncated is returned together with partial results when a listing
	// or search reached its bound; the results returned are still valid.
	ErrTruncated = errors.New("results truncated")
)

// Limits on what a model can pull into its context in one call. They exist
// so one careless glob or read cannot fill a context window.
const (
	DefaultMaxRead      = 256 << 10 // bytes returned by ReadFile when maxBytes <= 0
	MaxListEntries      = 1000      // paths returned by List
	DefaultMaxHits      = 100       // hits returned by Search
	DefaultMaxFileBytes = 1 << 20   // files larger than this are skipped by Search
	maxHitText          = 300       // bytes of a matching line kept in a Hit
	maxWalkEntries      = 200000    // directory entries visited by one List or Search
	sniffLen            = 8 << 10   // bytes inspected to tell text from binary
)

// ReadFile returns the text of the file rel names. A file over maxBytes
// (DefaultMaxRead when maxBytes <= 0) is refused with ErrTooLarge rather than
// cut, so a model never reasons over half a file believing it whole. Files
// whose head holds a NUL byte or invalid UTF-8 are refused with ErrBinary.
func (w *Workspace) ReadFile(rel string, maxBytes int) (string, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRead
	}
	l, err := w.find("read", rel, false)
	if err != nil {
		return "", err
	}
	defer l.release()
	switch {
	case l.notDir:
		return "", fmt.Errorf("read %s: not a directory", rel)
	case l.info == nil:
		return "", fmt.Errorf("read %s: %w", rel, unwrapPathError(l.err))
	case l.info.IsDir():
		return "", fmt.Errorf("read %s: is a directory", rel)
	case !l.info.Mode().IsRegular():
		return "", fmt.Errorf("read %s: not a regular file", rel)
	case l.info.Size() > int64(maxBytes):
		return "", fmt.Errorf("read %s: %w: %d bytes, the limit is %d", rel, ErrTooLarge, l.info.Size(), maxBytes)
	}
	f, err := openFile(l.dir, l.name, l.info)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, unwrapPathError(err))
	}
	defer f.Close()
	// Read one byte past the limit: the file may have grown since Lstat.
	data, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, unwrapPathError(err))
	}
	if len(data) > maxBytes {
		return "", fmt.Errorf("read %s: %w: more than %d bytes", rel, ErrTooLarge, maxBytes)
	}
	if !isText(data) {
		return "", fmt.Errorf("read %s: %w (binary content)", rel, ErrBinary)
	}
	return string(data), nil
}

// find checks rel as given against the rules, locates it, and checks where
// it leads too; errors name rel as given and start with op. The caller must
// release the result.
func (w *Workspace) find(op, rel string, write bool) (*loc, error) {
	clean, err := cleanPath(rel)
	if err != nil {
		return nil, fmt.Errorf("%s %w", op, err)
	}
	forbidden := w.rules.denies
	if write {
		forbidden = w.rules.forbidsWrite
	}
	if forbidden(clean) {
		return nil, protectedFamily(op, rel, clean, write)
	}
	l, err := w.locate(clean)
	if errors.Is(err, errProtectedHop) {
		return nil, protected(op, rel)
	}
	if err != nil {
		return nil, fmt.Errorf("%s path %q: %w", op, rel, err)
	}
	if forbidden(l.rel) {
		l.release()
		return nil, protectedFamily(op, rel, l.rel, write)
	}
	if !write {
		return l, nil
	}
	// A skill's folder (one holding a SKILL.md), a git directory, another
	// repository or a virtual environment, found on disk.
	var fe *writepolicy.FolderError
	switch err := writepolicy.CheckWrite(w.dir, l.rel); {
	case errors.As(err, &fe):
		l.release()
		return nil, &protectedErr{msg: fmt.Sprintf("%s %s: %s (%s: %s %s)", op, rel, ErrProtected, fe.Family, fe.Folder, fe.Why)}
	case errors.Is(err, writepolicy.ErrDenied):
		l.release()
		return nil, protected(op, rel)
	}
	return l, nil
}

// protectedFamily is the refusal of rel. A place other tools run code
// from is named by its family, since protected's list does not hold it
// and a model should know that no declaration makes it writable.
func protectedFamily(op, rel, clean string, write bool) error {
	if f, ok := writepolicy.WriteFamily(clean); write && ok && (f == writepolicy.GitDir || f == writepolicy.Dependency) {
		return &protectedErr{msg: fmt.Sprintf("%s %s: %s (%s, which baton never lets a tool write)", op, rel, ErrProtected, f)}
	}
	return protected(op, rel)
}

// isText reports whether the head of data looks like UTF-8 text: no NUL
// bytes and valid encoding, allowing a rune cut short at the sniff boundary.
func isText(data []byte) bool {
	head := data
	cut := len(head) > sniffLen
	if cut {
		head = head[:sniffLen]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if utf8.Valid(head) {
		return true
	}
	if !cut {
		return false
	}
	// A multi-byte rune split by the cut is not evidence of binary content.
	for i := 1; i < utf8.UTFMax && i < len(head); i++ {
		if utf8.Valid(head[:len(head)-i]) {
			return true
		}
	}
	return false
}

// unwrapPathError drops the *fs.PathError wrapper, whose message repeats
// the absolute path; errors name the path as the caller gave it instead.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// WriteFile replaces the file rel names with data, atomically, creating
// missing parent directories inside the workspace. It writes only a path
// the Rules' Write patterns declare, and never a file that can be run: the
// file it leaves is not executable (0644 when new), a file with an exec
// bit is not written over, and a path that is or passes through a symlink,
// lies in a git-ignored folder the patterns do not name, or lands in a git
// directory, another repository, a virtual environment or a dependency
// folder (package writepolicy) is refused. A path that leaves the
// workspace is refused before anything is created.
func (w *Workspace) WriteFile(rel string, data []byte) error {
	// Each round creates one missing folder and locates the path afresh, so
	// every folder the file ends up in was checked as it was opened.
	for round := range maxWriteRounds {
		l, err := w.find("write", rel, true)
		if err != nil {
			return err
		}
		if err := w.mayWrite(l, rel, round == 0); err != nil {
			l.release()
			return err
		}
		if first, _, more := strings.Cut(l.name, "/"); more && !l.notDir {
			err := l.dir.Mkdir(first, 0o755)
			l.release()
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("write %s: %w", rel, unwrapPathError(err))
			}
			continue
		}
		err = w.writeAt(l, rel, data)
		l.release()
		return err
	}
	return fmt.Errorf("write %s: too many folders to create", rel)
}

// CheckWrite returns the error WriteFile(rel, ...) would refuse rel with,
// without writing: a caller that skips a write whose content is already
// there still tells a refused path apart.
func (w *Workspace) CheckWrite(rel string) error {
	l, err := w.find("write", rel, true)
	if err != nil {
		return err
	}
	defer l.release()
	if err := w.mayWrite(l, rel, true); err != nil {
		return err
	}
	if l.info != nil && l.info.Mode().IsRegular() && l.info.Mode().Perm()&0o111 != 0 {
		return executable(rel, l.info.Mode())
	}
	return nil
}

// mayWrite refuses a located path that passed through a symlink (locate
// then ends somewhere other than the path as given) and, once per
// WriteFile, a path the allow-list does not declare.
func (w *Workspace) mayWrite(l *loc, rel string, declared bool) error {
	clean, err := cleanPath(rel)
	if err != nil {
		return fmt.Errorf("write %w", err)
	}
	if l.rel != clean {
		return &refusal{kind: ErrSymlink, msg: fmt.Sprintf("write %s: %s (it leads to %s); baton never writes through one", rel, ErrSymlink, l.rel)}
	}
	if !declared {
		return nil
	}
	return w.checkDeclared(rel, clean)
}

// maxWriteRounds bounds the folders one WriteFile creates.
const maxWriteRounds = 64

func (w *Workspace) writeAt(l *loc, rel string, data []byte) error {
	switch {
	case l.rel == ".":
		return fmt.Errorf("write %s: is the workspace root", rel)
	case l.notDir:
		return fmt.Errorf("write %s: not a directory", rel)
	case l.info != nil && l.info.IsDir():
		return fmt.Errorf("write %s: is a directory", rel)
	case l.info != nil && !l.info.Mode().IsRegular():
		return fmt.Errorf("write %s: not a regular file", rel)
	case l.info != nil && l.info.Mode().Perm()&0o111 != 0:
		// A hook or a script: rewritten, it would run what a model wrote.
		return executable(rel, l.info.Mode())
	}
	perm := os.FileMode(0o644)
	if l.info != nil {
		perm = l.info.Mode().Perm() &^ 0o111
	}
	if err := atomicfile.WriteIn(l.dir, l.name, data, perm); err != nil {
		if errors.Is(err, atomicfile.ErrSymlink) {
			return fmt.Errorf("write %s: %w", rel, errChanged)
		}
		return fmt.Errorf("write %s: %w", rel, unwrapPathError(errors.Unwrap(err)))
	}
	return nil
}

// List returns the files whose workspace-relative path matches pattern,
// sorted, with forward slashes. Patterns are doublestar globs: *, ?, [class]
// and {a,b} alternatives (which may hold slashes), and a "**" segment
// matches any number of directories, including none; an empty pattern lists
// everything. A malformed pattern is an error wrapping ErrBadPattern.
// Hidden files and folders are skipped unless the pattern names them with a
// literal segment, and .git always is. Symlinks to files are listed only
// when they resolve inside the workspace; symlinked folders are not
// descended into, which keeps loops from mattering. When more than
// MaxListEntries files match, the first MaxListEntries (in walk order, then
// sorted) are returned with an error wrapping ErrTruncated.
func (w *Workspace) List(pattern string) ([]string, error) {
	var out []string
	err := w.walkMatches(pattern, func(rel string, _ *os.Root, _ string, _ fs.FileInfo) bool {
		out = append(out, rel)
		return len(out) < MaxListEntries
	})
	sort.Strings(out)
	if errors.Is(err, errStop) {
		return out, fmt.Errorf("list %q: %w at %d files", pattern, ErrTruncated, MaxListEntries)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errStop ends a walk early because a bound was reached.
var errStop = errors.New("stop")

// walkMatches calls fn for each regular file matching pattern, with its
// workspace-relative path, the open directory holding the file, its name
// there and its Lstat, until fn returns false (then it returns errStop).
// Denied paths are skipped as if absent.
func (w *Workspace) walkMatches(pattern string, fn func(rel string, dir *os.Root, name string, info fs.FileInfo) bool) error {
	g, err := compileGlob(pattern)
	if err != nil {
		return err
	}
	// Start at the longest literal prefix: it is cheaper, and locating it
	// applies the symlink checks to the part of the pattern we do not walk.
	base := "."
	if len(g.base) > 0 {
		base = strings.Join(g.base, "/")
	}
	l, err := w.find("list", base, false)
	if errors.Is(err, ErrProtected) {
		return nil // a denied folder lists as empty
	}
	if err != nil {
		return err
	}
	defer l.release()
	if l.name != "." {
		return nil // nothing matches under a missing folder or a file
	}
	tw := treeWalk{w: w, glob: g, fn: fn}
	entries, err := fs.ReadDir(l.dir.FS(), ".")
	if err != nil {
		return fmt.Errorf("list %q: %w", pattern, unwrapPathError(err))
	}
	walkErr := tw.walk(l.dir, g.base, strings.Split(l.rel, "/"), entries)
	if walkErr != nil && !errors.Is(walkErr, errStop) {
		return fmt.Errorf("list %q: %w", pattern, unwrapPathError(walkErr))
	}
	return walkErr
}

// treeWalk is one walk of walkMatches. Each folder is opened through its
// parent's handle and checked to be the folder that was listed, so the walk
// never wanders through a folder swapped for a symlink.
type treeWalk struct {
	w       *Workspace
	glob    *glob
	fn      func(rel string, dir *os.Root, name string, info fs.FileInfo) bool
	visited int
}

// walk visits entries, the sorted contents of dir. Its path is prefix as
// the pattern names it and real once symlinks are resolved ("." for the
// root); the rules are checked against both.
func (t *treeWalk) walk(dir *os.Root, prefix, real []string, entries []fs.DirEntry) error {
	if len(real) == 1 && real[0] == "." {
		real = nil
	}
	for _, d := range entries {
		t.visited++
		if t.visited > maxWalkEntries {
			return errStop
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") && !t.glob.literal[name] {
			continue
		}
		relSegs := append(prefix[:len(prefix):len(prefix)], name)
		realSegs := append(real[:len(real):len(real)], name)
		rel := strings.Join(relSegs, "/")
		// The folders above were checked on the way down.
		if t.w.rules.deniesExactly(rel) || t.w.rules.deniesExactly(strings.Join(realSegs, "/")) {
			continue
		}
		if d.IsDir() {
			if !t.glob.couldHold(relSegs) {
				continue
			}
			if err := t.descend(dir, name, relSegs, realSegs); err != nil {
				return err
			}
			continue
		}
		if !t.glob.match(rel) {
			continue
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// Listed only if it leads to a regular file inside the workspace
			// that the rules allow.
			l, err := t.w.find("list", rel, false)
			if err != nil {
				continue
			}
			ok := l.info != nil && l.info.Mode().IsRegular()
			more := !ok || t.fn(rel, l.dir, l.name, l.info)
			l.release()
			if !more {
				return errStop
			}
			continue
		}
		if !d.Type().IsRegular() {
			continue
		}
		info, err := dir.Lstat(name)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if !t.fn(rel, dir, name, info) {
			return errStop
		}
	}
	return nil
}

// descend walks the folder name under dir; an unreadable or changed folder
// is skipped, not fatal.
func (t *treeWalk) descend(dir *os.Root, name string, relSegs, realSegs []string) error {
	info, err := dir.Lstat(name)
	if err != nil || !info.IsDir() {
		return nil
	}
	sub, err := openDir(dir, name, info)
	if err != nil {
		return nil
	}
	defer sub.Close()
	entries, err := fs.ReadDir(sub.FS(), ".")
	if err != nil {
		return nil
	}
	return t.walk(sub, relSegs, realSegs, entries)
}

// SearchOptions tunes Search. The zero value searches every text file for
// a literal, case-sensitive substring with the default bounds.
type SearchOptions struct {
	Regexp       bool   // query is a Go regular expression
	IgnoreCase   bool   // match regardless of case
	Glob         string // files to search, as for List; empty means all
	MaxHits      int    // DefaultMaxHits when <= 0
	MaxFileBytes int    // DefaultMaxFileBytes when <= 0; larger files are skipped
}

// Hit is one matching line. Line counts from 1; Text is the line, cut to
// a few hundred bytes so one minified file cannot flood the result.
type Hit struct {
	Path string
	Line int
	Text string
}

// Search returns the lines of text files that contain query. Binary and
// oversized files are skipped silently: a search is a lookup, not a read.
// When MaxHits is reached the hits so far are returned with an error
// wrapping ErrTruncated.
func (w *Workspace) Search(query string, opts SearchOptions) ([]Hit, error) {
	if query == "" {
		return nil, fmt.Errorf("search: the query is empty")
	}
	if opts.MaxHits <= 0 {
		opts.MaxHits = DefaultMaxHits
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	match, err := matcher(query, opts)
	if err != nil {
		return nil, err
	}
	var hits []Hit
	var fileErr error
	err = w.walkMatches(opts.Glob, func(rel string, dir *os.Root, name string, info fs.FileInfo) bool {
		fileErr = searchFile(rel, dir, name, info, opts.MaxFileBytes, match, func(h Hit) bool {
			hits = append(hits, h)
			return len(hits) < opts.MaxHits
		})
		return fileErr == nil
	})
	if errors.Is(err, errStop) {
		if errors.Is(fileErr, errStop) || len(hits) >= opts.MaxHits {
			return hits, fmt.Errorf("search %q: %w at %d hits", query, ErrTruncated, opts.MaxHits)
		}
		return hits, fmt.Errorf("search %q: %w", query, ErrTruncated)
	}
	if err != nil {
		return nil, fmt.Errorf("search %w", err)
	}
	return hits, nil
}

func matcher(query string, opts SearchOptions) (func(string) bool, error) {
	if opts.Regexp {
		expr := query
		if opts.IgnoreCase {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			return nil, fmt.Errorf("search: bad regular expression: %s", msg)
		}
		return re.MatchString, nil
	}
	if opts.IgnoreCase {
		q := strings.ToLower(query)
		return func(s string) bool { return strings.Contains(strings.ToLower(s), q) }, nil
	}
	return func(s string) bool { return strings.Contains(s, query) }, nil
}

// searchFile scans one file; it returns errStop when add asks to stop.
func searchFile(rel string, dir *os.Root, name string, info fs.FileInfo, maxBytes int, match func(string) bool, add func(Hit) bool) error {
	if info.Size() > int64(maxBytes) {
		return nil
	}
	f, err := openFile(dir, name, info)
	if err != nil {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	f.Close()
	if err != nil || len(data) > maxBytes || !isText(data) {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxBytes+1)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if !match(text) {
			continue
		}
		if len(text) > maxHitText {
			text = strings.ToValidUTF8(text[:maxHitText], "") + "…"
		}
		if !add(Hit{Path: rel, Line: line, Text: strings.TrimRight(text, "\r")}) {
			return errStop
		}
	}
	return nil
}
