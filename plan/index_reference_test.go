package plan

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/slice"
)

// The index as it was before it kept its counts as postings: a map of
// counts per section, summed up the heading tree, and a clone of each with
// the path terms for BM25. Kept here as the reference the postings must
// agree with exactly.

// bodyCounts counts the terms of each section's text, summing each tiling
// section's own lines up the tree.
func bodyCounts(secs []SectionText, parent []int) []map[string]float64 {
	counts := make([]map[string]float64, len(secs))
	if !tiles(secs, parent) {
		for j, s := range secs {
			counts[j] = map[string]float64{}
			for _, t := range terms(s.Text) {
				counts[j][t]++
			}
		}
		return counts
	}
	for j, s := range secs {
		own := s.Text
		if j+1 < len(secs) && parent[j+1] == j {
			own = firstLines(s.Text, secs[j+1].Line-s.Line)
		}
		counts[j] = map[string]float64{}
		for _, t := range terms(own) {
			counts[j][t]++
		}
	}
	for j := len(secs) - 1; j >= 0; j-- {
		if p := parent[j]; p >= 0 {
			for t, f := range counts[j] {
				counts[p][t] += f
			}
		}
	}
	return counts
}

// refIndex is the old index: own words per section, and own plus path as
// BM25 documents.
type refIndex struct {
	own, all []map[string]float64
	lens     []float64
	total    float64
	df       map[string]int
}

func newRefIndex(secs []SectionText, parent []int) *refIndex {
	r := &refIndex{own: bodyCounts(secs, parent), df: map[string]int{}}
	for j, s := range secs {
		own := r.own[j]
		for _, t := range terms(s.Title) {
			own[t] += titleWeight
		}
		all := maps.Clone(own)
		for _, p := range ancestorsOf(s) {
			for _, t := range terms(p) {
				all[t] += pathWeight
			}
		}
		n := 0.0
		for t, f := range all {
			n += f
			r.df[t]++
		}
		r.all = append(r.all, all)
		r.lens = append(r.lens, n)
		r.total += n
	}
	return r
}

func (r *refIndex) score(q []string, j int) float64 {
	if r.total == 0 {
		return 0
	}
	avg := r.total / float64(len(r.all))
	norm := 1 - bm25B + bm25B*r.lens[j]/avg
	s := 0.0
	for _, t := range q {
		f := r.all[j][t]
		if f == 0 {
			continue
		}
		df := float64(r.df[t])
		idf := math.Log(1 + (float64(len(r.all))-df+0.5)/(df+0.5))
		s += idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
	}
	return s
}

// referenceDocs are the bench corpus documents, the example and the test
// report, each as the assembler's outline gives it and (the example and the
// report) as sections that do not tile, so both ways of counting are
// checked.
func referenceDocs(t *testing.T) map[string][]SectionText {
	t.Helper()
	docs := map[string][]SectionText{}
	files, err := filepath.Glob("../internal/bench/testdata/corpus/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bench corpus: %v", err)
	}
	files = append(files, "../examples/incident-report.md", "testdata/report.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := slice.Parse(b)
		lines := doc.Lines()
		var secs []SectionText
		for _, h := range doc.Outline() {
			body := ""
			if h.Line >= 1 && h.EndLine <= len(lines) && h.Line <= h.EndLine {
				body = strings.Join(lines[h.Line-1:h.EndLine], "\n")
			}
			secs = append(secs, SectionText{Title: h.Title, Path: h.Path, Level: h.Level, Line: h.Line, EndLine: h.EndLine, Text: body})
		}
		docs[filepath.Base(f)] = secs
	}
	docs["incident report, not tiling"] = sectionsOf(t, readString(t, "../examples/incident-report.md"))
	docs["report, not tiling"] = loadReport(t)
	return docs
}

func readString(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// benchTasks are the bench corpus's task questions and their plans'
// subtasks, as queries.
func benchTasks(t *testing.T) []string {
	t.Helper()
	var f struct {
		Documents []struct {
			Task string
			Plan struct{ Subtasks []struct{ Task string } }
		}
	}
	if err := json.Unmarshal([]byte(readString(t, "../internal/bench/testdata/tasks.json")), &f); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Documents {
		out = append(out, d.Task)
		for _, st := range d.Plan.Subtasks {
			out = append(out, st.Task)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d bench questions", len(out))
	}
	return out
}

// TestIndexMatchesMapsPerSection checks the postings index gives every
// section the same scores, bit for bit, as the maps it replaced: for every
// term of each document alone and for each bench task's question.
func TestIndexMatchesMapsPerSection(t *testing.T) {
	tasks := benchTasks(t)
	for name, secs := range referenceDocs(t) {
		ix := newIndex(secs)
		ref := newRefIndex(secs, ix.parent)
		if len(secs) == 0 {
			t.Fatalf("%s: no sections", name)
		}
		if !slices.Equal(ix.bm.lens, ref.lens) {
			t.Errorf("%s: section lengths differ", name)
		}
		vocab := map[string]bool{}
		for _, all := range ref.all {
			for term := range all {
				vocab[term] = true
			}
		}
		var queries [][]string
		for _, term := range slices.Sorted(maps.Keys(vocab)) {
			queries = append(queries, []string{term})
		}
		for _, task := range tasks {
			queries = append(queries, slices.Compact(sortedTerms(task)))
		}
		queries = append(queries, []string{"zzzabsent"})
		bad := 0
		for _, q := range queries {
			var want []int
			for j := range secs {
				if slices.ContainsFunc(q, func(t string) bool { return ref.all[j][t] > 0 }) {
					want = append(want, j)
				}
			}
			if got := ix.bm.matching(q); !slices.Equal(got, want) {
				t.Errorf("%s: matching(%q) = %d sections, want %d", name, q, len(got), len(want))
				bad++
			}
			for _, j := range want {
				if got, w := ix.score(q, j), ref.score(q, j); got != w {
					t.Errorf("%s: section %q, query %q: score %v, want %v", name, secs[j].Title, q, got, w)
					bad++
				}
				for _, term := range q {
					if ix.has(j, term) != (ref.all[j][term] > 0) || ix.hasOwn(j, term) != (ref.own[j][term] > 0) {
						t.Errorf("%s: section %q, term %q: has/hasOwn differ", name, secs[j].Title, term)
						bad++
					}
				}
			}
			if bad > 20 {
				t.Fatalf("%s: too many differences", name)
			}
		}
	}
}
