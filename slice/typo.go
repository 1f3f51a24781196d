package slice

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The typo rule. A pointer that differs from a heading by a slip of the
// keyboard should still find it, but a pointer that is another real word
// must not: "Posting" is not a typo of "Hosting", it names something else,
// and a wrong section is worse than the whole document. So a typo is
// accepted only where it cannot be read as another word:
//
//   - word by word, in order: the pointer and the heading have the same
//     words, except for at most one slipped word (two in a title of 12
//     letters or more);
//   - a slipped word and its heading word both have 6 letters or more, only
//     letters, and the same first letter;
//   - the slip is one transposition of neighbours ("Methdos"), one omission
//     ("Rsults") or one insertion ("Configurration"); never a substitution,
//     which is how one real word becomes another (Posting/Hosting,
//     Testing/Nesting, Cost/Host);
//   - the slipped word is not a word of the document itself: a word the
//     document uses is a real word ("Catching" in a document with a
//     "Caching" heading), except that adding or dropping a final "s" is the
//     same word ("Result" for "Results").
//
// The rule is deterministic; a pointer it refuses comes back unmatched, and
// a pointer it accepts is reported as an approximate match.

// typoWord reports whether p, a pointer word, is a slip of h, a heading
// word; both are folded to lower case.
func typoWord(p, h string) bool {
	if p == h {
		return false
	}
	rp, rh := []rune(p), []rune(h)
	if min(len(rp), len(rh)) < 6 || rp[0] != rh[0] || !allLetters(rp) || !allLetters(rh) {
		return false
	}
	switch len(rp) - len(rh) {
	case 0:
		// One transposition of neighbours and nothing else.
		i := 0
		for i < len(rp) && rp[i] == rh[i] {
			i++
		}
		return i+1 < len(rp) && rp[i] == rh[i+1] && rp[i+1] == rh[i] && string(rp[i+2:]) == string(rh[i+2:])
	case 1:
		return oneDeletion(rp, rh)
	case -1:
		return oneDeletion(rh, rp)
	}
	return false
}

// oneDeletion reports whether removing one rune from long gives short.
func oneDeletion(long, short []rune) bool {
	i := 0
	for i < len(short) && long[i] == short[i] {
		i++
	}
	return string(long[i+1:]) == string(short[i:])
}

func allLetters(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// pluralOf reports whether a and b differ only by a final "s".
func pluralOf(a, b string) bool {
	return a+"s" == b || b+"s" == a
}

// typoWords is the number of slipped words between a pointer and a heading
// when the typo rule accepts the pair.
func (d *Document) typoWords(pk, hk headingKeys) (int, bool) {
	if pk.rest == "" || hk.rest == "" || len(pk.words) != len(hk.words) || (pk.num != "" && hk.num != "" && pk.num != hk.num) {
		return 0, false
	}
	n := 0
	for i, p := range pk.words {
		h := hk.words[i]
		if p == h {
			continue
		}
		if !typoWord(p, h) || (!pluralOf(p, h) && d.usesWord(p)) {
			return 0, false
		}
		n++
	}
	limit := 1
	if min(runeLen(pk.rest), runeLen(hk.rest)) >= 12 {
		limit = 2
	}
	return n, n > 0 && n <= limit
}

// usesWord reports whether w (lower case) is a word of the document,
// written in lower case, capitalised or in capitals. Only a pointer that
// reaches the typo tier asks, about a word or two, so each question is a
// scan of the document (memoised) rather than an index of every word.
func (d *Document) usesWord(w string) bool {
	d.vocabMu.Lock()
	defer d.vocabMu.Unlock()
	if v, ok := d.vocab[w]; ok {
		return v
	}
	if d.vocab == nil {
		d.vocab = map[string]bool{}
	}
	r, size := utf8.DecodeRuneInString(w)
	forms := []string{w, string(unicode.ToUpper(r)) + w[size:], strings.ToUpper(w)}
	found := false
	for _, f := range forms {
		if hasWord(d.src, []byte(f)) {
			found = true
			break
		}
	}
	d.vocab[w] = found
	return found
}

// hasWord reports whether w occurs in src with no letter either side.
func hasWord(src, w []byte) bool {
	for from := 0; from < len(src); {
		i := bytes.Index(src[from:], w)
		if i < 0 {
			return false
		}
		at := from + i
		before, _ := utf8.DecodeLastRune(src[:at])
		after, _ := utf8.DecodeRune(src[at+len(w):])
		if !unicode.IsLetter(before) && !unicode.IsLetter(after) {
			return true
		}
		from = at + 1
	}
	return false
}
