package skill

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sync"
)

// The built-in skills are the eight analytical primitives a planner can
// compose tasks from; a small, well-separated set is what a planner can
// choose from reliably in one pass.
//
//go:embed builtin/*/SKILL.md generic/SKILL.md
var builtinFS embed.FS

// builtinSkills parses the embedded skills once. They are fixed at compile
// time and tests require them to have no problems at all, so a failure here
// is a bug in baton, not bad input.
var builtinSkills = sync.OnceValues(func() ([]*Skill, *Skill) {
	dirs, err := fs.ReadDir(builtinFS, "builtin")
	if err != nil {
		panic(fmt.Sprintf("skill: embedded built-ins: %v", err))
	}
	var skills []*Skill
	for _, d := range dirs {
		skills = append(skills, mustParseEmbedded(path.Join("builtin", d.Name(), FileName)))
	}
	return skills, mustParseEmbedded(path.Join("generic", FileName))
})

func mustParseEmbedded(p string) *Skill {
	data, err := builtinFS.ReadFile(p)
	if err != nil {
		panic(fmt.Sprintf("skill: embedded %s: %v", p, err))
	}
	s, _, err := Parse(data, p)
	if err != nil {
		panic(fmt.Sprintf("skill: embedded %s: %v", p, err))
	}
	s.BuiltIn = true
	return s
}

// Builtins returns a new library holding the built-in skills. Each call
// returns an independent copy, so adding custom skills to one library never
// affects another.
func Builtins() *Library {
	skills, _ := builtinSkills()
	l := NewLibrary()
	for _, s := range skills {
		l.Add(s.clone())
	}
	return l
}

// Generic returns the analyst prompt used when a plan names a skill the
// library does not have. It is not in any library, so a planner never picks
// it on purpose.
func Generic() *Skill {
	_, g := builtinSkills()
	return g.clone()
}
