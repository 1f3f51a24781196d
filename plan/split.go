package plan

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	// Items of a numbered or bulleted list, at the start of a line.
	listItem = regexp.MustCompile(`(?m)^\s*(?:\d+[.)]|[-*•]|\(\d+\))\s+`)
	// Inline enumerations: "(1) ... (2) ..." or "1) ... 2) ...".
	inlineItem = regexp.MustCompile(`(?:^|\s)(?:\(\d+\)|\d+\))\s+`)
	// A sentence ends at . ? or ! followed by space and a capital, a digit
	// or a quote; "e.g. the" and "3.5" do not end one.
	sentenceEnd = regexp.MustCompile(`[.?!]+\s+["'(]?[A-Z0-9]`)
	// Clauses joined by ";" or " and also " are separate questions; a plain
	// "and" is not split, since it usually joins parts of one question.
	clauseSep = regexp.MustCompile(`(?i);\s*|\s+and\s+also\s+`)
)

// SplitTask splits a task into at most max sub-questions: list items,
// sentences, and clauses joined by ";" or "and also". A lead-in ending in a
// colon ("Answer these:") is dropped when items follow it, and pieces with no
// content words are dropped. Pieces beyond max are merged into the last one.
func SplitTask(task string, max int) []string {
	task = strings.TrimSpace(task)
	if task == "" {
		return []string{""}
	}
	if max <= 0 {
		max = DefaultMaxSubtasks
	}
	var pieces []string
	for _, item := range splitOn(task, listItem) {
		for _, inl := range splitOn(item, inlineItem) {
			for _, sent := range splitSentences(inl) {
				for _, cl := range clauseSep.Split(sent, -1) {
					if cl = strings.TrimSpace(cl); cl != "" {
						pieces = append(pieces, cl)
					}
				}
			}
		}
	}
	var out []string
	for i, pc := range pieces {
		if strings.HasSuffix(pc, ":") && i < len(pieces)-1 {
			continue
		}
		if len(terms(pc)) == 0 {
			continue
		}
		out = append(out, pc)
	}
	if len(out) == 0 {
		return []string{task}
	}
	if len(out) > max {
		out = append(out[:max-1], strings.Join(out[max-1:], " "))
	}
	return out
}

// splitOn splits s before each match of re, dropping the matched marker.
func splitOn(s string, re *regexp.Regexp) []string {
	locs := re.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return []string{s}
	}
	var out []string
	prev := 0
	for _, l := range locs {
		if l[0] > prev {
			out = append(out, s[prev:l[0]])
		}
		prev = l[1]
	}
	return append(out, s[prev:])
}

func splitSentences(s string) []string {
	var out []string
	start := 0
	for _, l := range sentenceEnd.FindAllStringIndex(s, -1) {
		// Cut after the punctuation run, keep the next sentence's first
		// character.
		cut := l[0] + strings.IndexFunc(s[l[0]:l[1]], unicode.IsSpace)
		out = append(out, s[start:cut])
		start = cut
	}
	return append(out, s[start:])
}
