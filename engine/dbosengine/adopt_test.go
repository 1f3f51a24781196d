package dbosengine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/pgtest"
)

// Short beats for the tests: a dead executor is adopted about a second
// after its last beat.
const (
	testBeat = 200 * time.Millisecond
	testDead = time.Second
)

// countingTasks is a two-step task on the item's input: every step
// execution appends "step input" to the file counts, and while block is
// true the second step says "in second INPUT" on stdout and hangs.
func countingTasks(counts string, block bool) engine.Tasks {
	var mu sync.Mutex
	note := func(step string, in []byte) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(counts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%s %s\n", step, in)
			f.Sync()
			f.Close()
		}
	}
	return engine.Tasks{"two": func(ctx context.Context, in []byte) ([]byte, error) {
		a, err := engine.Step(ctx, "first", func(context.Context) ([]byte, error) {
			note("first", in)
			return append([]byte("a:"), in...), nil
		})
		if err != nil {
			return nil, err
		}
		return engine.Step(ctx, "second", func(context.Context) ([]byte, error) {
			note("second", in)
			if block {
				fmt.Printf("in second %s\n", in)
				select {}
			}
			return append([]byte("b:"), a...), nil
		})
	}}
}

func adoptItems(n int) []engine.Item {
	var items []engine.Item
	for i := range n {
		s := "i" + strconv.Itoa(i)
		items = append(items, engine.Item{ID: "item-" + s, Task: "two", Input: []byte(s)})
	}
	return items
}

// fanoutChild is a worker that fans out BATON_TEST_N items under executor
// BATON_TEST_EXEC, running them all at once, each to hang in its second step.
func fanoutChild() int {
	n, _ := strconv.Atoi(os.Getenv("BATON_TEST_N"))
	e, err := Open(context.Background(), Config{DatabaseURL: os.Getenv("BATON_TEST_URL"), AppVersion: "test-1",
		ExecutorID: os.Getenv("BATON_TEST_EXEC"), WorkerConcurrency: n, Heartbeat: testBeat, DeadAfter: testDead},
		countingTasks(os.Getenv("BATON_TEST_COUNTS"), true))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	for _, r := range e.FanOut(context.Background(), adoptItems(n)) {
		if r.Err != nil {
			fmt.Fprintln(os.Stderr, r.Err)
		}
	}
	return 1
}

// TestKilledWorkerIsAdoptedOnceByTwoLiveEngines: a worker holding every
// item of a fan-out inside its second step is killed with SIGKILL and never
// comes back. Two live engines, opened after the kill, adopt its work: every
// item completes, each item's first step (recorded by the dead worker) is
// not run again, its second runs once more in all (not once per adopter),
// and exactly one of the two adopted the dead executor.
func TestKilledWorkerIsAdoptedOnceByTwoLiveEngines(t *testing.T) {
	const n = 6
	url := pgtest.Database(t)
	counts := filepath.Join(t.TempDir(), "counts")
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "BATON_TEST_CHILD=fanout", "BATON_TEST_URL="+url, "BATON_TEST_EXEC=doomed",
		"BATON_TEST_COUNTS="+counts, "BATON_TEST_N="+strconv.Itoa(n))
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	holding := make(chan bool, 1)
	go func() {
		seen := 0
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "in second ") {
				if seen++; seen == n {
					holding <- true
				}
			}
		}
		holding <- false
	}()
	select {
	case ok := <-holding:
		if !ok {
			c.Wait()
			t.Fatalf("the worker ended before holding every item: %s", stderr.String())
		}
	case <-time.After(90 * time.Second):
		c.Process.Kill()
		t.Fatal("the worker never held every item")
	}
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c.Wait()

	var mu sync.Mutex
	adopted := map[string][]string{}
	live := func(id string) *Engine {
		e, err := Open(context.Background(), Config{DatabaseURL: url, AppVersion: "test-1", ExecutorID: id,
			WorkerConcurrency: n, Heartbeat: testBeat, DeadAfter: testDead,
			OnAdopt: func(dead string, items []string) {
				mu.Lock()
				defer mu.Unlock()
				adopted[id+" took "+dead] = items
			}}, countingTasks(counts, false))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	a, _ := live("live-a"), live("live-b")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	items := adoptItems(n)
	for i, r := range a.FanOut(ctx, items) {
		if r.Err != nil {
			t.Fatalf("item %s: %v", items[i].ID, r.Err)
		}
		if want := "b:a:" + string(items[i].Input); string(r.Output) != want {
			t.Fatalf("item %s gave %q, want %q", items[i].ID, r.Output, want)
		}
	}
	b, _ := os.ReadFile(counts)
	runs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		runs[line]++
	}
	for _, it := range items {
		if f, s := runs["first "+string(it.Input)], runs["second "+string(it.Input)]; f != 1 || s != 2 {
			t.Errorf("item %s: first ran %d times, second %d; want 1 (recorded before the kill) and 2 (the killed run and one adopted run)", it.ID, f, s)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(adopted) != 1 {
		t.Fatalf("adoptions %v, want exactly one of the dead executor", adopted)
	}
	for who, ids := range adopted {
		sort.Strings(ids)
		if !strings.HasSuffix(who, " took doomed") || len(ids) != n {
			t.Fatalf("%s: items %v, want the %d items of doomed", who, ids, n)
		}
	}
}
