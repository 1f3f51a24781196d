//go:build unix

package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// Version safety: a worker of another application version refuses the
// waiting work with a line naming both versions and sends nothing; a worker
// of the coordinator's version then takes it and the ask completes. The ask
// has the default --concurrency, and still queues every call at once: the
// worker's --concurrency 8 is what bounds the calls in flight.
func TestWorkerOfAnotherVersionRefusesTheWork(t *testing.T) {
	const n = orchestrate.DefaultMaxSubtasks // 6, more than the default --concurrency
	f := startDistributed(t, n, "baton_versions")
	url, bin, dir, docPath, plan := f.url, f.bin, f.dir, f.docPath, f.plan
	const delay = 500 * time.Millisecond
	var mu sync.Mutex
	var arrived []time.Time
	s := llmtest.NewServer(t, partsScript(plan, delay, func(llmtest.RecordedRequest) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
	}))
	env := []string{"OPENAI_API_KEY=" + workerSecret, "OPENAI_BASE_URL=" + s.OpenAIBaseURL()}
	ask := exec.Command(bin, "ask", "--doc", docPath, "--provider", "openai", "--json", "--engine", "dbos", "--database-url", url,
		"--runs-dir", filepath.Join(dir, "runs"), "Summarise every part")
	ask.Env = append(os.Environ(), append(env, "BATON_APP_VERSION=v1")...)
	var askOut, askErr bytes.Buffer
	ask.Stdout, ask.Stderr = &askOut, &askErr
	if err := ask.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ask.Wait() }()
	t.Cleanup(func() {
		if ask.ProcessState == nil {
			ask.Process.Kill()
			<-done
		}
	})

	other := startWorker(t, bin, url, "worker-v2", append(env, "BATON_APP_VERSION=v2")...)
	refusal := regexp.MustCompile(`baton worker worker-v2: refusing \d+ waiting items of version "v1"; this worker is version "v2"`)
	waitFor(t, 60*time.Second, "the v2 worker to refuse the v1 work", func() bool { return refusal.MatchString(other.out.String()) })
	time.Sleep(time.Second)
	mu.Lock()
	if len(arrived) != 0 {
		t.Errorf("the v2 worker sent %d sub-agent calls of v1 work", len(arrived))
	}
	mu.Unlock()
	if strings.Contains(other.out.String(), " ok in ") {
		t.Errorf("the v2 worker ran v1 items:\n%s", other.out)
	}

	same := startWorkerN(t, bin, url, "worker-v1", 8, append(env, "BATON_APP_VERSION=v1")...)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ask: %v\n%s\nworker v1:\n%s", err, askErr.String(), same.out)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the ask did not finish\n%s\nworker v1:\n%s", askErr.String(), same.out)
	}
	if !strings.Contains(askErr.String(), `baton: warning: no baton worker of version "v1" is alive on this database`) {
		t.Errorf("the ask, started before any worker, did not say none was alive:\n%s", askErr.String())
	}
	rec := decodeRecord(t, askOut.String())
	if len(rec.Subtasks) != n || strings.Count(same.out.String(), " ok in ") != n {
		t.Errorf("%d subtasks; the v1 worker ran:\n%s\nask:\n%s", len(rec.Subtasks), same.out, askErr.String()+askOut.String()[:min(3000, askOut.Len())])
	}
	// In flight at once: the most calls that arrived within one delay of
	// each other (each is answered a delay after it arrived).
	mu.Lock()
	defer mu.Unlock()
	peak := 0
	for i := range arrived {
		k := 0
		for _, at := range arrived[i:] {
			if at.Sub(arrived[i]) < delay {
				k++
			}
		}
		peak = max(peak, k)
	}
	if peak <= orchestrate.DefaultConcurrency {
		t.Errorf("at most %d calls were in flight at once; the worker runs 8 and the ask should have queued all %d", peak, n)
	}
	t.Logf("%d calls in flight at once at the peak", peak)
}

// The asking process killed mid-ask: the calls it queued run on and are
// recorded, and the same ask run again collects every one of them without
// sending it again; only the planner is asked again.
func TestAskKilledAndRunAgainPaysNoSubagentCallTwice(t *testing.T) {
	const n = 20
	const delay = 300 * time.Millisecond
	f := startDistributed(t, n, "baton_coordinator")
	url, bin, dir, docPath, plan := f.url, f.bin, f.dir, f.docPath, f.plan
	var mu sync.Mutex
	sent := map[[32]byte]int{}
	planned := 0
	inner := partsScript(plan, delay, func(r llmtest.RecordedRequest) {
		mu.Lock()
		sent[sha256.Sum256(r.Body)]++
		mu.Unlock()
	})
	s := llmtest.NewServer(t, llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		if strings.Contains(r.System, "You are the planner") {
			mu.Lock()
			planned++
			mu.Unlock()
		}
		return inner.Respond(r)
	}))
	env := []string{"OPENAI_API_KEY=" + workerSecret, "OPENAI_BASE_URL=" + s.OpenAIBaseURL()}
	w := startWorker(t, bin, url, "worker-a", env...)
	askCmd := func() (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		c := exec.Command(bin, "ask", "--doc", docPath, "--provider", "openai", "--json", "--max-subtasks", "50",
			"--engine", "dbos", "--database-url", url, "--runs-dir", filepath.Join(dir, "runs"), "Summarise every part")
		c.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		return c, &out, &errb
	}
	first, _, _ := askCmd()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the worker to answer some items", func() bool { return strings.Count(w.out.String(), " ok in ") >= 5 })
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()

	again, out, errb := askCmd()
	if err := again.Run(); err != nil {
		t.Fatalf("the ask run again: %v\n%s\nworker:\n%s", err, errb, w.out)
	}
	rec := decodeRecord(t, out.String())
	if len(rec.Subtasks) != n {
		t.Fatalf("%d subtasks, want %d", len(rec.Subtasks), n)
	}
	for _, st := range rec.Subtasks {
		if want := fmt.Sprintf("finding: marker-%03d", st.Index+1); st.Status != orchestrate.StatusOK || st.Output != want {
			t.Errorf("subtask %d: %s %q, want ok %q", st.Index+1, st.Status, st.Output, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != n {
		t.Errorf("%d distinct sub-agent requests, want %d", len(sent), n)
	}
	for _, k := range sent {
		if k != 1 {
			t.Errorf("a sub-agent request was sent %d times", k)
		}
	}
	if planned != 2 {
		t.Errorf("the planner was asked %d times, want 2 (once per ask)", planned)
	}
}
