// Package bounded holds what the tests of baton's input bounds share: a
// YAML "billion laughs" and a measurement of a call that must end quickly
// and allocate little. Bounds are asserted on allocated bytes, which do not
// depend on how busy the machine is; the time is only logged, and a generous
// guard turns a hang into a failure instead of a stuck suite.
package bounded

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// AliasBomb is levels+1 YAML mapping lines, each indented by indent: the
// first anchors a list of width plain values, every later one a list of
// width aliases of the line before, so the whole expands to width^(levels+1)
// values in a few hundred bytes.
func AliasBomb(indent, key string, levels, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s0: &%s0 [%s]\n", indent, key, key, strings.TrimSuffix(strings.Repeat("x,", width), ","))
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "%s%s%d: &%s%d [%s]\n", indent, key, i, key, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*%s%d,", key, i-1), width), ","))
	}
	return b.String()
}

// SkillMD is a SKILL.md of about 550 bytes whose metadata is an AliasBomb
// of 9^10 values: before baton bounded its YAML, parsing it took more than
// 1.7 GB and five minutes and ended out of memory.
func SkillMD(name string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: Frontmatter whose aliases expand to 9^10 values.\nmetadata:\n%s---\nNever reached.\n",
		name, AliasBomb(" ", "l", 9, 9))
}

// Measure runs fn and returns how long it took and the bytes allocated
// meanwhile (TotalAlloc, so no peak can be above it). It fails the test if
// fn is still running after guard.
func Measure(t testing.TB, guard time.Duration, fn func()) (time.Duration, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatalf("still running after %v", guard)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	return elapsed, after.TotalAlloc - before.TotalAlloc
}
