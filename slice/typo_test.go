package slice

import (
	"strings"
	"testing"
)

// A typo is accepted only where it cannot be read as another real word. Each
// pair here is a pointer that is a real word and a heading one letter away:
// binding them would hand a sub-agent the wrong section, which is worse than
// the whole document.
func TestTypoNeverBindsAnotherRealWord(t *testing.T) {
	pairs := []struct{ ptr, heading string }{
		{"Posting", "Hosting"},
		{"Testing", "Nesting"},
		{"Cost", "Host"},
		{"Hosting", "Posting"},
		{"Billing", "Filling"},
		{"Mailing", "Sailing"},
		{"Reading", "Heading"},
		{"Sorting", "Porting"},
		{"Matrices", "Metrices"},
		{"Pricing", "Prizing"},
		{"Staging", "Stating"},
		{"Caching", "Cashing"},
		{"Loading", "Landing"},
		{"Routing", "Rooting"},
		{"Parsing", "Passing"},
		{"Mapping", "Napping"},
		{"Sending", "Sanding"},
		{"Deployment Testing", "Deployment Nesting"},
		{"Release Posting", "Release Hosting"},
		{"Metrics", "Methods"},
		{"Formats", "Formals"},
		// Real words one insertion or omission apart: refused because
		// the pointer's word is a word of the document itself.
		{"Catching", "Caching"},
		{"Causal", "Casual"},
		{"Silver", "Sliver"},
	}
	for _, p := range pairs {
		doc := "# " + p.heading + "\n\nThe " + strings.ToLower(p.ptr) + " step is described elsewhere.\n\n# Other\n\ntext\n"
		d := Parse([]byte(doc))
		r := d.Extract(Pointers{Sections: []string{p.ptr}})
		if len(r.Matched) != 0 {
			t.Errorf("%q bound to %q (%s); want unmatched", p.ptr, r.Matched[0].Heading, r.Matched[0].Kind)
		}
		if !r.Fallback || len(r.Unmatched) != 1 {
			t.Errorf("%q: fallback %v unmatched %q; want a fallback with the pointer unmatched", p.ptr, r.Fallback, r.Unmatched)
		}
	}
}

// Real typos still match, and each is reported as approximate.
func TestRealTyposMatchAndAreReported(t *testing.T) {
	doc := "# Report\n\n## Methods\n\nWe sampled.\n\n## Results\n\nIt worked.\n\n## Configuration\n\nSet it.\n\n## Security Considerations\n\nCare.\n\n## Install\n\nRun it.\n"
	d := Parse([]byte(doc))
	tests := map[string]string{
		"Rsults":                 "Results",                 // omission
		"Methdos":                "Methods",                 // transposition
		"Mehtods":                "Methods",                 // transposition
		"Configuraton":           "Configuration",           // omission
		"Configurration":         "Configuration",           // insertion
		"Securty Considerations": "Security Considerations", // omission in one word
		"Securty Consideratoins": "Security Considerations", // one slip in each of two words of a long title
		"Instal":                 "Install",
		"Report > Resluts":       "Results", // typo in a path
	}
	for ptr, want := range tests {
		r := d.Extract(Pointers{Sections: []string{ptr}})
		if len(r.Matched) != 1 || r.Matched[0].Heading != want || r.Matched[0].Kind != KindFuzzy {
			t.Errorf("%q matched %+v, want %q (fuzzy)", ptr, r.Matched, want)
			continue
		}
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "approximately") || !strings.Contains(r.Warnings[0], want) {
			t.Errorf("%q: warnings %q, want one reporting the approximate match", ptr, r.Warnings)
		}
	}
}

// The rule's edges, word by word: first letter kept, six letters or more,
// one transposition, omission or insertion, never a substitution.
func TestTypoWord(t *testing.T) {
	tests := []struct {
		p, h string
		want bool
	}{
		{"rsults", "results", true},
		{"methdos", "methods", true},
		{"resultss", "results", true},
		{"result", "results", true},
		{"eMthods", "methods", false}, // first letter changed by a swap
		{"esults", "results", false},  // first letter dropped
		{"hosting", "posting", false}, // substitution
		{"resulta", "results", false}, // substitution at the end
		{"usage", "usages", false},    // under six letters
		{"mehtdos", "methods", false}, // two slips
		{"results", "results", false}, // no slip is not a typo
		{"step2ab", "step3ab", false}, // digits are never typos
	}
	for _, tt := range tests {
		if got := typoWord(strings.ToLower(tt.p), tt.h); got != tt.want {
			t.Errorf("typoWord(%q, %q) = %v, want %v", tt.p, tt.h, got, tt.want)
		}
	}
}
