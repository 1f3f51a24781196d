// Package textclip shortens text for messages, log notes and columns. Every
// cut falls between characters: a byte cut could split a UTF-8 character and
// leave invalid text in a log line, an error or a span, which JSON encoders
// then replace or readers reject.
package textclip

import "unicode/utf8"

// Mark ends a text that was cut.
const Mark = "…"

// Runes returns s when it has at most n characters, else its first n
// characters followed by Mark.
func Runes(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s // n bytes hold at most n characters
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i == len(s) {
		return s
	}
	return s[:i] + Mark
}

// Width returns s when it has at most n characters, else its first n-1
// characters followed by Mark: the result is never wider than n characters,
// for a column of that width.
func Width(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Runes(s, n-1)
}
