package state

import (
	"errors"
	"strings"
	"testing"
)

// TestParseBoundedShapes: shapes the YAML parser spends superlinear time
// on are ErrMalformed with their line, as one line.
func TestParseBoundedShapes(t *testing.T) {
	for name, src := range map[string]string{
		"deep nesting": "handoff:\n  context: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n",
		"deep blocks":  "handoff:\n  x: " + strings.Repeat("- ", 300) + "y\n",
	} {
		_, err := Parse([]byte(src), "state.yaml")
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 2: nesting") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one ErrMalformed line at line 2 about nesting", name, err)
		}
	}
}
