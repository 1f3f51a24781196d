package plan

// termSet is the terms an index keeps postings for; nil keeps every term.
// The retrieval plan only ever looks up the words of its task (and of the
// questions it phrases from them), so an index over a document of a
// million distinct words need not hold a posting list for each: the others
// count in each section's length, which the ranking needs, and nowhere
// else. A term looked up that was not kept is indexed then, by a pass over
// the sections (see index.postings), so the ranking is the same either way.
type termSet map[string]bool

func (k termSet) has(t string) bool { return k == nil || k[t] }

// phrasing is the words Retrieve adds to the questions it phrases from a
// task's parts (see conjunction.question).
const phrasing = "What does the document say about, for a comparison with"

// keepTerms is taskTerms; a variable so that tests can keep every term.
var keepTerms = taskTerms

// taskTerms returns the terms the retrieval plan of task can look up.
func taskTerms(task string) termSet {
	k := termSet{}
	for _, t := range terms(task + " " + phrasing) {
		k[t] = true
	}
	return k
}

// clone returns a copy for another index, which adds the terms it is asked
// about to its own.
func (k termSet) clone() termSet {
	if k == nil {
		return nil
	}
	c := make(termSet, len(k))
	for t := range k {
		c[t] = true
	}
	return c
}
