package runner

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A sub-agent's goal or a tool's error cut for a log note stays valid UTF-8
// when the bound falls inside a character.
func TestClipKeepsCharactersWhole(t *testing.T) {
	got := clip("résumé  of\nthe "+strings.Repeat("日", 200), 20)
	if !utf8.ValidString(got) {
		t.Fatalf("clip = %q, not valid UTF-8", got)
	}
	if want := "résumé of the 日日日日日日…"; got != want {
		t.Errorf("clip = %q, want %q", got, want)
	}
}
