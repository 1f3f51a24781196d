package plan

import (
	"slices"
	"strings"
	"testing"
)

// TestKeptIndexMatchesFull checks that an index holding postings only for
// a task's terms ranks every section exactly as the full index does, for
// the task's terms and for terms it did not keep (indexed when looked up),
// and that it holds far fewer posting lists than the full one: the work
// saved on a document of many distinct words.
func TestKeptIndexMatchesFull(t *testing.T) {
	tasks := benchTasks(t)
	for name, secs := range referenceDocs(t) {
		full := newIndex(secs)
		task := tasks[0]
		kept := newIndexKeeping(secs, taskTerms(task))
		if len(kept.body.vocab)*4 > len(full.body.vocab) {
			t.Errorf("%s: the kept index has %d terms, the full one %d; want far fewer", name, len(kept.body.vocab), len(full.body.vocab))
		}
		if !slices.Equal(kept.bm.lens, full.bm.lens) {
			t.Fatalf("%s: section lengths differ", name)
		}
		var queries [][]string
		for _, tk := range tasks {
			queries = append(queries, slices.Compact(sortedTerms(tk)))
		}
		// Terms of section titles far from the task: not kept, so
		// looked up by a pass over the sections.
		for _, s := range secs[:min(len(secs), 20)] {
			if q := slices.Compact(sortedTerms(s.Title)); len(q) > 0 {
				queries = append(queries, q)
			}
		}
		for _, q := range queries {
			if got, want := kept.bm.matching(q), full.bm.matching(q); !slices.Equal(got, want) {
				t.Fatalf("%s: matching(%q) = %v, want %v", name, q, got, want)
			}
			for _, j := range full.bm.matching(q) {
				if got, want := kept.score(q, j), full.score(q, j); got != want {
					t.Fatalf("%s: section %d, query %q: score %v, want %v", name, j, q, got, want)
				}
				for _, term := range q {
					if kept.hasOwn(j, term) != full.hasOwn(j, term) {
						t.Fatalf("%s: section %d, term %q: hasOwn differs", name, j, term)
					}
				}
			}
		}
		// The plans are the same, to the last pointer.
		for _, tk := range tasks {
			a := Retrieve(RetrieveInput{Task: tk, Sections: secs})
			b := retrieveFull(RetrieveInput{Task: tk, Sections: secs})
			if a.Reasoning != b.Reasoning || !slices.EqualFunc(a.Subtasks, b.Subtasks, func(x, y Subtask) bool {
				return x.Task == y.Task && slices.Equal(x.ContextPointers.Sections, y.ContextPointers.Sections)
			}) {
				t.Fatalf("%s: task %q: plan %+v, full index %+v", name, tk, a, b)
			}
		}
	}
}

// retrieveFull is Retrieve with every term indexed.
func retrieveFull(in RetrieveInput) *Plan {
	old := keepTerms
	keepTerms = func(string) termSet { return nil }
	defer func() { keepTerms = old }()
	return Retrieve(in)
}

// TestKeptPassageIndexMatchesFull is TestKeptIndexMatchesFull for the
// passage index of a document without headings.
func TestKeptPassageIndexMatchesFull(t *testing.T) {
	var ps []PassageText
	for _, secs := range referenceDocs(t) {
		for j, s := range secs {
			for k, para := range strings.Split(s.Text, "\n\n") {
				ps = append(ps, PassageText{ID: "p" + strings.Repeat("x", j%3) + string(rune('a'+k%26)), Text: para})
			}
		}
		break
	}
	tasks := benchTasks(t)
	full := newPassageIndex(ps)
	kept := newPassageIndexKeeping(ps, taskTerms(tasks[0]))
	if len(kept.bm.post)*4 > len(full.bm.post) {
		t.Errorf("the kept index has %d terms, the full one %d; want far fewer", len(kept.bm.post), len(full.bm.post))
	}
	for _, tk := range tasks {
		if got, want := kept.pick(tk), full.pick(tk); !slices.Equal(got, want) {
			t.Fatalf("task %q: picked %v, want %v", tk, got, want)
		}
	}
}
