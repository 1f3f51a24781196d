package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/mdshapes"
)

// The structure benchmark's targets: every pathological shape of document,
// each well under the 64 MiB limit, planned and sliced by `baton ask
// --dry-run` within these bounds.
const (
	structureRuns      = 3
	structureWallLimit = 5 * time.Second
	structureRSSLimit  = 500 << 20
	structureTimeout   = 5 * time.Minute
)

// RunStructure runs `baton ask --dry-run` as a child process of opts.Baton
// on each document shape of internal/mdshapes (a million headings, one line
// of 100,000 '>', thousands of nested list items and more), structureRuns
// times each, and reports the median wall time and the largest peak
// resident memory against the targets. Without a baton binary it is
// skipped, and says so.
func RunStructure(ctx context.Context, opts Options) (Section, error) {
	s := Section{
		Title: "Structure pass on pathological documents",
		Intro: fmt.Sprintf("`baton ask --dry-run` (the structure pass, the retrieval plan, the slices and the token estimate) as a child process, "+
			"%d runs per document, on documents that are cheap to write and were costly to parse: median wall time, median CPU time (user and system, of both cores) and the largest peak resident set (getrusage of the child). "+
			"The target is on wall time; CPU time says what a busy machine's wall time hides.", structureRuns),
	}
	if base := filepath.Base(opts.Baton); !strings.HasPrefix(base, "baton") || strings.HasSuffix(base, ".test") {
		// A test binary would run its tests, not ask.
		s.Notes = append(s.Notes, "**SKIPPED**: no baton binary to run `baton ask --dry-run` from (run it as `baton bench`).")
		opts.logf("  structure SKIPPED: no baton binary")
		return s, nil
	}
	dir, err := os.MkdirTemp("", "baton-structure-")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(dir)
	t := Table{Header: []string{"document", "size", "wall (median)", "CPU (median)", "peak RSS", "target met"}}
	worstWall, worstRSS := time.Duration(0), int64(0)
	var slow []string
	for _, shape := range mdshapes.All() {
		doc := shape.Build()
		path := filepath.Join(dir, shape.Name+".md")
		if err := os.WriteFile(path, doc, 0o600); err != nil {
			return s, err
		}
		opts.logf("  structure: %s (%.1f MB)", shape.Name, float64(len(doc))/1e6)
		wall, cpu, rss, err := dryRunStats(ctx, opts.Baton, dir, path)
		if err != nil {
			return s, fmt.Errorf("%s: %w", shape.Name, err)
		}
		met := wall < structureWallLimit && rss < structureRSSLimit
		if !met {
			slow = append(slow, shape.Name)
		}
		worstWall, worstRSS = max(worstWall, wall), max(worstRSS, rss)
		t.Rows = append(t.Rows, []string{shape.Name, fmt.Sprintf("%.1f MB", float64(len(doc))/1e6),
			fmt.Sprintf("%.2f s", wall.Seconds()), fmt.Sprintf("%.2f s", cpu.Seconds()), fmt.Sprintf("%d MB", rss>>20), metWord(met)})
	}
	s.Tables = append(s.Tables, t)
	tg := Target{
		Name: "structure pass bounded",
		Want: fmt.Sprintf("every document under %v and %d MB", structureWallLimit, structureRSSLimit>>20),
		Got:  fmt.Sprintf("slowest %.2f s, largest %d MB", worstWall.Seconds(), worstRSS>>20),
		Met:  len(slow) == 0,
		Fail: "a document whose median wall time or peak resident set is over the bound",
	}
	if !tg.Met {
		tg.Why = "over the bound: " + strings.Join(slow, ", ")
	}
	s.Targets = append(s.Targets, tg)
	return s, nil
}

// dryRunStats runs the dry run structureRuns times and returns the median
// wall time, the median CPU time and the largest peak resident set.
func dryRunStats(ctx context.Context, baton, dir, path string) (time.Duration, time.Duration, int64, error) {
	var walls, cpus []time.Duration
	var peak int64
	for range structureRuns {
		cctx, cancel := context.WithTimeout(ctx, structureTimeout)
		cmd := exec.CommandContext(cctx, baton, "ask", "--doc", path, "--dry-run", "What does item 42 say?")
		// The run record goes under dir/.baton, not the caller's folder.
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		cancel()
		if err != nil {
			return 0, 0, 0, fmt.Errorf("baton ask --dry-run: %w: %s", err, firstLine(strings.TrimSpace(stderr.String())))
		}
		walls = append(walls, wall)
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		if rss, ok := peakRSS(cmd.ProcessState); ok {
			peak = max(peak, rss)
		}
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return walls[len(walls)/2], cpus[len(cpus)/2], peak, nil
}

func metWord(met bool) string {
	if met {
		return "yes"
	}
	return "**no**"
}
