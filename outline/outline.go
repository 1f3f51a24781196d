// Package outline builds the outline a planner reads instead of a document
// too large for its window: every heading as a unique path ("Globex >
// Pricing"), its line range, its size in tokens and the first sentence or so
// of its text, budgeted to fit a token limit by collapsing the deepest levels
// first and then dropping the leads.
//
// The outline is the planner's only view of the document, so its paths are
// the pointers the plan must use; Lookup maps a path back to its line range.
// Each byte of a document is tokenized once: a section's size is its own
// text plus the sizes of its subsections, never a re-count of the nested
// text.
package outline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dev/baton/slice"
)

// Counter counts tokens. *tokens.Counter satisfies it.
type Counter interface {
	Count(s string) int
}

// Source is one document to outline. Name is how the outline and its
// pointers call it (usually the file name).
type Source struct {
	Name string
	Doc  *slice.Document
}

// Sep joins the titles of a heading path.
const Sep = " > "

// Entry is one heading of a document and the section it opens.
type Entry struct {
	Document string `json:"document"`
	// Path is the titles of the heading and its ancestors joined with Sep,
	// unique within the document: a title repeated under the same parent
	// gets an ordinal ("Notes (2)").
	Path  string `json:"path"`
	Title string `json:"title"`
	// Level is the markdown level (1 for "#"); Depth is the nesting depth
	// in the document (1 for a heading with no enclosing heading), which is
	// what collapsing counts, so a document whose headings start at "##"
	// still collapses from its real top.
	Level int `json:"level"`
	Depth int `json:"depth"`
	// Line and EndLine are the section's lines, 1-based and inclusive,
	// heading line included.
	Line    int `json:"line"`
	EndLine int `json:"end_line"`
	// Tokens is the size of the whole section: its heading, its own text
	// and all its subsections.
	Tokens int `json:"tokens"`
	// Lead is the first sentence (or about 25 words) of the section's own
	// text, markup stripped; empty when the section has no text before its
	// first subsection or when leads were dropped to fit the budget.
	Lead string `json:"lead,omitempty"`
	// Hidden is how many subsections this entry stands for because deeper
	// levels were collapsed; 0 when nothing below it is hidden.
	Hidden int `json:"hidden,omitempty"`
	// Passages lists the passages of the section's own text when it is
	// over slice.LargeSectionBytes, too large to send whole for one fact:
	// a planner points into it by passage id. At most maxSectionPassages
	// lines; past that, runs of consecutive passages ("p40-p42"). They
	// are shown with the leads, and go when leads go.
	Passages []slice.Passage `json:"passages,omitempty"`

	subtree int // number of descendants
}

// DocumentInfo describes one document of the outline.
type DocumentInfo struct {
	Name   string `json:"name"`
	Lines  int    `json:"lines"`
	Tokens int    `json:"tokens"`
	// Preamble is the last line of text before the first heading, 0 when
	// there is none; such text has no path and is pointed at by lines.
	Preamble int `json:"preamble_end_line,omitempty"`
	Headings int `json:"headings"`
	// Passages is the passage index of a document with no headings, the
	// only structure a planner can point into there (slice.Document's
	// Passages: the ids a slice pointer names); empty when it has headings.
	Passages []slice.Passage `json:"passages,omitempty"`
}

// Outline is what Build returns: the entries that fit the budget, in
// document order.
type Outline struct {
	Documents []DocumentInfo `json:"documents"`
	Entries   []Entry        `json:"entries"`
	// Depth is the deepest nesting depth shown; deeper headings are
	// collapsed into their ancestors at this depth. It equals MaxDepth when
	// nothing is collapsed.
	Depth    int  `json:"depth"`
	MaxDepth int  `json:"max_depth"`
	Leads    bool `json:"leads"`
	// Tokens is the size of Text() as counted by the Build counter; Budget
	// is the limit it was built for (0: no limit).
	Tokens int `json:"tokens"`
	Budget int `json:"budget"`

	all   []Entry // every entry, collapsed or not, for Lookup
	index map[string]int
}

