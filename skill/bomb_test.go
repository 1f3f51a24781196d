package skill

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/bounded"
)

func TestFrontmatterAliasBomb(t *testing.T) {
	src := bounded.SkillMD("bomb")
	var sk *Skill
	var err error
	elapsed, alloc := bounded.Measure(t, 10*time.Second, func() { sk, _, err = Parse([]byte(src), "bomb/SKILL.md") })
	t.Logf("%d-byte SKILL.md refused in %v with %d KB allocated: %v", len(src), elapsed, alloc>>10, err)
	if sk != nil || !errors.Is(err, ErrInvalidSkill) {
		t.Fatalf("skill %v, err %v; want ErrInvalidSkill", sk, err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "aliases") {
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
	f.Add(strings.TrimPrefix(strings.SplitN(bounded.SkillMD("b"), "\n---\n", 2)[0], "---\n"))
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
