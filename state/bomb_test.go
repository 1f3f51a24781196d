package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestAliasBomb: a few lines whose aliases expand to ten million values
// are refused quickly instead of exhausting memory.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	if _, err := Parse([]byte(b.String()), "bomb.yaml"); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
	// Modest aliasing is fine.
	if _, err := Parse([]byte("a: &a [1, 2]\nb: [*a, *a]\nc: {<<: {k: v}}\n"), "ok.yaml"); err != nil {
		t.Fatal(err)
	}
}
