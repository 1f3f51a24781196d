package skill

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxScanEntries bounds the folder entries one Scan visits: pointed at a
// home folder by mistake, a scan ends with a warning instead of walking
// every file the user has.
var maxScanEntries = 200_000 // a variable so a test can lower it

// Scan loads every skill under path: a skill folder, a SKILL.md, or a
// folder holding skill folders at any depth, as suites arrange them
// (skills/<group>/<area>/<name>/SKILL.md). A folder holding a SKILL.md is
// one skill, and its sub-folders are its own files (scripts, references),
// not more skills. Hidden folders such as .git and node_modules are
// skipped. Symlinked folders are not walked, which keeps a link to an
// ancestor or to a large tree elsewhere from mattering; a link to a skill
// folder outside the tree still loads that skill, as users link skills
// they keep in other checkouts.
//
// A top-level folder with no SKILL.md at any depth produces a warning. The
// error is for a path that cannot be read or holds no skill at all;
// problems with individual skills are in the results.
func Scan(path string) ([]Result, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	if !fi.IsDir() || exists(filepath.Join(path, FileName)) {
		return []Result{loadResult(path)}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	s := scanner{}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		s.rootReal = real
	}
	for _, e := range entries {
		if skipFolder(e.Name()) {
			continue
		}
		sub := filepath.Join(path, e.Name())
		before := len(s.results)
		s.visit(sub, e)
		if len(s.results) == before && e.IsDir() && !s.stopped {
			s.warn(sub, "folder has no "+FileName+" in it or below it; skipped")
		}
	}
	if len(s.results) == 0 {
		return nil, fmt.Errorf("skill: %s: %w (neither in it nor in any folder below it)", path, ErrNoSkill)
	}
	if len(s.skipped) > 0 {
		// Attach the skip warnings to the first result so no finding is lost.
		s.results[0].Problems = append(s.skipped, s.results[0].Problems...)
	}
	return s.results, nil
}

// scanner is one Scan's walk.
type scanner struct {
	rootReal string // the scanned folder with symlinks resolved
	results  []Result
	skipped  []Problem
	visited  int
	stopped  bool
}

func (s *scanner) warn(path, msg string) {
	s.skipped = append(s.skipped, Problem{Severity: Warning, Path: path, Field: "file", Message: msg})
}

// visit looks at one entry of a folder being walked.
func (s *scanner) visit(path string, d fs.DirEntry) {
	if s.stopped {
		return
	}
	if s.visited++; s.visited > maxScanEntries {
		s.stopped = true
		s.warn(path, fmt.Sprintf("the scan stopped after %d folder entries; point it at the folder that holds the skills", maxScanEntries))
		return
	}
	if d.Type()&fs.ModeSymlink != 0 {
		s.visitLink(path)
		return
	}
	if !d.IsDir() {
		return
	}
	if exists(filepath.Join(path, FileName)) {
		s.results = append(s.results, loadResult(path))
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		s.warn(path, fmt.Sprintf("folder cannot be read (%v); skipped", unwrapPathErr(err)))
		return
	}
	for _, e := range entries {
		if !skipFolder(e.Name()) {
			s.visit(filepath.Join(path, e.Name()), e)
		}
	}
}

// visitLink loads a symlinked skill folder as one skill, and walks no
// linked folder.
func (s *scanner) visitLink(path string) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return // a link to a file, or a dangling one, is no skill folder
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && s.rootReal != "" && within(s.rootReal, real) {
		return // the walk reaches it, or skips it, under its own name
	}
	if !exists(filepath.Join(path, FileName)) {
		s.warn(path, "is a symbolic link to a folder with no "+FileName+"; baton does not walk linked folders")
		return
	}
	s.results = append(s.results, loadResult(path))
}

// within reports whether path is root or lies below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// skipFolder reports the entries a scan never enters: hidden ones (.git,
// .cache) and node_modules, which hold other people's files, never the
// user's skills.
func skipFolder(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
