package workflow

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/bounded"
)

// bombWorkflow is a baton.yaml whose skills list holds a "billion laughs":
// nine lists of ten aliases of the list before, 10^9 values expanded.
func bombWorkflow() string {
	var b strings.Builder
	b.WriteString("name: bomb\ncapsule: c.md\nphases:\n  - {name: p, skill: summarization}\nskills:\n  - &s0 [x,x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  - &s%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*s%d,", i-1), 10), ","))
	}
	return b.String()
}

func TestParseAliasBomb(t *testing.T) {
	src := bombWorkflow()
	var err error
	elapsed, alloc := bounded.Measure(t, 10*time.Second, func() { _, err = Parse([]byte(src), "baton.yaml") })
	t.Logf("%d-byte baton.yaml refused in %v with %d KB allocated: %v", len(src), elapsed, alloc>>10, err)
	if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "aliases") {
		t.Fatalf("err = %q, want one line about aliases wrapping ErrInvalid", err)
	}
	if alloc > 100<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
}

// TestParseRefusesHardShapes: shapes the YAML parser takes superlinear
// time on are refused with the line they start on.
func TestParseRefusesHardShapes(t *testing.T) {
	var keys strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&keys, "k%d: v\n", i)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"deep nesting", "name: n\ncapsule: c.md\nphases: " + strings.Repeat("[", 500) + strings.Repeat("]", 500) + "\n", "nesting is deeper"},
		{"many keys", "name: n\ncapsule: c.md\nphases: [{name: p, skill: s}]\n" + keys.String(), "more than 2000 keys"},
	} {
		_, err := Parse([]byte(tc.src), "baton.yaml")
		var e *Error
		if !errors.As(err, &e) || e.Line == 0 || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %.200v, want one line with a line number and %q", tc.name, err, tc.want)
		}
	}
}
