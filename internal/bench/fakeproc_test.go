package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFanoutAgainstAFakeInAChildProcess runs fan-out asks against the fake
// served by a baton binary built from this checkout: every subtask answered
// over the wire, the fake's CPU reported from the child, none of its token
// counting charged to this process, and the per-call CPU target reported
// as measured (met or not, it is a figure, not a skip).
func TestFanoutAgainstAFakeInAChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton")
	}
	bin := filepath.Join(t.TempDir(), "baton")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/baton").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	one, err := runFanout(ctx, bin, 1, 4, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	big, err := runFanout(ctx, bin, 12, 4, 5*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []FanoutRun{one, big} {
		if !r.Remote || r.Failed != 0 || r.FakeCount != 0 {
			t.Errorf("N=%d: remote %v, failed %d, fake counting charged here %v", r.N, r.Remote, r.Failed, r.FakeCount)
		}
		if r.FakeCPU <= 0 {
			t.Errorf("N=%d: no CPU reported for the child fake", r.N)
		}
	}
	// A plain SDK client's same twelve calls, four at a time, against its
	// own child fake: three rounds of the latency at least.
	if p, err := plainFanout(ctx, bin, 12, 4, 5*time.Millisecond); err != nil || p < 15*time.Millisecond {
		t.Errorf("plain client: %v, %v", p, err)
	}
	table, target := overheadCPU(one, big, 12)
	if target.Why != "" && strings.Contains(target.Why, "not measured") {
		t.Errorf("target with a child fake: %+v", target)
	}
	if !strings.Contains(table.Notes[0], "child baton process") {
		t.Errorf("notes do not say where the fake ran: %q", table.Notes[0])
	}
	// The same with an in-process fake says it is not measured alone.
	if _, tg := overheadCPU(FanoutRun{N: 1}, FanoutRun{N: 12}, 12); tg.Met || !strings.Contains(tg.Why, "not measured alone") {
		t.Errorf("in-process target: %+v", tg)
	}
}

// TestBenchFakeCommandRefusesBadArguments: the fake's entry point gives a
// one-line error for a plan of no subtasks or a negative latency.
func TestBenchFakeCommandRefusesBadArguments(t *testing.T) {
	for _, c := range []struct {
		n int
		l time.Duration
	}{{0, 0}, {3, -time.Second}} {
		var out strings.Builder
		if err := ServeFanoutFake(c.n, c.l, strings.NewReader(""), &out); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ServeFanoutFake(%d, %v) = %v", c.n, c.l, err)
		}
	}
}
