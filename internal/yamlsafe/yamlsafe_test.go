package yamlsafe

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/baton-dev/baton/internal/bounded"
)

// bomb is a "billion laughs": 10^(levels+1) values in a few hundred bytes.
func bomb(levels int) string { return bounded.AliasBomb("", "a", levels, 10) }

func measure(t *testing.T, fn func()) (time.Duration, uint64) {
	t.Helper()
	return bounded.Measure(t, 10*time.Second, fn)
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		in   string
		lim  Limits
		want error
		line int
	}{
		{"alias bomb", bomb(9), Limits{}, ErrAliasBomb, 0},
		{"merge-key bomb", "a: &a {k0: x, k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x, k8: x, k9: x}\n" +
			"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
			"d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: {<<: *a}\n", Limits{}, ErrAliasBomb, 0},
		{"too large", strings.Repeat("k: v\n", 10), Limits{MaxBytes: 20}, ErrTooLarge, 0},
		{"deep flow", "k: " + strings.Repeat("[", 300), Limits{}, ErrTooComplex, 1},
		{"deep block", strings.Repeat("- ", 300) + "x\n", Limits{}, ErrTooComplex, 1},
		{"deep keys", deepKeys(300), Limits{}, ErrTooComplex, 201},
		{"many keys", manyKeys(20), Limits{MaxKeys: 10}, ErrTooComplex, 11},
		{"many documents", strings.Repeat("---\nk: v\n", 20), Limits{MaxDocuments: 10}, ErrTooComplex, 19},
		{"many bare documents", strings.Repeat("k: v\n...\n", 20), Limits{MaxDocuments: 10}, ErrTooComplex, 20},
		{"syntax", "a: b: c\n", Limits{}, ErrSyntax, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			var v any
			elapsed, alloc := measure(t, func() { err = tc.lim.Unmarshal([]byte(tc.in), &v) })
			t.Logf("%d bytes refused in %v, %d KB allocated: %v", len(tc.in), elapsed, alloc>>10, err)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Line != tc.line {
				t.Errorf("error %q: line %d, want %d", err, e.Line, tc.line)
			}
			if alloc > 100<<20 {
				t.Errorf("allocated %d MB", alloc>>20)
			}
		})
	}
}

func deepKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sk%d:\n", strings.Repeat(" ", i), i)
	}
	return b.String()
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d: v\n", i)
	}
	return b.String()
}

// TestAccepts: ordinary YAML, modest aliasing, merge keys and the largest
// accepted shapes all decode as the library decodes them.
func TestAccepts(t *testing.T) {
	ins := []string{
		"",
		"# only a comment\n",
		"a: &a [1, 2]\nb: [*a, *a]\nc: {<<: {k: v}}\n",
		"base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
		"- a: 1\n  b: 2\n- a: 3\n  b: 4\nkey:\n- x\n- y\nother: z\n",
		"? complex\n: value\n!!str tagged: !!int 3\n",
		"---\na: 1\n---\nb: 2\n",
		manyKeys(DefaultMaxKeys),
		"k: " + strings.Repeat("[", DefaultMaxDepth-1) + strings.Repeat("]", DefaultMaxDepth-1),
		bomb(2),
	}
	for _, in := range ins {
		var got, want any
		wantErr := yaml.Unmarshal([]byte(in), &want)
		err := Unmarshal([]byte(in), &got)
		if g, w := fmt.Sprint(got), fmt.Sprint(want); (err != nil) != (wantErr != nil) || g != w {
			t.Errorf("%.40q: got %.80s (%v), the library gives %.80s (%v)", in, g, err, w, wantErr)
		}
	}
}

// TestWorstAccepted reports how long the largest shapes the limits let
// through take; the hang guard is the only bound asserted, since the
// machine is shared. (The size cap itself is looser: a 1 MiB list of
// small mappings takes about 3 s and 330 MB in the library.)
func TestWorstAccepted(t *testing.T) {
	shapes := map[string]string{
		"max keys":      manyKeys(DefaultMaxKeys),
		"max depth":     strings.Repeat("- ", DefaultMaxDepth-1) + "x\n",
		"max documents": strings.Repeat("---\nk: v\n", DefaultMaxDocuments-1),
	}
	for name, in := range shapes {
		var err error
		elapsed, alloc := measure(t, func() { _, err = Parse([]byte(in), 0) })
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s (%d bytes): %v, %d MB allocated", name, len(in), elapsed, alloc>>20)
	}
}

// TestParserPanic: input that makes the library panic while decoding
// (found by fuzzing the handoff block) is an error.
func TestParserPanic(t *testing.T) {
	var v struct {
		Decisions []struct{ Decision string } `yaml:"decisions"`
	}
	err := Unmarshal([]byte("next_skill: x\ndecisions:\n !0 #0000000000000000000000000\n"), &v)
	if !errors.Is(err, ErrParserPanic) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %q, want one line wrapping ErrParserPanic", err)
	}
}

func TestNodeToValue(t *testing.T) {
	f, err := Parse([]byte("a: &x [1]\nb: *x\n"), parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := NodeToValue(f.Docs[0].Body, &v); err != nil || fmt.Sprint(v["b"]) != "[1]" {
		t.Fatalf("v = %v, err = %v", v, err)
	}
}

func TestFirstAlias(t *testing.T) {
	for in, want := range map[string]int{
		"# only a comment\n":         0,
		"a: [x, {k: v}]\n":           0,
		"a: &x [1]\nb:\n  - c: *x\n": 3,
		"? *k\n: v\n":                1,
		"a: !t &y {<<: *z}\n":        1,
	} {
		f, err := Parse([]byte(in), 0)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, d := range f.Docs {
			if a := FirstAlias(d.Body); a != nil && got == 0 {
				got = a.GetToken().Position.Line
			}
		}
		if got != want {
			t.Errorf("%q: first alias on line %d, want %d", in, got, want)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add("a: &a [1, 2]\nb: [*a, *a]\n")
	f.Add("base: &b {x: 1}\nd:\n  <<: *b\n  y: !!str 2\n")
	f.Add("next_skill: x\ndecisions:\n !0 #0000000000000000000000000\n")
	f.Add("? - a\n  - b\n: &k !t [*k]\n")
	f.Add(bomb(5))
	f.Fuzz(func(t *testing.T, in string) {
		start := time.Now()
		var v any
		err := Unmarshal([]byte(in), &v)
		var s struct {
			A []map[string]int `yaml:"a"`
			B *string          `yaml:"b"`
		}
		err2 := Limits{MaxValues: 100}.Unmarshal([]byte(in), &s, yaml.DisallowUnknownField())
		// Generous: a fuzz input is a few kilobytes at most, and the
		// machine may be busy.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d bytes took %v", len(in), d)
		}
		for _, err := range []error{err, err2} {
			if err == nil {
				continue
			}
			var e *Error
			if !errors.As(err, &e) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one *Error line", err)
			}
		}
	})
}
