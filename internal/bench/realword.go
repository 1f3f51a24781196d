package bench

import (
	"slices"
	"strings"
	"unicode"

	"github.com/baton-dev/baton/slice"
)

// kindRealWord cites a heading with its longest word changed, by one edit,
// into another word the corpus really uses ("Posting" for "Hosting"). Such
// a pointer names something else: the right outcome is no match (a
// fallback), and any cut is a wrong bind.
const kindRealWord = "another real word (one edit)"

// negativeKind reports whether a kind's pointers name no section, so that
// recall does not apply and any cut is wrong.
func negativeKind(k string) bool { return k == "names nothing" || k == kindRealWord }

// vocabulary is every word of the corpus, lower case, letters only.
func vocabulary(tasks []*Task) map[string]bool {
	v := map[string]bool{}
	for _, t := range tasks {
		for _, w := range strings.FieldsFunc(t.Text, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len(w) >= 3 {
				v[strings.ToLower(w)] = true
			}
		}
	}
	return v
}

// realWordVariant changes the longest word of title (4 letters or more)
// into the first word of vocab one edit away from it (a substitution, a
// transposition of neighbours, an omission or an insertion), never an
// ending added or dropped ("Result"/"Results", "Create"/"Created",
// "compile"/"compiler"), which is the same word inflected and may rightly
// find the heading. The result must name no heading of d, or it would not
// be wrong to match it.
func realWordVariant(title string, vocab map[string]bool, d *slice.Document) (string, bool) {
	words := strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) })
	longest := ""
	for _, w := range words {
		if len([]rune(w)) > len([]rune(longest)) {
			longest = w
		}
	}
	if len([]rune(longest)) < 4 {
		return "", false
	}
	low := strings.ToLower(longest)
	for _, c := range oneEdit(low) {
		if !vocab[c] || strings.HasPrefix(c, low) || strings.HasPrefix(low, c) {
			continue
		}
		rs := []rune(c)
		if unicode.IsUpper([]rune(longest)[0]) {
			rs[0] = unicode.ToUpper(rs[0])
		}
		ptr := strings.Replace(title, longest, string(rs), 1)
		if !namesAHeading(d, ptr) {
			return ptr, true
		}
	}
	return "", false
}

// oneEdit lists the strings one edit from w, sorted, so the choice is
// deterministic.
func oneEdit(w string) []string {
	rs := []rune(w)
	seen := map[string]bool{}
	add := func(s []rune) { seen[string(s)] = true }
	for i := range rs {
		add(slices.Concat(rs[:i:i], rs[i+1:])) // omission
		if i+1 < len(rs) {
			t := slices.Clone(rs)
			t[i], t[i+1] = t[i+1], t[i]
			add(t) // transposition
		}
		for c := 'a'; c <= 'z'; c++ {
			t := slices.Clone(rs)
			t[i] = c
			add(t) // substitution
		}
	}
	for i := 0; i <= len(rs); i++ {
		for c := 'a'; c <= 'z'; c++ {
			add(slices.Concat(rs[:i:i], []rune{c}, rs[i:])) // insertion
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
