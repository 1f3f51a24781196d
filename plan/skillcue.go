package plan

import (
	"strings"
	"unicode"
)

// skillCues maps cue word stems to the skill they suggest, in priority order.
// A cue ending in "*" matches any word it begins, a cue with a space matches
// that phrase, a cue starting with "^" only the question's first word;
// others match whole words.
var skillCues = []struct {
	skill string
	cues  []string
}{
	{"analytical-comparison", []string{"compar*", "versus", "vs", "differ*", "contrast*"}},
	{"causal-reasoning", []string{"why", "cause*", "caus*", "because", "impact*", "effect", "effects", "consequence*", "lead to", "led to"}},
	{"summarization", []string{"summar*", "overview", "gist"}},
	{"classification", []string{"classif*", "categor*", "which type", "what type", "which kind", "what kind"}},
	{"critique", []string{"critique*", "critici*", "weakness*", "assess*", "evaluat*", "sound"}},
	{"gap-analysis", []string{"missing", "gap", "gaps", "lack*", "omit*", "omission*"}},
	// "plan" asks for synthesis as a verb or as something to produce ("draft
	// a plan"), not when the task asks about a plan the document describes
	// ("the per-seat plan"); "^" marks the first word of the question.
	{"structured-synthesis", []string{"combin*", "synthes*", "overall", "^plan", "a plan", "to plan", "recommend*"}},
}

const fallbackSkill = "fact-extraction"

// cueSkill returns the skill the question's wording suggests.
func cueSkill(q string) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	joined := " " + strings.Join(words, " ") + " "
	for _, sc := range skillCues {
		for _, cue := range sc.cues {
			if first, ok := strings.CutPrefix(cue, "^"); ok {
				if len(words) > 0 && words[0] == first {
					return sc.skill
				}
				continue
			}
			if strings.Contains(cue, " ") {
				if strings.Contains(joined, " "+cue+" ") {
					return sc.skill
				}
				continue
			}
			stem, prefix := strings.CutSuffix(cue, "*")
			for _, w := range words {
				if w == stem || (prefix && strings.HasPrefix(w, stem)) {
					return sc.skill
				}
			}
		}
	}
	return fallbackSkill
}

// chooseSkill maps the cue skill onto the caller's library: the same name,
// or its underscore form, or else the first skill given.
func chooseSkill(q string, skills []SkillInfo) string {
	want := cueSkill(q)
	if len(skills) == 0 {
		return want
	}
	under := strings.ReplaceAll(want, "-", "_")
	for _, s := range skills {
		if strings.EqualFold(s.Name, want) || strings.EqualFold(s.Name, under) {
			return s.Name
		}
	}
	return skills[0].Name
}
