package skill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxFileSize bounds how much of a SKILL.md baton reads. The largest public
// skills are under 100 KB; anything far larger is not a system prompt.
const MaxFileSize = 1 << 20

// LoadDir loads the skill in dir, which is a folder holding SKILL.md or the
// path of a SKILL.md itself. Errors reading the file are returned as they
// are; a skill with error-severity problems yields an *InvalidError.
func LoadDir(dir string) (*Skill, []Problem, error) {
	path := dir
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("skill: %w", err)
	}
	if fi.IsDir() {
		path = filepath.Join(dir, FileName)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("skill: %s: %w", dir, ErrNoSkill)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("skill: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("skill: read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		ps := []Problem{{Severity: Error, Path: path, Field: "file", Message: fmt.Sprintf("is larger than %d bytes", MaxFileSize)}}
		return nil, ps, invalid(path, ps)
	}
	return Parse(data, path)
}

// Result is the outcome of loading one SKILL.md found by Scan.
type Result struct {
	Path     string
	Skill    *Skill // nil when the skill has errors
	Problems []Problem
	Err      error // wraps ErrInvalidSkill, or reports an I/O failure
}

func loadResult(path string) Result {
	s, ps, err := LoadDir(path)
	p := path
	if isDir(path) {
		p = filepath.Join(path, FileName)
	}
	return Result{Path: p, Skill: s, Problems: ps, Err: err}
}

func exists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Library is a set of skills looked up by name. The zero value is an empty
// library; Builtins returns one holding baton's own skills.
type Library struct {
	skills map[string]*Skill
}

// NewLibrary returns an empty library.
func NewLibrary() *Library { return &Library{skills: make(map[string]*Skill)} }

// Key is the form names are matched in: lower case, with runs of spaces,
// underscores and hyphens read as one hyphen. Planners write
// "fact_extraction" or "Fact Extraction" for the skill fact-extraction, and
// a near miss should not silently fall back to the generic prompt.
func Key(name string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r == '_' || r == '-' || r == ' ' || r == '\t' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// Add puts s in the library, replacing any skill with the same key.
func (l *Library) Add(s *Skill) {
	if l.skills == nil {
		l.skills = make(map[string]*Skill)
	}
	l.skills[Key(s.Name)] = s
}

// AddDir loads the skills under dir (see Scan) and adds the valid ones,
// replacing built-ins of the same name. A custom skill replacing another
// custom skill is reported as a warning, since one of them is then unused.
// The error wraps ErrInvalidSkill when any skill could not be loaded; the
// valid ones are added regardless.
func (l *Library) AddDir(dir string) ([]Problem, error) {
	results, err := Scan(dir)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	var errs []error
	for _, r := range results {
		problems = append(problems, r.Problems...)
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		if old, ok := l.skills[Key(r.Skill.Name)]; ok && !old.BuiltIn {
			problems = append(problems, Problem{Severity: Warning, Path: r.Path, Field: "name",
				Message: fmt.Sprintf("%q replaces the skill of the same name from %s", r.Skill.Name, old.Path)})
		}
		l.Add(r.Skill)
	}
	if len(errs) == 0 {
		return problems, nil
	}
	return problems, invalidSet(errs)
}

// invalidSet reports several invalid skills on one line, as baton's errors
// are printed, while errors.Is and errors.As still see each of them.
type invalidSet []error

func (e invalidSet) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e invalidSet) Unwrap() []error { return e }

// Get finds a skill by name; see Key for how names match.
func (l *Library) Get(name string) (*Skill, bool) {
	s, ok := l.skills[Key(name)]
	return s, ok
}

// List returns the skills sorted by name.
func (l *Library) List() []*Skill {
	out := make([]*Skill, 0, len(l.skills))
	for _, s := range l.skills {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the skill names sorted.
func (l *Library) Names() []string {
	var names []string
	for _, s := range l.List() {
		names = append(names, s.Name)
	}
	return names
}

// Resolve is Get with the fallback a plan needs: an unknown name yields the
// generic analyst skill, and found reports whether the name was known so the
// caller can record the substitution.
func (l *Library) Resolve(name string) (s *Skill, found bool) {
	if s, ok := l.Get(name); ok {
		return s, true
	}
	return Generic(), false
}

// Catalog lists the skills for a planner's prompt, one "- name: description"
// line each, sorted by name. Descriptions are folded onto one line, since a
// planner matches on them and a stray line break reads as a new entry.
func (l *Library) Catalog() string {
	var b strings.Builder
	for _, s := range l.List() {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, strings.Join(strings.Fields(s.Description), " "))
	}
	return b.String()
}
