package plan

import (
	"slices"
	"strings"
)

// bodyIndex holds the terms of the sections' texts as posting lists, each
// count once. A section's text holds its subsections' text, so tokenizing
// every text would read a line once for each heading above it, and keeping
// a count per term per section would hold each line's terms once for each
// heading too. When the sections tile their lines the way markdown sections
// do (a heading's own lines, then its subsections back to back to its last
// line), each line is read once, in the section that owns it, and a
// section's count of a term is the sum over its subtree (see
// index.postings), worked out only for the terms a query asks about.
// Sections that do not tile are counted text by text.
type bodyIndex struct {
	vocab map[string]int32 // each term's number, the place of its postings
	post  [][]bodyPosting  // by term number, in section order
	lens  []float64        // each section's number of terms, its subsections' included
	tiled bool             // counts are a section's own lines and add up the tree

	secs   []SectionText // what the postings of a term not kept are read from
	parent []int
}

// own returns the text section j's postings count: its own lines when the
// sections tile, else its whole text.
func (bi *bodyIndex) own(j int) string {
	s := bi.secs[j]
	if bi.tiled && j+1 < len(bi.secs) && bi.parent[j+1] == j {
		return firstLines(s.Text, bi.secs[j+1].Line-s.Line)
	}
	return s.Text
}

// scan adds the postings of term t, not kept when the index was built, by
// reading every section's own text again.
func (bi *bodyIndex) scan(t string) int32 {
	id := bi.id(t)
	for j := range bi.secs {
		n := int32(0)
		for u := range termSeq(bi.own(j)) {
			if u == t {
				n++
			}
		}
		if n > 0 {
			bi.post[id] = append(bi.post[id], bodyPosting{int32(j), n})
		}
	}
	return id
}

// bodyPosting is a section's count of a term: in its own lines when the
// sections tile, else in its whole text.
type bodyPosting struct {
	sec, n int32
}

func newBodyIndex(secs []SectionText, parent []int, kept termSet) *bodyIndex {
	bi := &bodyIndex{vocab: map[string]int32{}, lens: make([]float64, len(secs)), tiled: tiles(secs, parent), secs: secs, parent: parent}
	counts := map[string]int32{}
	var seen []string // counts' keys in the order met, so the postings do not depend on map order
	for j := range secs {
		// Clearing a map keeps its size, and a long section would make
		// every clear after it cost as much.
		if len(counts) > 1024 {
			counts = map[string]int32{}
		} else {
			clear(counts)
		}
		seen = seen[:0]
		n := 0
		for t := range termSeq(bi.own(j)) {
			n++
			if !kept.has(t) {
				continue
			}
			if counts[t] == 0 {
				seen = append(seen, t)
			}
			counts[t]++
		}
		for _, t := range seen {
			id := bi.id(t)
			bi.post[id] = append(bi.post[id], bodyPosting{int32(j), counts[t]})
		}
		bi.lens[j] = float64(n)
	}
	// Appending leaves up to a quarter of each list unused; the index
	// lives as long as the plan is being made, so it is worth the copy.
	for id, ps := range bi.post {
		if cap(ps) > len(ps) {
			bi.post[id] = slices.Clone(ps)
		}
	}
	if bi.tiled {
		// A subsection comes after its parent, so walking backwards
		// finishes each subtree before it is added to the one above.
		for j := len(secs) - 1; j >= 0; j-- {
			if p := parent[j]; p >= 0 {
				bi.lens[p] += bi.lens[j]
			}
		}
	}
	return bi
}

// id returns term t's number, giving it the next one if it is new. A new
// term is copied into the vocabulary: t is a piece of a lowercased section
// text, which the map would otherwise keep whole. The key is only ever
// stored once, since assigning to a map replaces the key as well.
func (bi *bodyIndex) id(t string) int32 {
	if id, ok := bi.vocab[t]; ok {
		return id
	}
	id := int32(len(bi.post))
	bi.vocab[strings.Clone(t)] = id
	bi.post = append(bi.post, nil)
	return id
}

// postingsOf returns the postings of term t and its number, or -1 when no
// section holds it.
func (bi *bodyIndex) postingsOf(t string) ([]bodyPosting, int32) {
	id, ok := bi.vocab[t]
	if !ok {
		return nil, -1
	}
	return bi.post[id], id
}

// headPosting is how often a term is in a section's title and in the
// headings above it.
type headPosting struct {
	sec, title, path int32
}

// termPostings is one term's count in each section that holds it: all with
// the heading path, own without it (aligned with all).
type termPostings struct {
	all []posting
	own []float64
}

// postings returns term t's count in every section that holds it. A
// section's body count is the sum of its subtree's postings when the
// sections tile, so each posting is added to the sections above it: a
// pass over the term's postings times the depth of the outline, done once
// per query term.
func (ix *index) postings(t string) *termPostings {
	if tp, ok := ix.terms[t]; ok {
		return tp
	}
	ix.keep(t)
	type acc struct {
		sec       int32
		own, path float64
	}
	var accs []acc
	at := map[int32]int{} // section -> its place in accs
	get := func(j int32) *acc {
		k, ok := at[j]
		if !ok {
			k = len(accs)
			at[j] = k
			accs = append(accs, acc{sec: j})
		}
		return &accs[k]
	}
	body, id := ix.body.postingsOf(t)
	for _, p := range body {
		if !ix.body.tiled {
			get(p.sec).own += float64(p.n)
			continue
		}
		for j := int(p.sec); j >= 0; j = ix.parent[j] {
			get(int32(j)).own += float64(p.n)
		}
	}
	for _, h := range ix.head[id] {
		a := get(h.sec)
		a.own += titleWeight * float64(h.title)
		a.path += pathWeight * float64(h.path)
	}
	slices.SortFunc(accs, func(a, b acc) int { return int(a.sec - b.sec) })
	tp := &termPostings{all: make([]posting, len(accs)), own: make([]float64, len(accs))}
	for k, a := range accs {
		tp.all[k] = posting{a.sec, a.own + a.path}
		tp.own[k] = a.own
	}
	ix.terms[t] = tp
	return tp
}

// hasOwn reports whether section j holds term t in its title or text.
func (ix *index) hasOwn(j int, t string) bool {
	tp := ix.postings(t)
	k, ok := slices.BinarySearchFunc(tp.all, int32(j), func(p posting, j int32) int { return int(p.doc - j) })
	return ok && tp.own[k] > 0
}

// tiles reports whether every section's text has one line per line of its
// range and its subsections follow its own lines back to back to its end.
func tiles(secs []SectionText, parent []int) bool {
	next := make([]int, len(secs)) // line the next subsection of j must start on; 0 before the first
	for j, s := range secs {
		if s.Line <= 0 || s.EndLine < s.Line || strings.Count(s.Text, "\n") != s.EndLine-s.Line {
			return false
		}
		if p := parent[j]; p >= 0 {
			if next[p] != 0 && s.Line != next[p] {
				return false
			}
			if s.Line <= secs[p].Line {
				return false
			}
			next[p] = s.EndLine + 1
		}
	}
	for j, s := range secs {
		if next[j] != 0 && next[j] != s.EndLine+1 {
			return false
		}
	}
	return true
}

// firstLines returns the first n lines of s, without the final newline.
func firstLines(s string, n int) string {
	i := 0
	for range n {
		k := strings.IndexByte(s[i:], '\n')
		if k < 0 {
			return s
		}
		i += k + 1
	}
	return s[:max(i-1, 0)]
}
