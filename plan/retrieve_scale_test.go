package plan_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/baton-dev/baton/plan"
	"github.com/baton-dev/baton/slice"
)

const readmeTask = "What was the duration and impact of the outage? What caused the retry storm? Which action items address the root cause?"

// corpus is n copies of the example incident report, each under a heading
// of its own with its headings one level down, as baton combines several
// documents: about 27 KB a copy.
func corpus(t testing.TB, n int) []plan.SectionText {
	t.Helper()
	b, err := os.ReadFile("../examples/incident-report.md")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "# Report %d\n\n", i+1)
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if strings.HasPrefix(l, "#") && strings.Contains(l, "# ") {
				sb.WriteString("#")
			}
			sb.WriteString(l)
		}
		sb.WriteString("\n")
	}
	return sectionsFromSlice(slice.Parse([]byte(sb.String())))
}

func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRetrieveScalesLinearly checks the planner's memory grows with the
// corpus, not with its square: four times the text may cost at most five
// times the bytes (a quadratic cost would be sixteen).
func TestRetrieveScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2 MB corpus")
	}
	small, large := corpus(t, 20), corpus(t, 80)
	run := func(secs []plan.SectionText) func() {
		return func() { plan.Retrieve(plan.RetrieveInput{Task: readmeTask, Sections: secs}) }
	}
	a, b := allocatedBy(run(small)), allocatedBy(run(large))
	t.Logf("allocated %d bytes for %d sections, %d bytes for %d sections (ratio %.2f)", a, len(small), b, len(large), float64(b)/float64(a))
	if b > 5*a {
		t.Errorf("4x the corpus allocated %.1fx the bytes (%d vs %d), want at most 5x", float64(b)/float64(a), b, a)
	}
}

// BenchmarkRetrieve plans the README's three-question task over about
// 2.7 MB of incident reports (100 copies, 5,000 sections).
func BenchmarkRetrieve(b *testing.B) {
	secs := corpus(b, 100)
	size := 0
	for _, s := range secs {
		if s.Level == 1 {
			size += len(s.Text)
		}
	}
	in := plan.RetrieveInput{Task: readmeTask, Sections: secs}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		plan.Retrieve(in)
	}
}
