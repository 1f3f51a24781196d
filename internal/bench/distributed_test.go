package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/pgtest"
)

// TestDistributedFanout runs the quick distributed benchmark through real
// baton worker processes built from this checkout: every item answered,
// the three worker counts measured, and every worker answered some of the
// calls. How much faster more workers are is the benchmark's claim
// (`baton bench`, section distributed), not this test's: on a busy machine
// a wall-clock ratio says more about the machine than about baton.
func TestDistributedFanout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton and starts PostgreSQL and seven worker processes")
	}
	pgtest.Require(t)
	bin := filepath.Join(t.TempDir(), "baton")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/baton").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var log strings.Builder
	s, err := RunDistributed(context.Background(), Options{Quick: true, Baton: bin, Progress: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(s.Tables) != 1 || len(s.Tables[0].Rows) != len(distWorkers) || len(s.Targets) != 1 {
		t.Fatalf("section: %+v\n%s", s, log.String())
	}
	head := s.Tables[0].Header
	failedCol, callsCol := slices.Index(head, "failed"), slices.Index(head, "calls per worker, fewest–most")
	if failedCol < 0 || callsCol < 0 {
		t.Fatalf("no failed or calls column in %q", head)
	}
	for _, row := range s.Tables[0].Rows {
		if row[failedCol] != "0" {
			t.Errorf("%s workers: %s failed items", row[0], row[failedCol])
		}
		// Each of the W workers took some of the N calls: the queue hands
		// work to all of them, not to the first that polls.
		fewest, _, _ := strings.Cut(row[callsCol], "–")
		if n, err := strconv.Atoi(fewest); err != nil || n == 0 {
			t.Errorf("%s workers: calls per worker %q; every worker must answer some", row[0], row[callsCol])
		}
	}
	var md strings.Builder
	s.Markdown(&md)
	t.Logf("\n%s", md.String())
}

// TestDistributedSkipsLoudly: without a baton binary, or without
// PostgreSQL, the section says it was skipped and why, and is no error.
func TestDistributedSkipsLoudly(t *testing.T) {
	s, err := RunDistributed(context.Background(), Options{Quick: true})
	if err != nil || len(s.Tables) != 0 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "SKIPPED") || !strings.Contains(s.Notes[0], "baton binary") {
		t.Errorf("without a binary: %v, %+v", err, s)
	}
	t.Setenv("BATON_PG_BIN", t.TempDir())
	s, err = RunDistributed(context.Background(), Options{Quick: true, Baton: "baton"})
	if err != nil || len(s.Tables) != 0 || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "SKIPPED") || !strings.Contains(s.Notes[0], "PostgreSQL") {
		t.Errorf("without PostgreSQL: %v, %+v", err, s)
	}
}
