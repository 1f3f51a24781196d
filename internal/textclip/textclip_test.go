package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRunes(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"héllo", 2, "hé…"},   // the cut after a two-byte character
		{"日本語です", 4, "日本語で…"}, // three-byte characters: 12 bytes, 4 characters kept
		{"日本語", 3, "日本語"},     // 9 bytes but 3 characters: not cut
		{"a😀b", 2, "a😀…"},     // a four-byte character at the cut
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	} {
		if got := Runes(c.s, c.n); got != c.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestWidth(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"日本語です", 3, "日本…"},
	} {
		got := Width(c.s, c.n)
		if got != c.want {
			t.Errorf("Width(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if utf8.RuneCountInString(got) > c.n {
			t.Errorf("Width(%q, %d) is %d characters wide", c.s, c.n, utf8.RuneCountInString(got))
		}
	}
}

// Every cut of a text of mixed widths is valid UTF-8.
func TestRunesNeverSplitsACharacter(t *testing.T) {
	s := strings.Repeat("aé日😀", 10)
	for n := range utf8.RuneCountInString(s) + 2 {
		if got := Runes(s, n); !utf8.ValidString(got) {
			t.Fatalf("Runes(s, %d) = %q is not valid UTF-8", n, got)
		}
	}
}
