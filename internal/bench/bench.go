// Package bench measures baton against the single call, the naive
// baseline, the seed's assembler rule and the lower bound, on this machine,
// with every model call going through the real provider SDK to the
// wire-level fake (llm/llmtest). `baton bench` runs it and writes
// BENCHMARKS.md; nothing in the report is typed by hand.
//
// The benchmarks are the ones issues 4 and 9 ask for: token efficiency over
// a corpus of real documents (full and outline planner), pointer
// robustness, fan-out under latency and a tokens-per-minute limit, baton's
// own overhead, and cost from measured usage; issue 10 adds slice calls
// over `baton mcp --http` under load (mcpload.go). Every target is built so that
// it can fail: the corpus tasks carry evidence sentences quoted from their
// documents, the lower bound is found from the evidence rather than the
// plan, the fake answers only from what it was sent and reports usage with
// another tokenizer than baton's, and each target says how it could have
// been missed.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Options select what a run measures.
type Options struct {
	// Quick shrinks the fan-out and overhead runs and skips the minute-long
	// tokens-per-minute run, for a check in well under a minute.
	Quick bool
	// Only, when not empty, runs just the named benchmarks: "tokens",
	// "pointers", "fanout", "overhead", "cost", "memory", "assembler", "scale", "mcp",
	// "distributed", "loogle", "structure".
	Only []string
	// Baton, when set, is a baton binary that the distributed benchmark
	// starts `baton worker` processes from (`baton bench` sets its own);
	// without it that benchmark is skipped, and says so.
	Baton string
	// Loogle is the folder of LooGLE's test data (shortdep_qa.jsonl) for
	// the long-document benchmark; without it that benchmark is skipped,
	// and says so. The data is never part of baton.
	Loogle string
	// MaxDocs, when positive, uses only the first MaxDocs corpus documents
	// (for tests of the command; a report is made from the whole corpus).
	MaxDocs int
	// Command is the command line printed in the report.
	Command string
	// Progress, when set, receives one line per step.
	Progress io.Writer
}

func (o Options) want(name string) bool {
	if len(o.Only) == 0 {
		return true
	}
	for _, n := range o.Only {
		if n == name {
			return true
		}
	}
	return false
}

func (o Options) logf(format string, a ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", a...)
	}
}

// Names are the benchmarks Options.Only accepts, in run order.
var Names = []string{"tokens", "pointers", "fanout", "overhead", "cost", "memory", "assembler", "scale", "mcp", "distributed", "loogle", "structure"}

// Report is everything one run measured.
type Report struct {
	Machine  string
	Command  string
	Started  time.Time
	Elapsed  time.Duration
	Sections []Section
}

// Run measures what opts selects.
func Run(ctx context.Context, opts Options) (*Report, error) {
	r := &Report{Machine: MachineLine(), Command: opts.Command, Started: time.Now().UTC()}
	tasks, err := LoadCorpus()
	if err != nil {
		return nil, err
	}
	if opts.MaxDocs > 0 && opts.MaxDocs < len(tasks) {
		tasks = tasks[:opts.MaxDocs]
	}
	var effs []Efficiency
	if opts.want("tokens") || opts.want("cost") {
		runs := 3
		if OutlineAvailable() {
			runs = 4
		}
		opts.logf("token efficiency: %d documents, %d runs each", len(tasks), runs)
		effs, err = RunEfficiency(ctx, tasks)
		if err != nil {
			return nil, fmt.Errorf("token efficiency: %w", err)
		}
		if opts.want("tokens") {
			loogle, note, err := loogleEfficiency(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("token efficiency: %w", err)
			}
			s := EfficiencySectionWith(effs, loogle)
			if note != "" {
				s.Notes = append(s.Notes, note)
			}
			r.Sections = append(r.Sections, s)
		}
	}
	if opts.want("pointers") {
		opts.logf("pointer robustness")
		r.Sections = append(r.Sections, PointerSection(RunPointers(tasks)))
	}
	if opts.want("fanout") {
		opts.logf("fan-out")
		s, err := RunFanout(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("fan-out: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	if opts.want("overhead") {
		opts.logf("overhead")
		s, err := RunOverhead(ctx, tasks, opts)
		if err != nil {
			return nil, fmt.Errorf("overhead: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	if opts.want("cost") {
		r.Sections = append(r.Sections, CostSection(effs))
	}
	if err := r.runPerf(ctx, tasks, opts); err != nil {
		return nil, err
	}
	if opts.want("scale") {
		s, err := RunScale(ctx, tasks, opts)
		if err != nil {
			return nil, fmt.Errorf("scale: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	if opts.want("mcp") {
		s, err := RunMCPLoad(ctx, tasks, opts)
		if err != nil {
			return nil, fmt.Errorf("mcp load: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	if opts.want("distributed") {
		opts.logf("distributed fan-out")
		s, err := RunDistributed(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("distributed fan-out: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	if opts.want("loogle") {
		opts.logf("long documents without headings (LooGLE)")
		r.Sections = append(r.Sections, LoogleSection(opts.Loogle))
	}
	if opts.want("structure") {
		opts.logf("structure pass on pathological documents")
		s, err := RunStructure(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("structure pass: %w", err)
		}
		r.Sections = append(r.Sections, s)
	}
	r.Elapsed = time.Since(r.Started)
	return r, nil
}

// MachineLine names the CPU, the cores Go may use and the Go version.
func MachineLine() string {
	return fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s %s/%s", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// Markdown writes the report as BENCHMARKS.md.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# Benchmarks\n\n")
	fmt.Fprintf(w, "Generated by `%s`; do not edit by hand. Every figure below comes from that run.\n\n", r.Command)
	fmt.Fprintf(w, "- Machine: %s\n", r.Machine)
	fmt.Fprintf(w, "- Run: %s, %s\n", r.Started.Format(time.RFC3339), r.Elapsed.Round(time.Second))
	fmt.Fprintf(w, "- Model calls: the Anthropic provider on the official SDK, with baton's retry policy and limits, against `llm/llmtest`. "+
		"In the corpus runs (benchmarks 1 and 5) the fake answers only from what each request holds and reports usage counted with %s, not baton's %s; elsewhere it reports baton's own count.\n\n", ProviderEncoding, tokensEncoding())
	var unmet []string
	for _, s := range r.Sections {
		for _, t := range s.Targets {
			if !t.Met {
				unmet = append(unmet, fmt.Sprintf("%s (%s, want %s)", t.Name, t.Got, t.Want))
			}
		}
	}
	if len(unmet) == 0 {
		fmt.Fprintf(w, "Every acceptance target measured in this run was met.\n\n")
	} else {
		fmt.Fprintf(w, "Targets not met in this run: %s. Each section says why.\n\n", strings.Join(unmet, "; "))
	}
	for _, s := range r.Sections {
		s.Markdown(w)
	}
}
