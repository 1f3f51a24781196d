package plan

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// conjunction is one question that asks about several things joined by
// "and": a shared head ("What were"), the parts ("the risks", "the
// revenue") and a shared tail ("of Acme?"). Clause conjunctions ("What
// caused X and why did Y fail?") have whole questions as parts and no head
// or tail.
type conjunction struct {
	head, tail string
	parts      []string
	clauses    bool
	end        string // the question's closing punctuation, "" if none
	// compared is the whole question when it compares its parts ("compare
	// X with Y"): each part's own question asks what the document says of
	// it, for the comparison.
	compared string
}

// question is the sub-question about the parts at idx, in order.
func (c conjunction) question(idx []int) string {
	if c.compared != "" {
		if len(idx) != 1 {
			return c.compared
		}
		var others []string
		for k, p := range c.parts {
			if k != idx[0] {
				others = append(others, p)
			}
		}
		return fmt.Sprintf("What does the document say about %s, for a comparison with %s?", c.parts[idx[0]], strings.Join(others, " and "))
	}
	if c.clauses {
		if len(idx) == len(c.parts) {
			return strings.Join(c.parts, " and ") + c.end
		}
		q := c.parts[idx[0]]
		r, n := utf8.DecodeRuneInString(q)
		return string(unicode.ToUpper(r)) + q[n:] + c.end
	}
	names := make([]string, len(idx))
	for i, k := range idx {
		names[i] = c.parts[k]
	}
	list := names[0]
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return strings.TrimSpace(strings.Join(strings.Fields(c.head+" "+list+" "+c.tail), " ")) + c.end
}

// query is what part k is looked up by: its own question, or for a
// comparison the part alone, since the other side's words would draw the
// ranking to a section holding both.
func (c conjunction) query(k int) string {
	if c.compared != "" {
		return c.parts[k]
	}
	return c.question([]int{k})
}

// Words after which a clause starts: "... and why did it fail?".
var clauseStarts = wordSet(`what why how which who whom whose when where whether
	list summarise summarize explain describe identify give state show estimate recommend suggest propose rank compare name`)

// Words that end a question's head, walking back from the first part: a
// question word, an auxiliary, an asking verb or a preposition. A part never
// contains one, so "risks of the migration" is not a part.
var headEnds = wordSet(`what why how which who whom whose when where whether
	is are was were did do does has have had will would can could should may might must
	list summarise summarize explain describe identify give show state find name tell report estimate me us
	` + prepositionWords)

// Words that end the last part: the shared tail starts there.
var tailStarts = wordSet(prepositionWords + ` that which who whom whose when where while if than`)

const prepositionWords = `of in for during at on from by with across over after before since per within among under to into about behind around through`

var prepositions = wordSet(prepositionWords)

var doSupport = wordSet(`do does did`)

var determiners = wordSet(`the a an its their our his her this that these those each every`)

// Questions that ask about things together, never one at a time.
var jointCues = []string{"compar", "versus", "vs", "differ", "contrast", "between", "both", "either", "neither", "relative", "together", "combined", "ratio"}

// Pairs that name one thing: "pros and cons of X" is one question.
var idioms = wordSet(`pros+cons strengths+weaknesses advantages+disadvantages terms+conditions ups+downs rise+fall
	trial+error research+development supply+demand cause+effect causes+effects profit+loss profits+losses
	questions+answers q+a back+forth health+safety mergers+acquisitions dos+donts do+dont costs+benefits
	risks+rewards rights+obligations roles+responsibilities opportunities+threats bread+butter`)

const maxPartWords = 4

