package slice

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fullName names a heading by its path so a test can say which of two
// equal titles it expects.
func fullName(h Heading) string {
	return strings.Join(append(append([]string(nil), h.Path...), h.Title), " > ")
}

func headingAt(d *Document, line int) (Heading, bool) {
	for _, h := range d.Outline() {
		if h.Line == line {
			return h, true
		}
	}
	return Heading{}, false
}

func TestPointerMatching(t *testing.T) {
	type c struct {
		ptr  string
		want string // heading's full name; "" means the pointer must stay unmatched
		kind Kind
	}
	docs := map[string][]c{
		"report.md": {
			{"Executive Summary", "Quarterly Operations Report — Q3 > Executive Summary", KindExact},
			{"executive   SUMMARY", "Quarterly Operations Report — Q3 > Executive Summary", KindNormalized},
			{"## Executive Summary", "Quarterly Operations Report — Q3 > Executive Summary", KindExact},
			{`"Executive Summary:"`, "Quarterly Operations Report — Q3 > Executive Summary", KindNormalized},
			{"Results", "Quarterly Operations Report — Q3 > 2. Results", KindNumbering},
			{"2 Results", "Quarterly Operations Report — Q3 > 2. Results", KindNormalized},
			{"Section 2: Results", "Quarterly Operations Report — Q3 > 2. Results", KindNumbering},
			{"2.2", "Quarterly Operations Report — Q3 > 2. Results > 2.2 Cost", KindNumbering},
			{"Section 1.2", "Quarterly Operations Report — Q3 > 1. Background > 1.2 Data Sources", KindNumbering},
			{"**Incidents**", "Quarterly Operations Report — Q3 > 2. Results > 2.3 Incidents", KindNumbering},
			{"2.3 *Incidents*", "Quarterly Operations Report — Q3 > 2. Results > 2.3 Incidents", KindExact},
			{"Results > Cost", "Quarterly Operations Report — Q3 > 2. Results > 2.2 Cost", KindPath},
			{"Background / Data Sources", "Quarterly Operations Report — Q3 > 1. Background > 1.2 Data Sources", KindPath},
			{"Appendix A", "Quarterly Operations Report — Q3 > Appendix A: Glossary", KindNumbering},
			{"Glossary", "Quarterly Operations Report — Q3 > Appendix A: Glossary", KindNumbering},
			{"Recomendations", "Quarterly Operations Report — Q3 > 3. Recommendations", KindFuzzy},
			{"Avialability", "Quarterly Operations Report — Q3 > 2. Results > 2.1 Availability", KindFuzzy},
			{"3.1 Results", "", ""},        // the number names a section that is not there
			{"Section 9", "", ""},          // no such number
			{"Appendix C", "", ""},         // letters differ: not a typo
			{"Costs and Benefits", "", ""}, // shares a word only
			{"Incident Timeline", "", ""},
			{"title", "", ""}, // front matter is not a section
			{"this comment is YAML, not a heading", "", ""},
		},
		"rfc.md": {
			{"3.2 Frames", "RFC 0042: Streaming Checkpoints > 3 Protocol > 3.2 Frames", KindExact},
			{"Frames", "RFC 0042: Streaming Checkpoints > 3 Protocol > 3.2 Frames", KindNumbering},
			{"§3.2", "RFC 0042: Streaming Checkpoints > 3 Protocol > 3.2 Frames", KindNumbering},
			{"3.2. Frames", "RFC 0042: Streaming Checkpoints > 3 Protocol > 3.2 Frames", KindNormalized},
			{"Protocol > Handshake", "RFC 0042: Streaming Checkpoints > 3 Protocol > 3.1 Handshake", KindPath},
			{"error handling:retries", "RFC 0042: Streaming Checkpoints > 4 Error Handling > 4.2 Retries", KindPath},
			{"Error Handling: Retries", "RFC 0042: Streaming Checkpoints > 4 Error Handling > 4.2 Retries", KindPath},
			{"Security considerations.", "RFC 0042: Streaming Checkpoints > 5 Security Considerations", KindNumbering},
			{"Securty Considerations", "RFC 0042: Streaming Checkpoints > 5 Security Considerations", KindFuzzy},
			{"RFC 0042: Streaming Checkpoints", "RFC 0042: Streaming Checkpoints", KindExact},
			{"Abstract?", "RFC 0042: Streaming Checkpoints > Abstract", KindNormalized},
			{"frames are big-endian", "", ""}, // a '#' line in a code fence
			{"Timeouts > Retries", "", ""},    // Retries is not under Timeouts
			{"Privacy Considerations", "", ""},
			{"8 References", "", ""},
		},
		"paper.md": {
			{"Methods > Sampling", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods > C. Sampling", KindPath},
			{"III. Methods", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods", KindExact},
			{"Methods", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods", KindNumbering},
			{"IV Experiments", "Sparse Routing for Mixture-of-Experts Language Models > IV. Experiments", KindNormalized},
			{"Experiments > Results", "Sparse Routing for Mixture-of-Experts Language Models > IV. Experiments > B. Results", KindPath},
			{"B. Load Balancing", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods > B. Load Balancing", KindExact},
			{"load-balancing", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods > B. Load Balancing", KindNumbering},
			{"Limitations", "Sparse Routing for Mixture-of-Experts Language Models > V. Discussion > A. Limitations", KindNumbering},
			{"Related Work › Conditional Computation", "Sparse Routing for Mixture-of-Experts Language Models > II. Related Work > B. Conditional Computation", KindPath},
			{"Abstract", "", ""}, // bold text, not a heading
			{"Future Work", "", ""},
			{"Methods > Results", "", ""}, // Results sits under Experiments
			{"Methods > Samplng", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods > C. Sampling", KindFuzzy},
			{"Mehtods > Sampling", "Sparse Routing for Mixture-of-Experts Language Models > III. Methods > C. Sampling", KindFuzzy},
			{"Methods > Resluts", "", ""}, // a typo does not move Results under Methods
		},
		"runbook.md": {
			{"Step 2", "Runbook: Database Failover > Step 2: Promote a Replica", KindNumbering},
			{"Promote a Replica", "Runbook: Database Failover > Step 2: Promote a Replica", KindNumbering},
			{"step 3: repoint clients", "Runbook: Database Failover > Step 3: Repoint Clients", KindNormalized},
			{"Step 4 - Verify", "Runbook: Database Failover > Step 4: Verify", KindNormalized},
			{"Roll back", "Runbook: Database Failover > Rollback", KindNormalized},
			{"the Rollback section", "Runbook: Database Failover > Rollback", KindNumbering},
			{"- Symptoms", "Runbook: Database Failover > Symptoms", KindNormalized},
			{"Step 5", "", ""},
			{"Step 2: Repoint Clients", "", ""}, // number and title disagree
			{"check the primary from the bastion", "", ""},
			{"promote the replica with the least lag", "", ""},
		},
		"readme.md": {
			{"Install", "fastcfg > Install", KindExact},
			{"[Install](#install)", "fastcfg > Install", KindExact},
			{"`config.yaml` options", "fastcfg > config.yaml options", KindExact},
			{"config.yaml options", "fastcfg > config.yaml options", KindExact},
			{"Config YAML Options", "fastcfg > config.yaml options", KindNormalized},
			{"Usage > Command line", "fastcfg > Usage > Command line", KindPath},
			{"Usage", "fastcfg > Usage", KindExact},
			{"FAQ: Why YAML", "fastcfg > FAQ > Why YAML?", KindPath},
			{"Does it support TOML", "fastcfg > FAQ > Does it support TOML?", KindNormalized},
			{"Quick-start", "fastcfg > Quick Start", KindNormalized},
			{"Instal", "fastcfg > Install", KindFuzzy},
			{"#quick-start", "fastcfg > Quick Start", KindNormalized},
			{"#configyaml-options", "fastcfg > config.yaml options", KindNormalized},
			{"Database", "", ""}, // '#' comment in a yaml fence
			{"Server", "", ""},
			{"install the command-line tool", "", ""},
			{"Indented code is not a heading either", "", ""},
			{"Not a heading: inside an HTML block", "", ""},
			{"ok", "", ""},
			{"Uninstall", "", ""},
			{"Does it support JSON?", "", ""},
		},
		"setext.md": {
			{"Billing", "Billing", KindExact},
			{"Billing > Deployment", "Billing > Deployment", KindExact}, // its unique path
			{"Search / Overview", "Search > Overview", KindPath},
			{"Search: Deployment", "Search > Deployment", KindPath},
			{"Deployment", "", ""}, // ambiguous: two sections, so neither
			{"Overview", "", ""},
			{"Service Handbook", "Service Handbook", KindExact},
			{"Billing > Search", "", ""},
			{"Shipping", "", ""},
		},
	}
	for file, cases := range docs {
		d := loadDoc(t, file)
		for _, tc := range cases {
			t.Run(file+"/"+tc.ptr, func(t *testing.T) {
				r := d.Extract(Pointers{Sections: []string{tc.ptr}})
				if tc.want == "" {
					if len(r.Matched) != 0 {
						t.Fatalf("matched %+v, want unmatched", r.Matched)
					}
					if !r.Fallback || !cmp.Equal(r.Unmatched, []string{tc.ptr}) || r.Text != d.Text() {
						t.Fatalf("want fallback to the whole document with %q unmatched; got fallback=%v unmatched=%q", tc.ptr, r.Fallback, r.Unmatched)
					}
					return
				}
				if len(r.Matched) != 1 {
					t.Fatalf("matched %+v (unmatched %q), want %q", r.Matched, r.Unmatched, tc.want)
				}
				m := r.Matched[0]
				h, ok := headingAt(d, m.StartLine)
				if !ok {
					t.Fatalf("match starts at line %d, which opens no section", m.StartLine)
				}
				if got := fullName(h); got != tc.want || m.Kind != tc.kind {
					t.Errorf("got %q (%s), want %q (%s)", got, m.Kind, tc.want, tc.kind)
				}
				if m.EndLine != h.EndLine || m.Heading != h.Title || r.Fallback {
					t.Errorf("match %+v does not cover section %+v (fallback %v)", m, h, r.Fallback)
				}
				if want := strings.Join(d.Lines()[h.Line-1:h.EndLine], "\n") + "\n"; r.Text != want {
					t.Errorf("text:\n%s\nwant:\n%s", r.Text, want)
				}
			})
		}
	}
}

func TestAmbiguityIsReported(t *testing.T) {
	d := loadDoc(t, "setext.md")
	r := d.Extract(Pointers{Sections: []string{"Overview"}})
	if len(r.Matched) != 0 || len(r.Warnings) != 2 {
		t.Fatalf("matched %+v warnings %q, want no match, one warning naming the alternatives and the fallback", r.Matched, r.Warnings)
	}
	for _, alt := range []string{`"Billing > Overview" (lines 9-13)`, `"Search > Overview" (lines 22-26)`, `"Overview" (lines 32-35)`} {
		if !strings.Contains(r.Warnings[0], alt) {
			t.Errorf("warning %q does not name %s", r.Warnings[0], alt)
		}
	}
	r = d.Extract(Pointers{Sections: []string{"Search > Overview"}})
	if len(r.Warnings) != 0 || len(r.Matched) != 1 {
		t.Errorf("a path that settles the ambiguity: matched %+v, warned %q", r.Matched, r.Warnings)
	}
}

func TestExtractCombination(t *testing.T) {
	d := loadDoc(t, "rfc.md")
	lines := d.Lines()
	text := func(spans ...[2]int) string {
		var b strings.Builder
		for _, s := range spans {
			for _, l := range lines[s[0]-1 : s[1]] {
				b.WriteString(l + "\n")
			}
		}
		return b.String()
	}
	tests := []struct {
		name      string
		p         Pointers
		text      string
		matched   []string
		unmatched []string
		fallback  bool
	}{
		{
			name:    "document order whatever the pointer order",
			p:       Pointers{Sections: []string{"Timeouts", "Handshake"}},
			text:    text([2]int{22, 25}, [2]int{43, 46}),
			matched: []string{"Timeouts", "Handshake"},
		},
		{
			name:    "child inside parent adds nothing",
			p:       Pointers{Sections: []string{"3.2 Frames", "Protocol"}},
			text:    text([2]int{20, 40}),
			matched: []string{"3.2 Frames", "Protocol"},
		},
		{
			name:    "adjacent sections merge",
			p:       Pointers{Sections: []string{"Timeouts", "Retries"}},
			text:    text([2]int{43, 50}),
			matched: []string{"Timeouts", "Retries"},
		},
		{
			name:    "line range overlapping a section",
			p:       Pointers{Sections: []string{"Abstract"}, LineRanges: [][2]int{{8, 12}}},
			text:    text([2]int{6, 12}),
			matched: []string{"Abstract", "lines 8-12"},
		},
		{
			name:    "line range clamped",
			p:       Pointers{LineRanges: [][2]int{{-3, 2}, {60, 900}}},
			text:    text([2]int{1, 2}, [2]int{60, 61}),
			matched: []string{"lines -3-2", "lines 60-900"},
		},
		{
			name:      "some unmatched: no fallback",
			p:         Pointers{Sections: []string{"Abstract", "Appendix"}, LineRanges: [][2]int{{900, 950}, {5, 4}}},
			text:      text([2]int{6, 10}),
			matched:   []string{"Abstract"},
			unmatched: []string{"Appendix", "lines 900-950", "lines 5-4"},
		},
		{
			name:      "nothing matched: fallback",
			p:         Pointers{Sections: []string{"Appendix", "", "###"}, LineRanges: [][2]int{{0, 0}}},
			text:      d.Text(),
			unmatched: []string{"Appendix", "", "###", "lines 0-0"},
			fallback:  true,
		},
		{
			name:     "no pointers: fallback",
			text:     d.Text(),
			fallback: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := d.Extract(tt.p)
			var matched []string
			for _, m := range r.Matched {
				matched = append(matched, m.Pointer)
			}
			if diff := cmp.Diff(tt.text, r.Text); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if !cmp.Equal(tt.matched, matched) || !cmp.Equal(tt.unmatched, r.Unmatched) || tt.fallback != r.Fallback {
				t.Errorf("matched %q unmatched %q fallback %v; want %q %q %v", matched, r.Unmatched, r.Fallback, tt.matched, tt.unmatched, tt.fallback)
			}
			if tt.fallback != (len(r.Warnings) > 0 && strings.Contains(r.Warnings[len(r.Warnings)-1], "whole document")) {
				t.Errorf("warnings %q: a fallback must be reported, and only a fallback", r.Warnings)
			}
		})
	}
}

func TestTyposNeverChangeNumbersOrShortWords(t *testing.T) {
	d := Parse([]byte("# Part A\n# Step 1 Install\n# Version 2 Notes\n"))
	for _, p := range []string{"Part B", "Step 2 Install", "Version 3 Notes"} {
		if r := d.Extract(Pointers{Sections: []string{p}}); len(r.Matched) != 0 {
			t.Errorf("%q matched %+v", p, r.Matched)
		}
	}
}

func TestNumberLabelsDisambiguate(t *testing.T) {
	d := Parse([]byte("# Step 1: Install\n# 1. Introduction\n# Appendix A: Terms\n# A. Overview\n"))
	tests := map[string]string{
		"Step 1":     "Step 1: Install",
		"1":          "1. Introduction",
		"Appendix A": "Appendix A: Terms",
		"A.":         "A. Overview",
	}
	for ptr, want := range tests {
		r := d.Extract(Pointers{Sections: []string{ptr}})
		if len(r.Matched) != 1 || r.Matched[0].Heading != want {
			t.Errorf("%q matched %+v, want %q", ptr, r.Matched, want)
		}
	}
}

func ExampleDocument_Extract() {
	d := Parse([]byte("# Report\n\n## 1. Methods\n\nWe sampled.\n\n## 2. Results\n\nIt worked.\n"))
	r := d.Extract(Pointers{Sections: []string{"**Results**"}})
	fmt.Print(r.Text)
	fmt.Println(r.Matched[0].Kind, r.Matched[0].StartLine, r.Matched[0].EndLine)
	// Output:
	// ## 2. Results
	//
	// It worked.
	// numbering 7 9
}

// An orchestrator cuts every subtask's slice from one parsed document at
// once; run under -race this proves Extract is safe for that.
func TestConcurrentExtract(t *testing.T) {
	d := loadDoc(t, "paper.md")
	want := d.Extract(Pointers{Sections: []string{"Methods > Sampling", "Resluts", "Nothing of the sort"}}).Text
	done := make(chan string)
	for i := 0; i < 8; i++ {
		go func() {
			done <- d.Extract(Pointers{Sections: []string{"Methods > Sampling", "Resluts", "Nothing of the sort"}}).Text
		}()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; got != want {
			t.Errorf("concurrent Extract gave %q, want %q", got, want)
		}
	}
}
