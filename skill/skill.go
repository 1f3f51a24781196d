// Package skill loads SKILL.md files as defined by the Agent Skills
// specification and holds the library of skills baton's sub-agents run with.
//
// A SKILL.md is YAML frontmatter (name, description and a few optional
// fields) followed by a markdown body; baton uses the body as the system
// prompt of every sub-agent assigned that skill. Problems come in two
// severities: an error makes the skill unusable and it is not loaded, a
// warning is reported but the skill loads. Skills written for other hosts
// routinely carry extra keys or long descriptions, and refusing them would
// make baton useless with the skills people already have.
//
// baton is lenient where the file's meaning is unambiguous: a UTF-8 byte
// order mark is skipped with a warning, CRLF line endings are read as LF,
// allowed-tools may be a YAML list as well as a space-separated string, and
// scalar metadata values that are not strings keep their source text.
// Lookups in a Library ignore case and treat "_", "-" and spaces alike,
// because planners write skill names loosely.
package skill

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidSkill is wrapped by every error that reports a skill with
// error-severity problems.
var ErrInvalidSkill = errors.New("invalid skill")

// ErrNoSkill is wrapped when a path holds no SKILL.md at all.
var ErrNoSkill = errors.New("no SKILL.md found")

// Limits from the Agent Skills specification.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
)

// FileName is the name a skill's file must have inside its folder.
const FileName = "SKILL.md"

// OutputHintKey is the metadata key whose value baton appends to a
// sub-agent's prompt to shape its answer. It lives in metadata because the
// specification allows no other place for host-specific settings.
const OutputHintKey = "output-hint"

// Skill is one loaded SKILL.md.
type Skill struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string
	// Model is the frontmatter's model: key, which the Agent Skills
	// specification does not define but suites written for Claude Code
	// use: an alias (opus, sonnet, haiku, inherit) or a full model name.
	// The runner resolves it for the run's provider (package modelalias).
	Model string
	// Body is the markdown after the frontmatter, trimmed; baton sends it as
	// the system prompt.
	Body string
	// OutputHint is Metadata[OutputHintKey], if any.
	OutputHint string
	// Path is the file the skill was read from; for built-ins it is the path
	// inside baton's embedded files.
	Path    string
	BuiltIn bool
}

// Source says where the skill came from, for listings.
func (s *Skill) Source() string {
	if s.BuiltIn {
		return "built-in"
	}
	return s.Path
}

// clone returns a deep copy so that libraries never share mutable state.
func (s *Skill) clone() *Skill {
	c := *s
	if s.Metadata != nil {
		c.Metadata = make(map[string]string, len(s.Metadata))
		for k, v := range s.Metadata {
			c.Metadata[k] = v
		}
	}
	c.AllowedTools = append([]string(nil), s.AllowedTools...)
	return &c
}

// Severity ranks a problem.
type Severity int

const (
	// Warning problems are reported; the skill still loads.
	Warning Severity = iota
	// Error problems make the skill unusable.
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Problem is one finding about a SKILL.md. Field names the frontmatter key
// concerned, or "frontmatter", "body" or "file" for problems with the
// file's shape.
type Problem struct {
	Severity Severity
	Path     string
	Field    string
	Message  string
}

// String formats the problem as one line: "error: path: field: message".
func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s: %s", p.Severity, p.Path, p.Field, p.Message)
}

// HasErrors reports whether any problem is error-severity.
func HasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == Error {
			return true
		}
	}
	return false
}

// InvalidError reports a skill that could not be loaded. It matches
// ErrInvalidSkill with errors.Is.
type InvalidError struct {
	Path     string
	Problems []Problem // error-severity problems only
}

func (e *InvalidError) Error() string {
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		msgs = append(msgs, p.Field+": "+p.Message)
	}
	return fmt.Sprintf("%s: %s: %s", ErrInvalidSkill, e.Path, strings.Join(msgs, "; "))
}

// Is makes errors.Is(err, ErrInvalidSkill) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalidSkill }

// invalid builds the error for a problem list that contains errors, or nil.
func invalid(path string, ps []Problem) error {
	var errs []Problem
	for _, p := range ps {
		if p.Severity == Error {
			errs = append(errs, p)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Path: path, Problems: errs}
}