// splitConjunction reads q as one question about several things joined by a
// single "and", or reports false. It is deliberately narrow: one "and",
// parts of at most four words with no question word or preposition inside,
// no comparison or "both", no fixed pair such as "pros and cons", and
// nothing in quotes. Retrieve then splits only when the parts find
// different sections, so a wrong reading costs at most a merged subtask.
func splitConjunction(q string) (conjunction, bool) {
	toks := strings.Fields(q)
	and := -1
	for i, t := range toks {
		if strings.EqualFold(t, "and") {
			if and >= 0 {
				return conjunction{}, false
			}
			and = i
		}
	}
	if and <= 0 || and == len(toks)-1 || strings.ContainsAny(q, "\"“”") {
		return conjunction{}, false
	}
	low := strings.ToLower(q)
	for _, w := range strings.FieldsFunc(low, notWordRune) {
		for _, cue := range jointCues {
			if strings.HasPrefix(w, cue) && (cue != "vs" || w == "vs") {
				return conjunction{}, false
			}
		}
	}
	end := ""
	last := toks[len(toks)-1]
	if trimmed := strings.TrimRight(last, "?.!"); trimmed != last {
		end = last[len(trimmed):]
		toks[len(toks)-1] = trimmed
	}
	if w := bare(toks[and+1]); clauseStarts[w] {
		left := strings.TrimRight(strings.Join(toks[:and], " "), ",;")
		right := strings.Join(toks[and+1:], " ")
		if !hasTopic(left) || !hasTopic(right) {
			return conjunction{}, false
		}
		return conjunction{parts: []string{left, right}, clauses: true, end: end}, true
	}
	// The last part runs from "and" to the first word of the shared tail.
	var lastPart []string
	j := and + 1
	for ; j < len(toks); j++ {
		if tailStarts[bare(toks[j])] {
			break
		}
		lastPart = append(lastPart, toks[j])
		if strings.HasSuffix(toks[j], ",") {
			j++
			break
		}
	}
	if len(lastPart) == 0 || len(lastPart) > maxPartWords {
		return conjunction{}, false
	}
	tail := strings.Join(toks[j:], " ")
	// Earlier parts, walking back from "and" to the head's last word; a
	// comma ends one part and starts the one before it.
	var parts [][]string
	cur := []string{}
	k := and - 1
	for ; k >= 0; k-- {
		w := bare(toks[k])
		if headEnds[w] {
			break
		}
		if strings.HasSuffix(toks[k], ",") && len(cur) > 0 {
			parts = append(parts, cur)
			cur = nil
		}
		cur = append([]string{toks[k]}, cur...)
		if len(cur) > maxPartWords {
			return conjunction{}, false
		}
	}
	if len(cur) == 0 {
		return conjunction{}, false
	}
	// "the risks of the migration, the revenue and the team": a list
	// whose first item follows a preposition may have begun before it.
	if len(parts) > 0 && k >= 0 && prepositions[bare(toks[k])] {
		return conjunction{}, false
	}
	parts = append(parts, cur)
	// "What did Acme and Globex charge": after "do" the parts are the
	// subject and the verb that follows them is shared, so the last part
	// is cut to the length of the longest part before it.
	if k >= 0 && doSupport[bare(toks[k])] {
		longest := 0
		for _, p := range parts {
			longest = max(longest, len(p))
		}
		if len(lastPart) > longest {
			tail = strings.TrimSpace(strings.Join(lastPart[longest:], " ") + " " + tail)
			lastPart = lastPart[:longest]
		}
	}
	c := conjunction{head: strings.Join(toks[:k+1], " "), tail: tail, end: end}
	for i := len(parts) - 1; i >= 0; i-- {
		c.parts = append(c.parts, strings.TrimRight(strings.Join(parts[i], " "), ",;"))
	}
	c.parts = append(c.parts, strings.TrimRight(strings.Join(lastPart, " "), ",;"))
	for _, p := range c.parts {
		if len(terms(p)) == 0 {
			return conjunction{}, false
		}
	}
	// "the duration and impact": the second part shares the article.
	if first := strings.Fields(c.parts[0]); determiners[strings.ToLower(first[0])] {
		for i := 1; i < len(c.parts); i++ {
			if !determiners[bare(strings.Fields(c.parts[i])[0])] {
				c.parts[i] = first[0] + " " + c.parts[i]
			}
		}
	}
	for i, p := range c.parts {
		if i > 0 {
			prev := strings.Fields(c.parts[i-1])
			next := strings.Fields(p)
			pair := bare(prev[len(prev)-1]) + "+" + bare(next[len(next)-1])
			if idioms[pair] || idioms[bare(prev[len(prev)-1])+"+"+bare(next[0])] {
				return conjunction{}, false
			}
		}
	}
	return c, true
}

// hasTopic reports whether s has a content word beyond the words that ask
// ("why", "list"): "and why?" asks about the same thing again.
func hasTopic(s string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), notWordRune) {
		if !clauseStarts[w] && len(terms(w)) > 0 {
			return true
		}
	}
	return false
}

// bare lowercases a token and strips the punctuation around it.
func bare(tok string) string {
	return strings.ToLower(strings.TrimFunc(tok, notWordRune))
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// comparisons are the forms of a question that compares two things: the
// parts are the submatches named a and b.
var comparisons = []*regexp.Regexp{
	regexp.MustCompile(`(?i)^(?:please\s+)?(?:compare|contrast)\s+(?P<a>.+?)\s+(?:with|to|against|and|versus|vs\.?)\s+(?P<b>.+?)$`),
	regexp.MustCompile(`(?i)^how\s+(?:does|do|did)\s+(?P<a>.+?)\s+compare\s+(?:with|to|against)\s+(?P<b>.+?)$`),
	regexp.MustCompile(`(?i)^(?:what\s+(?:is|are|was|were)\s+)?(?:the\s+)?(?:main\s+)?differences?\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)$`),
	regexp.MustCompile(`(?i)^(?P<a>[^,;:]+?)\s+(?:versus|vs\.?)\s+(?P<b>[^,;:]+?)$`),
}

// splitComparison reads q as a comparison of two things ("compare X with
// Y", "how does X compare to Y", "differences between X and Y", "X versus
// Y"), or reports false. Each part is at most twice maxPartWords words and
// has a content word; Retrieve splits only when the parts find different
// sections, so each sub-agent reads one side and the synthesis compares.
func splitComparison(q string) (conjunction, bool) {
	body := strings.TrimSpace(q)
	trimmed := strings.TrimRight(body, "?.!")
	end := body[len(trimmed):]
	for _, re := range comparisons {
		m := re.FindStringSubmatch(trimmed)
		if m == nil {
			continue
		}
		a := strings.TrimSpace(m[re.SubexpIndex("a")])
		b := strings.TrimSpace(m[re.SubexpIndex("b")])
		for _, p := range []string{a, b} {
			if n := len(strings.Fields(p)); n == 0 || n > 2*maxPartWords || len(terms(p)) == 0 {
				return conjunction{}, false
			}
		}
		return conjunction{parts: []string{a, b}, end: end, compared: body}, true
	}
	return conjunction{}, false
}
