package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/pgtest"
)

// TestDistributedFanout runs the quick distributed benchmark through real
// baton worker processes built from this checkout: every item answered,
// the three worker counts measured, and four workers faster than one.
func TestDistributedFanout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton and starts PostgreSQL and seven worker processes")
	}
	pgtest.Require(t)
	bin := filepath.Join(t.TempDir(), "baton")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/baton").CombinedOutput(); err != nil {
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
	walls := map[string]time.Duration{}
	for _, row := range s.Tables[0].Rows {
		if row[len(row)-1] != "0" {
			t.Errorf("%s workers: %s failed items", row[0], row[len(row)-1])
		}
		walls[row[0]] = parseMS(t, row[3])
	}
	// One worker runs 8 rounds of L, four run 2: four must be faster by
	// well over the engine's costs.
	if walls["4"] >= walls["1"]*3/4 {
		t.Errorf("4 workers took %v, 1 worker %v: the workers do not share the work", walls["4"], walls["1"])
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

func parseMS(t *testing.T, s string) time.Duration {
	t.Helper()
	if v, ok := strings.CutSuffix(s, " ms"); ok {
		n, err := strconv.Atoi(v)
		if err == nil {
			return time.Duration(n) * time.Millisecond
		}
	}
	if v, ok := strings.CutSuffix(s, " s"); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil {
			return time.Duration(f * float64(time.Second))
		}
	}
	t.Fatalf("not a time: %q", s)
	return 0
}
