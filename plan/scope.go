package plan

import (
	"strings"
	"unicode"
)

// The cues that make the retrieval planner give a question ScopeAll. They
// are deliberately narrow: "How many customers were affected?" is a lookup
// that one section answers, and a slice is far cheaper than reading
// everything. Only wording that asks for a count or a list over the whole
// document, or for the sections that mention something, qualifies.
var (
	// allPhrases anywhere in the question.
	allPhrases = []string{
		"how many times", "how often", "number of times", "number of mentions", "number of sections",
		"list every", "list all", "list each", "name every", "name all", "name each",
		"every section", "all sections", "each section", "every part", "all parts", "each part",
		"every document", "all documents", "each document", "every chapter", "all chapters",
		"every mention", "all mentions", "every occurrence", "all occurrences", "every instance", "all instances",
		"which sections", "which parts", "which documents", "which chapters", "what sections",
		"in which sections", "in which documents",
	}
	// countWhole are words that, after "how many", make it a count over the
	// whole document rather than a figure one section states.
	countWhole = []string{"sections", "parts", "documents", "chapters", "mentions", "occurrences", "entries", "headings"}
	// countSpan are phrases that, with "how many", say the count runs
	// across the document.
	countSpan = []string{"in total", "altogether", "across", "in all", "throughout", "in the whole", "in the entire", "overall"}
)

// NeedsEveryPart reports whether a question's answer depends on every part
// of the document (see ScopeAll), judged from its wording alone: a request
// to count or list across the whole document, or to say which sections
// mention something. It is conservative, since a wrong yes costs a read of
// everything and a wrong no a slice that may miss parts.
func NeedsEveryPart(q string) bool {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	joined := " " + strings.Join(words, " ") + " "
	has := func(phrase string) bool { return strings.Contains(joined, " "+phrase+" ") }
	for _, p := range allPhrases {
		if has(p) {
			return true
		}
	}
	if len(words) > 0 && words[0] == "count" {
		return true // "Count the incidents ..."
	}
	if !has("how many") {
		return false
	}
	for _, w := range countWhole {
		if has("how many " + w) {
			return true
		}
	}
	for _, p := range countSpan {
		if has(p) {
			return true
		}
	}
	return false
}
