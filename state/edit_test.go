package state

import (
	"errors"
	"math"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

func TestSet(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		value any
		path  []string
		want  string
	}{
		{"inline comment kept", "a: 1  # why\nb: 2\n", "x", []string{"a"}, "a: x  # why\nb: 2\n"},
		{"hash inside quotes is not a comment", "a: 'x # y' # c\n", "z", []string{"a"}, "a: z # c\n"},
		{"hash without space is not a comment", "a: x#y\n", "z", []string{"a"}, "a: z\n"},
		{"tab before comment", "a: 1\t# c\n", 2, []string{"a"}, "a: 2\t# c\n"},
		{"comment after block scalar header", "a: | # c\n  text\nb: 1\n", "z", []string{"a"}, "a: z # c\nb: 1\n"},
		{"multi-line flow value", "a: [1,\n  2]\nb: 1\n", "z", []string{"a"}, "a: z\nb: 1\n"},
		{"comment with trailing spaces", "a: 1 # c  \nb: 2\n", 2, []string{"a"}, "a: 2 # c  \nb: 2\n"},
		{"null value gets one", "a:\nb: 2\n", "x", []string{"a"}, "a: x\nb: 2\n"},
		{"null value with comment", "a: # later\nb: 2\n", "x", []string{"a"}, "a: x # later\nb: 2\n"},
		{"quoted only when needed", "a: 1\n", "1.10", []string{"a"}, "a: \"1.10\"\n"},
		{"a word that reads as a bool", "a: 1\n", "yes", []string{"a"}, "a: \"yes\"\n"},
		{"new key at the end", "a: 1\n# foot\n", "x", []string{"b"}, "a: 1\nb: x\n# foot\n"},
		{"new key needing quotes", "a: 1\n", 1, []string{"on"}, "a: 1\n\"on\": 1\n"},
		{"new nested keys", "a: 1\n", "x", []string{"h", "k"}, "a: 1\nh:\n  k: x\n"},
		{"into nested mapping", "h:\n  k: 1\n  u: 2\nz: 3\n", "x", []string{"h", "new"}, "h:\n  k: 1\n  u: 2\n  new: x\nz: 3\n"},
		{"scalar to list", "h:\n  k: 1 # c\nz: 3\n", []string{"a", "b"}, []string{"h", "k"}, "h:\n  k: # c\n    - a\n    - b\nz: 3\n"},
		{"list to scalar", "h:\n  k:\n    - a\n    - b\n  # after\nz: 3\n", "x", []string{"h", "k"}, "h:\n  k: x\n  # after\nz: 3\n"},
		{"indentless list replaced", "k:\n- a\n- b\nz: 3\n", []string{"c"}, []string{"k"}, "k:\n  - c\nz: 3\n"},
		{"empty list in flow style", "k: [a]\n", []string{}, []string{"k"}, "k: []\n"},
		{"multi-line string", "k: x\nz: 1\n", "one\ntwo", []string{"k"}, "k: |-\n  one\n  two\nz: 1\n"},
		{"block scalar replaced", "k: |\n  old\n  # text\nz: 1\n", "new", []string{"k"}, "k: new\nz: 1\n"},
		{"four-space file", "h:\n    k: 1\n", "x", []string{"h", "new", "m"}, "h:\n    k: 1\n    new:\n        m: x\n"},
		{"no final line feed", "a: 1", "x", []string{"b"}, "a: 1\nb: x"},
		{"no final line feed, replace", "a: 1", "x", []string{"a"}, "a: x"},
		{"crlf", "a: 1\r\nb: 2\r\n", []string{"x"}, []string{"c"}, "a: 1\r\nb: 2\r\nc:\r\n  - x\r\n"},
		{"empty file", "", "x", []string{"h", "k"}, "h:\n  k: x\n"},
		{"comments only", "# c", "x", []string{"k"}, "# c\nk: x\n"},
		{"document markers", "---\na: 1\n...\n", "x", []string{"b"}, "---\na: 1\nb: x\n...\n"},
		{"empty document with end marker", "---\n...\n", "x", []string{"b"}, "---\nb: x\n...\n"},
		{"flow parent becomes block, order kept", "h: {z: 1, a: 'q'}\n", "x", []string{"h", "k"}, "h:\n  z: 1\n  a: q\n  k: x\n"},
		{"scalar parent becomes mapping", "h: none # c\n", "x", []string{"h", "k"}, "h: # c\n  k: x\n"},
		{"unicode value", "k: é\n", "Zoë 🚀", []string{"k"}, "k: Zoë 🚀\n"},
		{"unicode key before", "ключ: 'значение' # c\nk: 1\n", 2, []string{"k"}, "ключ: 'значение' # c\nk: 2\n"},
		{"quoted key found", "\"k\": 1\n", 2, []string{"k"}, "\"k\": 2\n"},
		{"ordered new mapping", "a: 1\n", yaml.MapSlice{{Key: "z", Value: 1}, {Key: "a", Value: 2}}, []string{"m"}, "a: 1\nm:\n  z: 1\n  a: 2\n"},
		{"empty flow mapping at top level", "# c\n{}\n", "x", []string{"k"}, "# c\nk: x\n"},
		{"anchored parent kept", "h: &h\n  k: 1\n", 2, []string{"h", "k"}, "h: &h\n  k: 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Set(tt.value, tt.path...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(f.Bytes())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetRefused covers edits that cannot be made without changing content
// baton does not own: each is refused and the File is left as it was.
func TestSetRefused(t *testing.T) {
	tests := []struct {
		name string
		in   string
		path []string
	}{
		{"anchor used elsewhere", "h: &x\n  k: 1\nu: *x\n", []string{"h", "k"}},
		{"value's anchor used elsewhere", "k: &x 1\nu: *x\n", []string{"k"}},
		{"top-level flow mapping", "{a: 1}\n", []string{"b"}},
		{"top-level empty flow mapping with a comment", "{} # c\n", []string{"b"}},
		{"empty path", "a: 1\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = f.Set("new", tt.path...)
			if !errors.Is(err, ErrUnsafeEdit) {
				t.Fatalf("err = %v, want ErrUnsafeEdit", err)
			}
			if string(f.Bytes()) != tt.in {
				t.Errorf("bytes changed to %q", f.Bytes())
			}
		})
	}
}

func TestAppend(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"absent", "a: 1\n", "a: 1\nl:\n  - x\n"},
		{"null", "l: ~\n", "l:\n  - x\n"},
		{"block, comments kept", "l:\n  # one\n  - a # first\n  # two\n  - b\n# after\n", "l:\n  # one\n  - a # first\n  # two\n  - b\n  - x\n# after\n"},
		{"indentless", "l:\n- a\nz: 1\n", "l:\n- a\n- x\nz: 1\n"},
		{"flow", "l: [a, b]\n", "l:\n  - a\n  - b\n  - x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in), "s.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Append("x", "l"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(f.Bytes())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	f, _ := Parse([]byte("l: 3\n"), "s.yaml")
	if err := f.Append("x", "l"); !errors.Is(err, ErrUnsafeEdit) {
		t.Errorf("append to a scalar: err = %v, want ErrUnsafeEdit", err)
	}
}

func TestGet(t *testing.T) {
	f, err := Parse([]byte("a:\n  b: [1, two]\n  c: {d: 1.5}\nv: \"1.10\"\n"), "g.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path []string
		want any
		ok   bool
	}{
		{[]string{"v"}, "1.10", true},
		{[]string{"a", "b"}, []any{uint64(1), "two"}, true},
		{[]string{"a", "c", "d"}, 1.5, true},
		{[]string{"a", "x"}, nil, false},
		{[]string{"v", "x"}, nil, false},
	}
	for _, tt := range tests {
		got, ok := f.Get(tt.path...)
		if ok != tt.ok || !cmp.Equal(got, tt.want) {
			t.Errorf("Get(%v) = %#v, %v; want %#v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
	// Get returns a copy: changing it must not change the file.
	got, _ := f.Get("a", "b")
	got.([]any)[0] = "changed"
	if again, _ := f.Get("a", "b"); again.([]any)[0] != uint64(1) {
		t.Error("Get exposed the File's own value")
	}
}

func TestSameValue(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		a, b any
		want bool
	}{
		{nan, nan, true},
		{1.0, nan, false},
		{nil, []any{}, true},
		{map[string]any{}, nil, true},
		{[]any{}, []any{nil}, false},
		{map[string]any{"a": nil}, map[string]any{}, false},
		{map[string]any{"a": []any{"x", nan}}, map[string]any{"a": []any{"x", nan}}, true},
		{uint64(1), int64(1), false},
		{"1", uint64(1), false},
	}
	for _, tt := range tests {
		if got := sameValue(tt.a, tt.b); got != tt.want {
			t.Errorf("sameValue(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	// A user's NaN elsewhere must not block an edit.
	f, err := Parse([]byte("x: .nan\n"), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("v", "handoff", "next_skill"); err != nil {
		t.Fatal(err)
	}
}
