package dbosengine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/engine"
	"github.com/baton-dev/baton/internal/pgtest"
)

// child is a process that runs one item of a two-step task and prints its
// output: every step execution appends its name to BATON_TEST_COUNTS, and
// with BATON_TEST_BLOCK=1 the second step says so on stdout and hangs, to
// be killed.
func child() int {
	counts := os.Getenv("BATON_TEST_COUNTS")
	note := func(name string) {
		f, err := os.OpenFile(counts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, name)
			f.Sync()
			f.Close()
		}
	}
	task := func(ctx context.Context, in []byte) ([]byte, error) {
		a, err := engine.Step(ctx, "first", func(context.Context) ([]byte, error) {
			note("first")
			return append([]byte("a:"), in...), nil
		})
		if err != nil {
			return nil, err
		}
		return engine.Step(ctx, "second", func(context.Context) ([]byte, error) {
			note("second")
			if os.Getenv("BATON_TEST_BLOCK") == "1" {
				fmt.Println("in second")
				select {}
			}
			return append([]byte("b:"), a...), nil
		})
	}
	e, err := Open(context.Background(), Config{DatabaseURL: os.Getenv("BATON_TEST_URL"), AppVersion: "test-1",
		ExecutorID: os.Getenv("BATON_TEST_EXEC")}, engine.Tasks{"two": task})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := e.Run(ctx, engine.Item{ID: "killed", Task: "two", Input: []byte("x")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("output %s\n", out)
	return 0
}

func childCmd(url, executor, counts string, block bool) *exec.Cmd {
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "BATON_TEST_CHILD=1", "BATON_TEST_URL="+url, "BATON_TEST_EXEC="+executor, "BATON_TEST_COUNTS="+counts)
	if block {
		c.Env = append(c.Env, "BATON_TEST_BLOCK=1")
	}
	return c
}

// TestKilledProcessRestartsWithItsIDAndSkipsRecordedSteps: a process is
// killed with SIGKILL inside the second step of an item; a new process with
// the same executor ID finishes the item, and the first step, recorded by
// the killed one, is not run again.
func TestKilledProcessRestartsWithItsIDAndSkipsRecordedSteps(t *testing.T) {
	url := pgtest.Database(t)
	counts := filepath.Join(t.TempDir(), "counts")
	first := childCmd(url, "worker-1", counts, true)
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	in := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "in second" {
				in <- true
				return
			}
		}
		in <- false
	}()
	select {
	case ok := <-in:
		if !ok {
			first.Wait()
			t.Fatalf("the first process ended before its second step: %s", stderr.String())
		}
	case <-time.After(90 * time.Second):
		first.Process.Kill()
		t.Fatal("the first process never reached its second step")
	}
	first.Process.Kill()
	first.Wait()

	second := childCmd(url, "worker-1", counts, false)
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("the second process: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "output b:a:x") {
		t.Fatalf("the second process printed %q", out)
	}
	b, _ := os.ReadFile(counts)
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "first second second" {
		t.Fatalf("steps ran %v, want first once (recorded before the kill) and second twice", got)
	}
}
