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

// headTerms calls f with each term of s's title and of the headings above
// it, and returns the weight they add to the section's length. Path terms
// count in the ranking but are told apart from the section's own words: a
// match through the heading path alone says nothing about which of the
// siblings holds the answer.
func headTerms(s SectionText, f func(t string, title bool)) float64 {
	n := 0.0
	for _, t := range terms(s.Title) {
		f(t, true)
		n += titleWeight
	}
	for _, p := range ancestorsOf(s) {
		for _, t := range terms(p) {
			f(t, false)
			n += pathWeight
		}
	}
	return n
}

// keep indexes term t if the index was built without it: its body
// postings and its title and path counts, as newIndexKeeping would have.
func (ix *index) keep(t string) {
	if ix.kept.has(t) {
		return
	}
	ix.kept[t] = true
	id := ix.body.scan(t)
	for j, s := range ix.secs {
		h := headPosting{sec: int32(j)}
		headTerms(s, func(u string, title bool) {
			switch {
			case u != t:
			case title:
				h.title++
			default:
				h.path++
			}
		})
		if h.title > 0 || h.path > 0 {
			ix.head[id] = append(ix.head[id], h)
		}
	}
}