// ErrTooLarge is wrapped by the error Build returns when even the top-level
// headings without leads do not fit the budget.
var ErrTooLarge = errors.New("outline does not fit the budget")

// TooLargeError says how far over the budget the smallest outline is and
// what each document's smallest outline needs, so a caller can split the
// documents into groups that fit, or knows a single document cannot.
type TooLargeError struct {
	Budget int
	Need   int // tokens of the smallest outline of all documents together
	// AtLeast says Need and the per-document figures are lower bounds (a
	// token for each line of the smallest outline), given when they alone
	// are over the budget and the outline was not counted.
	AtLeast bool
	// PerDocument is, for each document in order, the tokens of its
	// smallest outline on its own.
	PerDocument []DocumentNeed
}

// DocumentNeed is one document's smallest outline size.
type DocumentNeed struct {
	Name   string
	Tokens int
}

func (e *TooLargeError) Error() string {
	largest := DocumentNeed{}
	for _, d := range e.PerDocument {
		if d.Tokens > largest.Tokens {
			largest = d
		}
	}
	need := "need"
	if e.AtLeast {
		need = "need at least"
	}
	if len(e.PerDocument) > 1 && largest.Tokens <= e.Budget {
		return fmt.Sprintf("outline: even the top-level headings %s %d tokens and the budget is %d; split the %d documents into groups outlined separately (the largest, %q, needs %d)",
			need, e.Need, e.Budget, len(e.PerDocument), largest.Name, largest.Tokens)
	}
	return fmt.Sprintf("outline: even the top-level headings of %q %s %d tokens and the budget is %d; split the document (or raise the budget)",
		largest.Name, need, largest.Tokens, e.Budget)
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Lookup returns the entry a pointer names: a path exactly as the outline
// spells it (spacing around the separator may differ), prefixed by the
// document name and Sep when the outline has several documents. Collapsed
// headings are found too.
func (o *Outline) Lookup(pointer string) (Entry, bool) {
	i, ok := o.index[normPointer(pointer)]
	if !ok {
		return Entry{}, false
	}
	return o.all[i], true
}

// Pointer is how the outline names e in its text and how Lookup finds it.
func (o *Outline) Pointer(e Entry) string {
	if len(o.Documents) > 1 {
		return e.Document + Sep + e.Path
	}
	return e.Path
}

func normPointer(p string) string {
	parts := strings.Split(p, ">")
	for i, s := range parts {
		parts[i] = strings.Join(strings.Fields(s), " ")
	}
	return strings.Join(parts, Sep)
}

// Match returns the entries whose pointer ends with pointer's titles, in
// document order: a bare title ("Maintenance Backlog") matches every
// heading of that title, at any depth and collapsed or not, and a partial
// path ("Acme > Pricing") every heading whose last titles those are.
// Titles are compared without regard to case or spacing. A planner that
// saw only the top levels of an outline can name a deeper section that
// way, when its title is unique.
func (o *Outline) Match(pointer string) []Entry {
	want := strings.Split(strings.ToLower(normPointer(pointer)), Sep)
	if len(want) == 0 || want[len(want)-1] == "" {
		return nil
	}
	var out []Entry
	for _, e := range o.all {
		have := strings.Split(strings.ToLower(normPointer(o.Pointer(e))), Sep)
		if len(have) < len(want) {
			continue
		}
		tail := have[len(have)-len(want):]
		last := len(want) - 1
		if !slices.Equal(tail[:last], want[:last]) {
			continue
		}
		// The title itself, so that "Notes" names both of two Notes
		// under one parent and not only the first, whose path has no
		// ordinal; "Notes (2)" still names the second by its path.
		if want[last] == tail[last] || want[last] == strings.ToLower(normPointer(e.Title)) {
			out = append(out, e)
		}
	}
	return out
}
