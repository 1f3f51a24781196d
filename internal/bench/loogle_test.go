package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pyRepr writes s as Python's repr does for a str: single quotes unless s
// holds one and no double quote.
func pyRepr(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	r := strings.NewReplacer(`\`, `\\`, q, `\`+q, "\n", `\n`)
	return q + r.Replace(s) + q
}

// syntheticLoogle writes a set in LooGLE's form to a folder: one document on
// one line with run-in titles, its questions' evidence quoted from it, one
// question whose evidence is not verbatim.
func syntheticLoogle(t *testing.T) (string, LoogleDoc) {
	t.Helper()
	topics := []struct{ title, fact string }{
		{"Early life", "The engineer was born in Valparaíso on 4 May 1931 and moved to Lyon at nine."},
		{"Education", "She studied hydraulics at the École Centrale and graduated first in 1953."},
		{"Dams", "Her arch dam at Vouglans was finished in 1968 after six years of work."},
		{"Bridges", "The cable-stayed bridge she designed over the Rhône opened to traffic in 1977."},
		{"Honours", "In 1989 the Academy of Sciences elected her a full member for her dam designs."},
		{"Death", "She died in Grenoble on 2 March 2012, survived by two daughters."},
	}
	var b strings.Builder
	for i, tp := range topics {
		fmt.Fprintf(&b, "%s. %s ", tp.title, tp.fact)
		for k := range 30 {
			fmt.Fprintf(&b, "Filler sentence %d of part %d tells of weather, trains and letters home. ", k, i)
		}
	}
	doc := LoogleDoc{Title: "Synthetic engineer", Text: strings.TrimSpace(b.String()), QA: []LoogleQA{
		{Q: "Where was the engineer born?", S: topics[0].fact},
		{Q: "When was the arch dam at Vouglans finished?", S: topics[2].fact},
		{Q: "When did the Academy of Sciences elect her?", S: topics[4].fact},
		{Q: "Who survived her?", S: "She left two daughters."}, // not verbatim
	}}
	var qa []string
	for _, p := range doc.QA {
		qa = append(qa, fmt.Sprintf("{'S': %s, 'Q': %s, 'A': %s}", pyRepr(p.S), pyRepr(p.Q), pyRepr("it's \"quoted\"")))
	}
	line, err := json.Marshal(map[string]string{"input": doc.Text, "title": doc.Title, "qa_pairs": "[" + strings.Join(qa, ", ") + "]"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, loogleFile), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, doc
}

func TestLoogleSectionOnASyntheticSet(t *testing.T) {
	dir, want := syntheticLoogle(t)
	docs, err := LoadLoogle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Text != want.Text || len(docs[0].QA) != 4 || docs[0].QA[1].S != want.QA[1].S || docs[0].QA[0].A != `it's "quoted"` {
		t.Fatalf("loaded %+v", docs)
	}
	r := RunLoogle(docs)
	if r.Questions != 4 || r.Verbatim != 3 {
		t.Fatalf("questions %d, verbatim %d; want 4 and 3", r.Questions, r.Verbatim)
	}
	if r.Planner != 3 || r.Fallbacks != 0 || r.Integral != 3 {
		t.Errorf("planner held %d, fallbacks %d, integral %d; want 3, 0, 3", r.Planner, r.Fallbacks, r.Integral)
	}
	if r.SentTokens <= 0 || r.SentTokens*4 > r.DocTokens {
		t.Errorf("the planner sent %d of %d tokens: not a small share", r.SentTokens, r.DocTokens)
	}
	s := LoogleSection(dir)
	if len(s.Targets) != 3 {
		t.Fatalf("targets: %+v", s.Targets)
	}
	for _, tg := range s.Targets {
		if !tg.Met || tg.Fail == "" {
			t.Errorf("target %q: met %v (%s), fail %q", tg.Name, tg.Met, tg.Got, tg.Fail)
		}
	}
}

// The targets can be missed: a question with no word of the document falls
// back to the whole document, and one whose words lead elsewhere than its
// evidence is not held by what is sent.
func TestLoogleTargetsCanFail(t *testing.T) {
	_, doc := syntheticLoogle(t)
	doc.QA = []LoogleQA{{Q: "Which zeppelin carried the orchestra?", S: doc.QA[0].S}}
	r := RunLoogle([]LoogleDoc{doc})
	if r.Verbatim != 1 || r.Fallbacks != 1 || r.SentTokens != r.DocTokens {
		t.Fatalf("a question with no word in the document: fallbacks %d, sent %d of %d", r.Fallbacks, r.SentTokens, r.DocTokens)
	}
	doc.QA = []LoogleQA{{Q: "When did she study hydraulics at the École Centrale?", S: doc.QA[0].S}}
	if r := RunLoogle([]LoogleDoc{doc}); r.Planner != 0 || r.Fallbacks != 0 {
		t.Fatalf("evidence away from the question's words: planner %d, baseline %d, fallbacks %d", r.Planner, r.Baseline, r.Fallbacks)
	}
}

func TestLoogleSectionSaysWhenSkipped(t *testing.T) {
	for _, dir := range []string{"", filepath.Join(t.TempDir(), "missing")} {
		s := LoogleSection(dir)
		if len(s.Targets) != 0 || len(s.Notes) != 1 || !strings.HasPrefix(s.Notes[0], "Skipped: ") {
			t.Errorf("dir %q: %+v", dir, s)
		}
	}
}

func TestParsePyDicts(t *testing.T) {
	got, err := parsePyDicts(`[{'a': 'it\'s', "b": "say \"x\"\n"}, {'c': '\xe9\u00e9'},]`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["a"] != "it's" || got[0]["b"] != "say \"x\"\n" || got[1]["c"] != "éé" {
		t.Fatalf("got %q", got)
	}
	for _, bad := range []string{"", "[", "[{'a' 'b'}]", "[{'a': 'b'}] x", "[{'a': 'b}]", `[{'a': '\u12'}]`} {
		if _, err := parsePyDicts(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
