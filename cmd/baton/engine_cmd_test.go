package main

import (
	"context"
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
	want := "queue baton: 0 waiting, 0 running, 2 finished in the last 1h0m0s\nlimits: 3 per worker, none in all, rate none\ntoken budget: none\nworkers seen in the last 1h0m0s: 1\n  w1: 0 running, 2 finished\n"
	if code != exitOK || out != want {
		t.Fatalf("status: exit %d, stderr %q\n got %q\nwant %q", code, errOut, out, want)
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
