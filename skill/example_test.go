package skill_test

import (
	"fmt"

	"github.com/baton-dev/baton/skill"
)

// A plan may name a skill loosely; the library still finds it, and an
// unknown name falls back to the generic prompt.
func ExampleLibrary_Get() {
	lib := skill.Builtins()
	for _, name := range []string{"fact_extraction", "Gap Analysis", "poetry"} {
		s, ok := lib.Get(name)
		if !ok {
			s = skill.Generic()
		}
		fmt.Printf("%s -> %s\n", name, s.Name)
	}
	// Output:
	// fact_extraction -> fact-extraction
	// Gap Analysis -> gap-analysis
	// poetry -> generic
}

func ExampleParse() {
	src := "---\nname: tidy\ndescription: Tidy up prose.\nmodel: haiku\neffort: low\n---\nRewrite the text more plainly.\n"
	s, problems, err := skill.Parse([]byte(src), "tidy/SKILL.md")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, "|", s.Model, "|", s.Body)
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// tidy | haiku | Rewrite the text more plainly.
	// warning: tidy/SKILL.md: effort: is not part of the Agent Skills specification; baton ignores it
}
