package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func addSeeds(f *testing.F, add func(doc string)) {
	files, _ := filepath.Glob("testdata/roundtrip/*.yaml")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(string(b))
	}
	for _, s := range []string{"", "a: 1", "---\n...\n", "- a\n", "a:\n\tb: 1\n", "a: \"x\n", "a: 1\na: 2\n",
		"h: &x {k: v}\nu: *x\n", "k: |\n  text\n", "handoff: [1]\n", "{a: 1}", "a: 1\r\nb: 2\r\n", "? a\n: b\n"} {
		add(s)
	}
}

// FuzzParse: any bytes either parse, keeping them exactly, or give one
// line of error; never a panic.
func FuzzParse(f *testing.F) {
	addSeeds(f, func(doc string) { f.Add([]byte(doc)) })
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if string(sf.Bytes()) != string(data) {
			t.Fatal("Parse changed the bytes")
		}
		sf.Handoff()
		sf.Cycle("epic")
		sf.SkillTiming("plan")
	})
}

// FuzzSet: if Set succeeds, the result parses and reads back what was set
// with everything else unchanged; if it fails, the File is unchanged.
func FuzzSet(f *testing.F) {
	addSeeds(f, func(doc string) { f.Add(doc, "next_skill", "plan", false) })
	f.Add("a: 1\n", "on", "multi\nline", true)
	f.Add("handoff:\n  k: 1\n", "k", "- x", false)
	f.Fuzz(func(t *testing.T, doc, key, value string, top bool) {
		sf, err := Parse([]byte(doc), "fuzz.yaml")
		if err != nil {
			return
		}
		path := []string{"handoff", key}
		if top {
			path = []string{key}
		}
		before := cloneValue(sf.doc.tree)
		orig := string(sf.Bytes())
		if err := sf.Set(value, path...); err != nil {
			if !errors.Is(err, ErrUnsafeEdit) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if string(sf.Bytes()) != orig {
				t.Fatal("a failed Set changed the bytes")
			}
			return
		}
		again, err := Parse(sf.Bytes(), "fuzz.yaml")
		if err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, sf.Bytes())
		}
		got, ok := again.Get(path...)
		if !ok || got != value {
			t.Fatalf("Get = %#v, %v; want %q\n%s", got, ok, value, sf.Bytes())
		}
		want := before.(map[string]any)
		setIn(want, path, value)
		if !cmp.Equal(want, again.doc.tree, cmpopts.EquateNaNs(), cmpEmpty) {
			t.Fatalf("other content changed:\n%s", sf.Bytes())
		}
	})
}
