package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/internal/fuzzy"
	"github.com/baton-dev/baton/skill"
)

// SkillsListIn optionally filters the list.
type SkillsListIn struct {
	Query string `json:"query,omitempty" jsonschema:"words that must each appear in a skill's name or description (case does not matter); empty for every skill"`
}

// SkillInfo is one skill in a listing.
type SkillInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"` // "built-in" or the SKILL.md it was read from
}

// SkillsListOut is the library, sorted by name.
type SkillsListOut struct {
	Skills []SkillInfo `json:"skills"`
	// Warnings are the problems found loading --skills folders that did
	// not stop a skill from loading.
	Warnings []string `json:"warnings,omitempty"`
}

// SkillGetIn names one skill.
type SkillGetIn struct {
	Name string `json:"name" jsonschema:"the skill's name; case does not matter, and underscores and spaces match hyphens"`
}

// SkillGetOut is one skill: its front matter and its body, the system
// prompt a sub-agent assigned the skill receives.
type SkillGetOut struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Body          string            `json:"body"`
	Source        string            `json:"source"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
	Model         string            `json:"model,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
}

// loadSkills builds the library as `baton ask --skills` does: the
// built-ins, then each folder, a custom skill replacing a built-in of the
// same name. An invalid custom skill refuses the server, as it fails
// `baton skills`: answering without a skill the user named would mislead.
func loadSkills(dirs []string) (*skill.Library, []string, error) {
	lib := skill.Builtins()
	var warnings []string
	for _, d := range dirs {
		problems, err := lib.AddDir(d)
		if err != nil {
			if errors.Is(err, skill.ErrInvalidSkill) {
				return nil, nil, fmt.Errorf("--skills %s: %s; run baton skills validate %s", d, oneLine(err.Error()), d)
			}
			return nil, nil, fmt.Errorf("--skills %s: %w", d, plainPathErr(err))
		}
		for _, p := range problems {
			warnings = append(warnings, p.String())
		}
	}
	return lib, warnings, nil
}

func (s *Server) addSkillTools() {
	addTool(s, &mcp.Tool{Name: "skills_list", Annotations: readOnly,
		Description: "List the skills baton's sub-agents run with (its built-ins and any --skills folders): name, description and where each came from. Every skill is also a prompt of the same name."},
		s.skillsList)
	addTool(s, &mcp.Tool{Name: "skill_get", Annotations: readOnly,
		Description: "One skill's front matter and body (the system prompt a sub-agent assigned the skill receives). An unknown name is an error that names the nearest skills."},
		s.skillGet)
}

func (s *Server) skillsList(_ context.Context, _ *mcp.CallToolRequest, in SkillsListIn) (*mcp.CallToolResult, SkillsListOut, error) {
	words := strings.Fields(strings.ToLower(in.Query))
	out := SkillsListOut{Skills: []SkillInfo{}, Warnings: s.skillWarnings}
	for _, sk := range s.skills.List() {
		hay := strings.ToLower(sk.Name + " " + sk.Description)
		if !all(words, func(w string) bool { return strings.Contains(hay, w) }) {
			continue
		}
		out.Skills = append(out.Skills, SkillInfo{Name: sk.Name, Description: sk.Description, Source: sk.Source()})
	}
	return nil, out, nil
}

func all(ws []string, f func(string) bool) bool {
	for _, w := range ws {
		if !f(w) {
			return false
		}
	}
	return true
}

func (s *Server) skillGet(_ context.Context, _ *mcp.CallToolRequest, in SkillGetIn) (*mcp.CallToolResult, SkillGetOut, error) {
	sk, err := s.lookupSkill(in.Name)
	if err != nil {
		return nil, SkillGetOut{}, err
	}
	return nil, SkillGetOut{Name: sk.Name, Description: sk.Description, Body: sk.Body, Source: sk.Source(),
		License: sk.License, Compatibility: sk.Compatibility, AllowedTools: sk.AllowedTools, Model: sk.Model,
		Metadata: sk.Metadata}, nil
}

// lookupSkill finds a skill by name (skill.Key's loose matching), and for
// an unknown one says which names are near it, or all of them.
func (s *Server) lookupSkill(name string) (*skill.Skill, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("no skill name given")
	}
	if sk, ok := s.skills.Get(name); ok {
		return sk, nil
	}
	if near := nearestSkills(name, s.skills.Names(), 3); len(near) > 0 {
		return nil, fmt.Errorf("unknown skill %q; did you mean %s?", name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("unknown skill %q; available: %s", name, strings.Join(s.skills.Names(), ", "))
}

// nearestSkills returns up to n names close to name: those that contain it
// or are contained in it first, then those within a third of its length
// in edits or sharing its first four letters ("summary", "summarization"),
// nearest first.
func nearestSkills(name string, names []string, n int) []string {
	k := skill.Key(name)
	if len(k) > 4*skill.MaxNameLen {
		return nil // no skill name is near a text that long
	}
	type cand struct {
		name string
		rank int
	}
	var cs []cand
	for _, nm := range names {
		nk := skill.Key(nm)
		switch d := fuzzy.Distance(k, nk, len(k)+len(nk)); {
		case strings.Contains(nk, k) || strings.Contains(k, nk):
			cs = append(cs, cand{nm, 0})
		case 3*d <= max(len([]rune(k)), 3) || commonPrefix(k, nk) >= 4:
			cs = append(cs, cand{nm, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.rank - b.rank })
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
