package bench

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"

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

	Text string          `json:"-"`
	Doc  *slice.Document `json:"-"`
	// Parsed is Plan through plan.Parse, as orchestrate reads it.
	Parsed *plan.Plan `json:"-"`
}

// LoadCorpus reads the shipped corpus and checks that every plan parses and
// every intended section names exactly one heading.
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
	}
	return f.Documents, nil
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
