package bench

import (
	"context"
	"testing"

	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// Micro-benchmarks for `go test -bench . ./bench/`. `baton bench` reports
// the same quantities in BENCHMARKS.md; these exist for profiling
// (-cpuprofile) and for comparing changes with benchstat.

func corpusOrSkip(b *testing.B) []*Task {
	b.Helper()
	tasks, err := LoadCorpus()
	if err != nil {
		b.Fatal(err)
	}
	return tasks
}

func BenchmarkParse1MB(b *testing.B) {
	text := []byte(bigMarkdown(corpusOrSkip(b), 1<<20))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		slice.Parse(text)
	}
}

func BenchmarkExtract1MB(b *testing.B) {
	d := slice.Parse([]byte(bigMarkdown(corpusOrSkip(b), 1<<20)))
	ptrs := slice.Pointers{Sections: []string{"Retries", "usage > errors", "**Flag Groups**", "Resumability and Redelivery:", "Capabilty inference", "Pricing and Billing"}}
	d.Extract(ptrs)
	for b.Loop() {
		d.Extract(ptrs)
	}
}

func BenchmarkCount(b *testing.B) {
	tasks := corpusOrSkip(b)
	text := tasks[0].Text
	c := tokens.ForModel(ModelName)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count(text)
	}
}

// BenchmarkAsk100 is one ask of 100 subtasks against the fake with no
// latency: baton's own cost per run, plus the fake's.
func BenchmarkAsk100(b *testing.B) {
	for b.Loop() {
		if _, err := runFanout(context.Background(), "", 100, 32, 0, false); err != nil {
			b.Fatal(err)
		}
	}
}
