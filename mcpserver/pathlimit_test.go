package mcpserver_test

import (
	"strings"
	"testing"
)

// Every path a tool takes is refused at once over the path limits (4,096
// bytes, 64 segments), in one short line naming them rather than quoting
// the whole path back.
func TestEveryPathIsBoundedInLength(t *testing.T) {
	dir := t.TempDir()
	cs, _ := connectIn(t, dir)
	for tool, variants := range pathArgs {
		for i, args := range variants {
			for _, ext := range []string{".md", ".yaml", ".jsonl"} {
				p := strings.Repeat("d/", 3000) + "x" + ext
				res := call(t, cs, tool, args(p), nil)
				text := resultText(res)
				if !res.IsError || strings.Contains(text, "\n") || len(text) > 300 || !strings.Contains(text, "at most 64 segments and 4096 bytes") {
					t.Errorf("%s (variant %d) with a %d-byte path: isError %v, text %.300q; want one short line naming the limits", tool, i+1, len(p), res.IsError, text)
				}
			}
		}
	}
}
