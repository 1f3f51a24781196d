package skill

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BombSkill is a SKILL.md of about 500 bytes whose frontmatter is a
// "billion laughs": nine lists of nine aliases of the list before, 9^9
// values once expanded. Before yamlsafe, parsing it took more than 1.7 GB
// and five minutes and ended in an out-of-memory crash.
func BombSkill(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: Frontmatter whose aliases expand to 9^9 values.\nmetadata:\n", name)
	b.WriteString(" l0: &l0 [x,x,x,x,x,x,x,x,x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, " l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	b.WriteString("---\nNever reached.\n")
	return b.String()
}

func TestFrontmatterAliasBomb(t *testing.T) {
	src := BombSkill("bomb")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	type result struct {
		s   *Skill
		ps  []Problem
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, ps, err := Parse([]byte(src), "bomb/SKILL.md")
		done <- result{s, ps, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still parsing a SKILL.md alias bomb after 10 s")
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d-byte SKILL.md refused in %v with %d KB allocated: %v", len(src), elapsed, alloc>>10, r.err)
	if r.s != nil || !errors.Is(r.err, ErrInvalidSkill) {
		t.Fatalf("skill %v, err %v; want ErrInvalidSkill", r.s, r.err)
	}
	if msg := r.err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "aliases") {
		t.Errorf("error %q is not one line about aliases", msg)
	}
	if alloc > 100<<20 {
		t.Errorf("allocated %d MB", alloc>>20)
	}
}

// FuzzFrontmatterAliases: whatever the frontmatter's anchors, aliases,
// merge keys and tags, Parse returns (no panic, no hang) and every
// problem is one line.
func FuzzFrontmatterAliases(f *testing.F) {
	seeds := []string{
		"name: a\ndescription: &d text\nlicense: *d\n",
		"name: a\ndescription: d\nbase: &b {version: 1.0}\nmetadata:\n  <<: *b\n  k: v\n",
		"name: a\ndescription: d\nmetadata: !!map {a: !!str 1}\nallowed-tools: &t [Read, Bash(git:*)]\nx: *t\n",
		"name: !custom a\ndescription: !!binary ZGVzYw==\n",
		"name: a\ndescription: d\nl0: &l0 [x,x,x]\nl1: &l1 [*l0,*l0,*l0]\nl2: [*l1,*l1,*l1]\n",
		"? &k name\n: *k\ndescription: *undefined\n",
		"name: x\ndecisions:\n !0 #0000000000000000000000000\n",
		"<<: [*a, *b]\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add(strings.TrimPrefix(strings.SplitN(BombSkill("b"), "\n---\n", 2)[0], "---\n"))
	f.Fuzz(func(t *testing.T, front string) {
		_, ps, err := Parse([]byte("---\n"+front+"\n---\nbody\n"), "fuzz/SKILL.md")
		if err != nil && !errors.Is(err, ErrInvalidSkill) {
			t.Fatalf("err %v does not wrap ErrInvalidSkill", err)
		}
		for _, p := range ps {
			if strings.Contains(p.Message, "\n") || strings.Contains(p.Field, "\n") {
				t.Errorf("problem %q is not one line", p.Field+": "+p.Message)
			}
		}
	})
}
