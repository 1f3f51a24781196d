package bench

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/baton-dev/baton/internal/textclip"
	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

// The corpus ships inside the binary so that `baton bench` measures the same
// documents wherever it runs; SOURCES.md beside the files names their origin
// and licence.
//
//go:embed testdata/tasks.json testdata/corpus/*.md
var corpusFS embed.FS

// Task is one corpus document with its task, the plan a planner wrote for it
// and, per subtask, the sections that hold the answer.
type Task struct {
	ID   string          `json:"id"`
	File string          `json:"file"`
	Task string          `json:"task"`
	Plan json.RawMessage `json:"plan"`
	// Intended lists, per subtask, the answer-bearing sections as heading
	// paths ("Top > Parent > Title", titles as the outline spells them);
	// empty for a self-answered subtask.
	Intended [][]string `json:"intended"`
	// Evidence lists, per subtask, the answer-bearing sentences quoted
	// verbatim from the document. Each occurs exactly once in it, on one
	// line, inside one of the subtask's intended sections. A self-answered
	// subtask may carry evidence too: a planner that read only the outline
	// cannot answer from memory and must look the fact up.
	Evidence [][]string `json:"evidence"`

	// EvidenceSections are, per subtask, the deepest headings whose sections
	// hold its evidence, found by searching the document for each sentence,
	// never from the plan: the lower bound is built from them.
	EvidenceSections [][]slice.Heading `json:"-"`

	Text string          `json:"-"`
	Doc  *slice.Document `json:"-"`
	// Parsed is Plan through plan.Parse, as orchestrate reads it.
	Parsed *plan.Plan `json:"-"`
}

// LoadCorpus reads the shipped corpus and checks that every plan parses,
// every intended section names exactly one heading and every evidence
// sentence is where its task says it is.
func LoadCorpus() ([]*Task, error) {
	raw, err := corpusFS.ReadFile("testdata/tasks.json")
	if err != nil {
		return nil, err
	}
	var f struct {
		Documents []*Task `json:"documents"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("tasks.json: %w", err)
	}
	for _, t := range f.Documents {
		data, err := corpusFS.ReadFile(path.Join("testdata/corpus", t.File))
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		t.Text = string(data)
		t.Doc = slice.Parse(data)
		p, err := plan.Parse(string(t.Plan), plan.Options{Lines: t.Doc.NumLines()})
		if err != nil {
			return nil, fmt.Errorf("task %s: plan: %w", t.ID, err)
		}
		t.Parsed = p
		if len(t.Intended) != len(p.Subtasks) {
			return nil, fmt.Errorf("task %s: %d intended lists for %d subtasks", t.ID, len(t.Intended), len(p.Subtasks))
		}
		for i, secs := range t.Intended {
			if p.Subtasks[i].IsSelf() != (len(secs) == 0) {
				return nil, fmt.Errorf("task %s: subtask %d: intended sections must be empty exactly for a self-answered subtask", t.ID, i+1)
			}
			for _, s := range secs {
				if _, err := FindHeading(t.Doc, s); err != nil {
					return nil, fmt.Errorf("task %s: subtask %d: %w", t.ID, i+1, err)
				}
			}
		}
		if err := t.locateEvidence(); err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return f.Documents, nil
}

// locateEvidence checks each evidence sentence and finds the deepest
// section holding it. A quote that is not in the document, occurs twice or
// lies outside the subtask's intended sections is an error: a benchmark
// scored against a misplaced quote would measure nothing.
func (t *Task) locateEvidence() error {
	if len(t.Evidence) != len(t.Parsed.Subtasks) {
		return fmt.Errorf("%d evidence lists for %d subtasks", len(t.Evidence), len(t.Parsed.Subtasks))
	}
	outline := t.Doc.Outline()
	t.EvidenceSections = make([][]slice.Heading, len(t.Evidence))
	for i, ev := range t.Evidence {
		if len(ev) == 0 && !t.Parsed.Subtasks[i].IsSelf() {
			return fmt.Errorf("subtask %d: no evidence for a delegated subtask", i+1)
		}
		var intended []slice.Heading
		for _, s := range t.Intended[i] {
			h, _ := FindHeading(t.Doc, s)
			intended = append(intended, h)
		}
		for _, e := range ev {
			line, err := evidenceLine(t.Text, e)
			if err != nil {
				return fmt.Errorf("subtask %d: %w", i+1, err)
			}
			h, ok := deepestSection(outline, line)
			if !ok {
				return fmt.Errorf("subtask %d: evidence %q (line %d) is under no heading", i+1, textclip.Runes(e, 60), line)
			}
			if len(intended) > 0 && !slices.ContainsFunc(intended, func(s slice.Heading) bool { return s.Line <= line && line <= s.EndLine }) {
				return fmt.Errorf("subtask %d: evidence %q (line %d) lies outside its intended sections", i+1, textclip.Runes(e, 60), line)
			}
			if !slices.ContainsFunc(t.EvidenceSections[i], func(s slice.Heading) bool { return s.Line == h.Line }) {
				t.EvidenceSections[i] = append(t.EvidenceSections[i], h)
			}
		}
	}
	return nil
}

// evidenceLine is the 1-based line of the one occurrence of e in text.
func evidenceLine(text, e string) (int, error) {
	switch {
	case e == "" || strings.ContainsAny(e, "\r\n"):
		return 0, fmt.Errorf("evidence %q: want one non-empty line of text", textclip.Runes(e, 60))
	case strings.Count(text, e) != 1:
		return 0, fmt.Errorf("evidence %q: occurs %d times in the document, want exactly once", textclip.Runes(e, 60), strings.Count(text, e))
	}
	return strings.Count(text[:strings.Index(text, e)], "\n") + 1, nil
}

// deepestSection is the innermost heading whose section holds line.
func deepestSection(outline []slice.Heading, line int) (slice.Heading, bool) {
	var best slice.Heading
	found := false
	for _, h := range outline {
		if h.Line <= line && line <= h.EndLine && (!found || h.EndLine-h.Line < best.EndLine-best.Line) {
			best, found = h, true
		}
	}
	return best, found
}

// FindHeading resolves a full heading path ("Top > Parent > Title") to the
// one heading it names, comparing titles exactly. It is deliberately strict:
// it defines the ground truth the matchers are measured against.
func FindHeading(d *slice.Document, fullPath string) (slice.Heading, error) {
	want := strings.Split(fullPath, " > ")
	var hits []slice.Heading
	for _, h := range d.Outline() {
		got := append(append([]string(nil), h.Path...), h.Title)
		if equalStrings(got, want) {
			hits = append(hits, h)
		}
	}
	if len(hits) != 1 {
		return slice.Heading{}, fmt.Errorf("heading %q: %d headings have that path, want 1", fullPath, len(hits))
	}
	return hits[0], nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sectionText is the text of lines from..to (1-indexed, inclusive).
func sectionText(d *slice.Document, from, to int) string {
	return d.Extract(slice.Pointers{LineRanges: [][2]int{{from, to}}}).Text
}
