package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/bench"
)

func init() { register(newBenchCmd) }

// benchFlags are bench's command line.
type benchFlags struct {
	quick bool
	out   string
	only  []string
	docs  int
	loog  string
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench [--quick] [--out FILE] [--only NAME]... [--loogle DIR]",
		Short: "Measure baton against the single call and the naive baseline on this machine and write BENCHMARKS.md",
		Long: `bench runs baton's benchmarks against the wire-level fake provider on this
machine: token efficiency over a corpus of real documents (against one call
with the whole document, every sub-agent given the whole document, the seed's
assembler rule and the lower bound set by each task's evidence; with the full
and, when built in, the outline planner), pointer robustness, fan-out under
latency and a tokens-per-minute limit, baton's own overhead, cost, and the
fan-out through 1, 2 and 4 baton worker processes on the dbos engine (only
when PostgreSQL's binaries are found; otherwise that section says it was
skipped and why, and the rest runs), and the retrieval planner on long
documents without headings: LooGLE's short-dependency QA set (not shipped with
baton: --loogle DIR or BATON_LOOGLE names the folder holding its
shortdep_qa.jsonl; without it that section says it was skipped). The fake
answers only from what each request holds, so a missed slice shows as a wrong
answer. No API key or network is needed.

It prints a table per benchmark and writes the same report to --out, or without
it to BENCHMARKS.md at the root of the baton repository that holds the working
directory ("-" writes nothing). It never replaces a file that bench did not
write itself.

--quick shrinks the fan-out and overhead runs and skips the minute-long
tokens-per-minute run. --only runs the named benchmarks: ` + strings.Join(bench.Names, ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.quick, "quick", false, "smaller runs, no minute-long rate-limit run")
	fl.StringVar(&f.out, "out", "", `file to write the report to ("-": none; default BENCHMARKS.md at the repository root)`)
	fl.StringSliceVar(&f.only, "only", nil, "run only these benchmarks: "+strings.Join(bench.Names, ", "))
	fl.StringVar(&f.loog, "loogle", "", "folder of LooGLE's test data (shortdep_qa.jsonl) for the long-document benchmark; default $"+bench.LoogleEnv)
	fl.IntVar(&f.docs, "max-docs", 0, "use only the first N corpus documents (for tests)")
	_ = fl.MarkHidden("max-docs")
	return cmd
}

func (f *benchFlags) run(cmd *cobra.Command) error {
	for _, n := range f.only {
		if !contains(bench.Names, n) {
			return usageErrorf("--only %q: want one of %s", n, strings.Join(bench.Names, ", "))
		}
	}
	path, err := f.reportPath()
	if err != nil {
		return err
	}
	if f.loog == "" {
		f.loog = os.Getenv(bench.LoogleEnv)
	}
	// The distributed benchmark starts baton worker processes of this
	// very binary; without one it is skipped.
	self, _ := os.Executable()
	rep, err := bench.Run(cmd.Context(), bench.Options{
		Quick: f.quick, Only: f.only, MaxDocs: f.docs, Command: f.commandLine(), Progress: cmd.ErrOrStderr(),
		Baton: self, Loogle: f.loog,
	})
	if err != nil {
		return withCode(exitError, fmt.Errorf("bench: %w", err))
	}
	var b bytes.Buffer
	rep.Markdown(&b)
	if _, err := cmd.OutOrStdout().Write(b.Bytes()); err != nil {
		return withCode(exitError, err)
	}
	if path == "-" {
		return nil
	}
	if err := bench.CheckReplace(path); err != nil {
		return withCode(exitError, fmt.Errorf("bench: %w", err))
	}
	if err := atomicfile.Write(path, b.Bytes(), 0o644); err != nil {
		return withCode(exitError, fmt.Errorf("bench: %w", err))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", path)
	return nil
}

// reportPath is where the report goes ("-": nowhere), settled before a
// run that can take minutes; a file bench did not write is never replaced.
func (f *benchFlags) reportPath() (string, error) {
	path := f.out
	if f.out == "" {
		p, err := bench.DefaultReportPath(".")
		if err != nil {
			return "", usageErrorf("bench: %v", err)
		}
		path = p
	}
	if path != "-" {
		if err := bench.CheckReplace(path); err != nil {
			return "", usageErrorf("bench: %v", err)
		}
	}
	return path, nil
}

// commandLine is the command the report says it was made by; a LooGLE
// folder is named only as DIR, since it is the user's own path.
func (f *benchFlags) commandLine() string {
	line := []string{"go run ./cmd/baton bench"}
	if f.quick {
		line = append(line, "--quick")
	}
	for _, n := range f.only {
		line = append(line, "--only "+n)
	}
	if f.docs > 0 {
		line = append(line, fmt.Sprintf("--max-docs %d", f.docs))
	}
	if f.out != "" {
		line = append(line, "--out "+f.out)
	}
	if f.loog != "" {
		line = append(line, "--loogle DIR")
	}
	return strings.Join(line, " ")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
