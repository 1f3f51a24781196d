package bench

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMCPSliceHTTP is one checked slice call over Streamable HTTP per
// iteration, from 16 SDK clients at once (b.RunParallel with one session
// per goroutine), against the handler `baton mcp --http` serves.
func BenchmarkMCPSliceHTTP(b *testing.B) {
	l, err := startMCPLoad(corpusOrSkip(b))
	if err != nil {
		b.Fatal(err)
	}
	defer l.stop()
	ctx := context.Background()
	sessions, err := l.connect(ctx, 16)
	if err != nil {
		b.Fatal(err)
	}
	defer closeAll(sessions)
	var next, call atomic.Int64
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		cs := sessions[int(next.Add(1)-1)%len(sessions)]
		for pb.Next() {
			c := l.calls[int(call.Add(1)-1)%len(l.calls)]
			if err := l.slice(ctx, cs, c); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A run of the section makes every call and gets every answer right; its
// latency bound is not asserted here (the race detector and a shared
// machine slow it), only reported.
func TestMCPLoadSection(t *testing.T) {
	if testing.Short() {
		t.Skip("a load run")
	}
	tasks, err := LoadCorpus()
	if err != nil {
		t.Fatal(err)
	}
	s, err := RunMCPLoad(context.Background(), tasks, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Targets) != 2 || !s.Targets[0].Met {
		t.Errorf("targets: %+v", s.Targets)
	}
	if len(s.Tables) != 1 || len(s.Tables[0].Rows) != 2 {
		t.Fatalf("tables: %+v", s.Tables)
	}
	for _, row := range s.Tables[0].Rows {
		if row[1] != "100" || row[2] != "0" || row[3] == "0.0 ms" {
			t.Errorf("row %v: want 100 calls, 0 errors, a measured p50", row)
		}
	}
	t.Logf("%v; p99 target: %s", s.Tables[0].Rows, s.Targets[1].Got)
}

// The targets can fail: one error, or a p99 over the bound, is reported as
// not met, with the reason.
func TestMCPLoadTargetsCanFail(t *testing.T) {
	slow := mcpLoadResult{clients: 16, calls: 100, elapsed: time.Second}
	for i := range 100 {
		d := 10 * time.Millisecond
		if i >= 98 {
			d = 2 * mcpLoadP99
		}
		slow.latencies = append(slow.latencies, d)
	}
	s := mcpLoadSection([]mcpLoadResult{slow}, 48, 12)
	if !s.Targets[0].Met || s.Targets[1].Met {
		t.Errorf("p99 of %s against %s: targets %+v", slow.quantile(0.99), mcpLoadP99, s.Targets)
	}
	slow.latencies = slow.latencies[:90]
	slow.errors, slow.firstErr = 1, "slice x: evidence missing"
	s = mcpLoadSection([]mcpLoadResult{slow}, 48, 12)
	if s.Targets[0].Met || s.Targets[0].Why != slow.firstErr || !s.Targets[1].Met {
		t.Errorf("one error: targets %+v", s.Targets)
	}
}
