package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/engine/dbosengine"
	"github.com/baton-dev/baton/internal/pgtest"
)

func TestEngineMigrateAndStatus(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.URL("baton_engine") // not made yet: migrate makes it
	code, out, errOut := runBaton(t, "", "engine", "migrate", "--database-url", url)
	if code != exitOK || !strings.Contains(out, "ready") {
		t.Fatalf("migrate: exit %d, %q, %q", code, out, errOut)
	}
	// Again: nothing to do, and no error.
	t.Setenv("BATON_DATABASE_URL", url)
	if code, _, errOut := runBaton(t, "", "engine", "migrate"); code != exitOK {
		t.Fatalf("second migrate: exit %d, %q", code, errOut)
	}
	code, _, errOut = runBaton(t, "", "engine", "status")
	if code != exitError || !strings.Contains(errOut, `queue "baton"`) || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("status before any queue: exit %d, %q; want one line naming the queue", code, errOut)
	}
	e, err := dbosengine.Open(context.Background(), dbosengine.Config{DatabaseURL: url, AppVersion: "test-1", ExecutorID: "w1", WorkerConcurrency: 3},
		engine.Tasks{"echo": func(_ context.Context, in []byte) ([]byte, error) { return in, nil }})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range e.FanOut(context.Background(), []engine.Item{{ID: "a", Task: "echo"}, {ID: "b", Task: "echo"}}) {
		if r.Err != nil {
			t.Fatalf("item %d: %v", i, r.Err)
		}
	}
	e.Close()
	code, out, errOut = runBaton(t, "", "engine", "status", "--window", time.Hour.String())
	// The worker just closed: its beat is fresh, so it is alive, with
	// its two items finished; the line gives its host, pid and beat age.
	host, _ := os.Hostname()
	want := regexp.MustCompile(`^queue baton: 0 waiting, 0 running, 2 finished in the last 1h0m0s \(0\.0 a minute\)
limits: 3 per worker, none in all, rate none
token budget: none
workers alive \(a heartbeat within 30s\): 1
  w1: ` + regexp.QuoteMeta(host) + ` pid ` + strconv.Itoa(os.Getpid()) + `, version test-1, last beat [0-9.]+m?s ago, 0 running, 2 finished
$`)
	if code != exitOK || !want.MatchString(out) {
		t.Fatalf("status: exit %d, stderr %q\n got %q\nwant %s", code, errOut, out, want)
	}
	code, out, errOut = runBaton(t, "", "engine", "status", "--json", "--dead-after", "1h")
	var v statusJSON
	if err := json.Unmarshal([]byte(out), &v); code != exitOK || err != nil {
		t.Fatalf("status --json: exit %d, %v, %q\n%s", code, err, errOut, out)
	}
	if v.Queue != "baton" || v.Finished != 2 || v.WorkerConcurrency != 3 || v.DeadAfterSeconds != 3600 || v.RateLimit != nil ||
		len(v.Workers) != 1 || v.Workers[0].ID != "w1" || v.Workers[0].Finished != 2 || !v.Workers[0].Beating || v.Workers[0].PID != os.Getpid() ||
		len(v.Dead) != 0 || v.Coordinators == nil || v.TokenBudget != nil || v.PausedSeconds != 0 {
		t.Errorf("status --json: %+v", v)
	}
	if !strings.Contains(out, `"dead_holding_items": []`) {
		t.Errorf("status --json names no empty list of dead executors:\n%s", out)
	}
}

func TestEngineCommandsNeedADatabase(t *testing.T) {
	t.Setenv("BATON_DATABASE_URL", "")
	for _, sub := range []string{"migrate", "status"} {
		code, _, errOut := runBaton(t, "", "engine", sub)
		if code != exitUsage || !strings.Contains(errOut, "--database-url") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("engine %s without a database: exit %d, %q", sub, code, errOut)
		}
	}
	code, _, errOut := runBaton(t, "", "engine", "migrate", "--database-url", "postgres://nobody@/x?host=/nonexistent-dir&connect_timeout=2")
	if code != exitError || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unreachable database: exit %d, %q", code, errOut)
	}
}
