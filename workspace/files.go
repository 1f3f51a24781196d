package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/atomicfile"
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
	p, err := w.Resolve(rel)
	if err != nil {
		return "", fmt.Errorf("read %w", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, unwrapPathError(err))
	}
	if fi.IsDir() {
		return "", fmt.Errorf("read %s: is a directory", rel)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("read %s: not a regular file", rel)
	}
	if fi.Size() > int64(maxBytes) {
		return "", fmt.Errorf("read %s: %w: %d bytes, the limit is %d", rel, ErrTooLarge, fi.Size(), maxBytes)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, unwrapPathError(err))
	}
	defer f.Close()
	// Read one byte past the limit: the file may have grown since Stat.
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
// missing parent directories inside the workspace. A path that is, or runs
// through, a symlink leading outside the workspace is refused before
// anything is created.
func (w *Workspace) WriteFile(rel string, data []byte) error {
	p, err := w.Resolve(rel)
	if err != nil {
		return fmt.Errorf("write %w", err)
	}
	if p == w.root {
		return fmt.Errorf("write %s: is the workspace root", rel)
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("write %s: is a directory", rel)
		}
		perm = fi.Mode().Perm()
	}
	if err := atomicfile.Write(p, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", rel, unwrapPathError(errors.Unwrap(err)))
	}
	return nil
}

// List returns the files whose workspace-relative path matches pattern,
// sorted, with forward slashes. Pattern segments use path.Match syntax, and
// a "**" segment matches any number of directories, including none; an empty
// pattern lists everything. Hidden files and folders are skipped unless the
// pattern names them with a literal segment, and .git always is. Symlinks
// to files are listed only when they resolve inside the workspace; symlinked
// folders are not descended into, which keeps loops from mattering. When more than
// MaxListEntries files match, the first MaxListEntries (in walk order,
// then sorted) are returned with an error wrapping ErrTruncated.
func (w *Workspace) List(pattern string) ([]string, error) {
	var out []string
	err := w.walkMatches(pattern, func(rel, _ string) bool {
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

// walkMatches calls fn with the relative and absolute path of each file
// matching pattern until fn returns false (then it returns errStop).
func (w *Workspace) walkMatches(pattern string, fn func(rel, abs string) bool) error {
	pat := strings.Trim(filepath.ToSlash(pattern), "/")
	if strings.HasPrefix(filepath.ToSlash(pattern), "/") {
		return fmt.Errorf("pattern %q is absolute: %w", pattern, ErrOutsideWorkspace)
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return fmt.Errorf("pattern %q contains a NUL byte", pattern)
	}
	if pat != "" {
		// "./docs/*.md" and "docs//*.md" name the same files as "docs/*.md",
		// and results should read the same way.
		pat = path.Clean(pat)
	}
	if pat == "" || pat == "." {
		pat = "**"
	}
	segs := strings.Split(pat, "/")
	literal := map[string]bool{}
	for _, s := range segs {
		if s == ".." {
			return fmt.Errorf("pattern %q: %w", pattern, ErrOutsideWorkspace)
		}
		if _, err := path.Match(s, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", pattern, err)
		}
		if !hasMeta(s) {
			literal[s] = true
		}
	}
	// Start at the longest literal prefix: it is cheaper, and resolving it
	// applies the symlink checks to the part of the pattern we do not walk.
	n := 0
	for n < len(segs)-1 && !hasMeta(segs[n]) && segs[n] != "**" {
		n++
	}
	base := "."
	if n > 0 {
		base = strings.Join(segs[:n], "/")
	}
	start, err := w.Resolve(base)
	if err != nil {
		return fmt.Errorf("list %w", err)
	}
	if fi, err := os.Stat(start); err != nil || !fi.IsDir() {
		return nil // nothing matches under a missing folder or a file
	}
	visited := 0
	walkErr := filepath.WalkDir(start, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			if abs == start {
				return err
			}
			return nil // unreadable entries are skipped, not fatal
		}
		visited++
		if visited > maxWalkEntries {
			return errStop
		}
		if abs == start {
			return nil
		}
		name := d.Name()
		if name == ".git" || (strings.HasPrefix(name, ".") && !literal[name]) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		suffix, _ := filepath.Rel(start, abs)
		relSegs := append(append([]string(nil), segs[:n]...), splitPath(suffix)...)
		rel := strings.Join(relSegs, "/")
		if d.IsDir() {
			if !matchPrefix(segs, relSegs) {
				return fs.SkipDir
			}
			return nil
		}
		if !matchSegs(segs, relSegs) {
			return nil
		}
		real := abs
		if d.Type()&fs.ModeSymlink != 0 {
			r, err := w.Resolve(rel)
			if err != nil {
				return nil
			}
			fi, err := os.Stat(r)
			if err != nil || !fi.Mode().IsRegular() {
				return nil
			}
			real = r
		} else if !d.Type().IsRegular() {
			return nil
		}
		if !fn(rel, real) {
			return errStop
		}
		return nil
	})
	if walkErr != nil && !errors.Is(walkErr, errStop) {
		return fmt.Errorf("list %q: %w", pattern, unwrapPathError(walkErr))
	}
	return walkErr
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchSegs reports whether the path segments name match the pattern
// segments pat, where "**" matches zero or more segments. It fills a table
// rather than backtracking, so a model's pattern with many "**" costs
// len(pat)×len(name) steps, not exponentially many.
func matchSegs(pat, name []string) bool {
	// ok[j] is whether pat[i:] matches name[j:], for the current i.
	ok := make([]bool, len(name)+1)
	ok[len(name)] = true // the empty pattern matches only the empty name
	for i := len(pat) - 1; i >= 0; i-- {
		next := ok
		ok = make([]bool, len(name)+1)
		if pat[i] == "**" {
			// ** matches name[j:k] for any k >= j, then pat[i+1:] the rest.
			ok[len(name)] = next[len(name)]
			for j := len(name) - 1; j >= 0; j-- {
				ok[j] = next[j] || ok[j+1]
			}
			continue
		}
		for j := 0; j < len(name); j++ {
			if next[j+1] {
				m, _ := path.Match(pat[i], name[j])
				ok[j] = m
			}
		}
	}
	return ok[0]
}

// matchPrefix reports whether a directory with path segments dir could hold
// a match, so the walk can skip folders that cannot.
func matchPrefix(pat, dir []string) bool {
	for i, s := range dir {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[i], s); !ok {
			return false
		}
	}
	return len(dir) < len(pat)
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
	err = w.walkMatches(opts.Glob, func(rel, abs string) bool {
		fileErr = searchFile(rel, abs, opts.MaxFileBytes, match, func(h Hit) bool {
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
func searchFile(rel, abs string, maxBytes int, match func(string) bool, add func(Hit) bool) error {
	fi, err := os.Stat(abs)
	if err != nil || fi.Size() > int64(maxBytes) {
		return nil
	}
	data, err := os.ReadFile(abs)
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
