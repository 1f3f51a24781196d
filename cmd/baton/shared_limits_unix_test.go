//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/pgtest"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

// arrival is one sub-agent call as the fake saw it: when, and from which
// worker (each worker has its own key).
type arrival struct {
	at  time.Time
	key string
}

// limitsRig is a database, a built baton, a document of n parts and a fake
// provider whose sub-agent replies come from reply.
type limitsRig struct {
	t        *testing.T
	bin, url string
	docPath  string
	fake     *llmtest.Server
	mu       sync.Mutex
	arrived  []arrival
}

func newLimitsRig(t *testing.T, n int, reply func(k int) llmtest.Reply) *limitsRig {
	if testing.Short() {
		t.Skip("builds baton and starts PostgreSQL and three processes")
	}
	isolateEnv(t)
	r := &limitsRig{t: t}
	srv := pgtest.Start(t)
	r.url = srv.URL("baton_limits")
	r.bin = buildBaton(t)
	doc, plan := fiftyParts(n)
	r.docPath = filepath.Join(t.TempDir(), "plant.md")
	if err := os.WriteFile(r.docPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r.fake = llmtest.NewServer(t, llmtest.Func(func(q llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(q.System, "You are the planner"):
			return llmtest.Text(plan)
		case strings.Contains(q.System, "You are the synthesis step"):
			return llmtest.Text("All parts summarised.")
		}
		r.mu.Lock()
		r.arrived = append(r.arrived, arrival{time.Now(), q.APIKey()})
		k := len(r.arrived)
		r.mu.Unlock()
		return reply(k)
	}))
	if code, _, errOut := runBaton(t, "", "engine", "migrate", "--database-url", r.url); code != exitOK {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	return r
}

// env is a process's environment with key as its provider key.
func (r *limitsRig) env(key string) []string {
	return append(os.Environ(), "OPENAI_API_KEY="+key, "OPENAI_BASE_URL="+r.fake.OpenAIBaseURL(), envTestLimitPeriod+"=2s")
}

// worker starts a baton worker with key and extra flags and waits until it
// takes work.
func (r *limitsRig) worker(id, key string, extra ...string) *workerProc {
	w := &workerProc{out: &lockedBuffer{}}
	w.cmd = exec.Command(r.bin, append([]string{"worker", "--database-url", r.url, "--id", id, "--provider", "openai"}, extra...)...)
	w.cmd.Env = r.env(key)
	w.cmd.Stderr = w.out
	if err := w.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Signal(syscall.SIGTERM)
			w.cmd.Wait()
		}
	})
	waitFor(r.t, 60*time.Second, "worker "+id+" to start", func() bool { return strings.Contains(w.out.String(), "taking up to") })
	return w
}

// ask runs an ask of n subtasks through the workers and checks every
// subtask got its answer.
func (r *limitsRig) ask(n int, workers ...*workerProc) {
	t := r.t
	cmd := exec.Command(r.bin, "ask", "--doc", r.docPath, "--provider", "openai", "--json", "--max-subtasks", "50",
		"--concurrency", "50", "--runs-dir", filepath.Join(t.TempDir(), "runs"), "--engine", "dbos", "--database-url", r.url,
		"Summarise every part")
	cmd.Env = r.env("sk-coordinator")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var logs string
		for _, w := range workers {
			logs += w.out.String()
		}
		t.Fatalf("ask: %v\n%s\n%s", err, errOut.String(), logs)
	}
	rec := decodeRecord(t, out.String())
	ok := 0
	for _, st := range rec.Subtasks {
		if st.Status == orchestrate.StatusOK {
			ok++
		}
	}
	if ok != n {
		t.Fatalf("%d of %d subtasks ok", ok, n)
	}
}

func (r *limitsRig) arrivals() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := append([]arrival(nil), r.arrived...)
	sort.Slice(a, func(i, j int) bool { return a[i].at.Before(a[j].at) })
	return a
}

// The RPM acceptance: worker a sets --rpm 3 (per 2s, the test's
// minute) and --tpm; worker b, started after it without either, keeps
// them. The fake sees, over both workers, at most 3 sub-agent calls in any
// 2s window, and both workers served some.
func TestTwoWorkersShareOneRateLimit(t *testing.T) {
	const n, limit = 9, 3
	const period = 2 * time.Second
	r := newLimitsRig(t, n, func(int) llmtest.Reply {
		rep := llmtest.Text("finding")
		rep.Delay = time.Second
		return rep
	})
	// One call at a time of a second each: neither worker alone could
	// start the limit in a window, so the total depends on both being
	// bounded together.
	a := r.worker("worker-a", "sk-a", "--concurrency", "1", "--rpm", "3", "--tpm", "500000")
	b := r.worker("worker-b", "sk-b", "--concurrency", "1")
	code, status, errOut := runBaton(t, "", "engine", "status", "--database-url", r.url)
	if code != exitOK || !strings.Contains(status, "rate 3 starts per 2s") || !strings.Contains(status, "token budget: 500000 tokens per 2s") {
		t.Fatalf("status after worker b started without limits: exit %d %s\n%s\nwant the rate and budget worker a set kept", code, errOut, status)
	}
	code, js, errOut := runBaton(t, "", "engine", "status", "--json", "--database-url", r.url)
	var v statusJSON
	if err := json.Unmarshal([]byte(js), &v); code != exitOK || err != nil || v.TokenBudget == nil ||
		v.TokenBudget.Tokens != 500000 || v.TokenBudget.PeriodSeconds != 2 || v.RateLimit == nil || v.RateLimit.Limit != 3 {
		t.Fatalf("status --json: exit %d %v %s\n%s\nwant the budget 500000 per 2 s and the rate 3", code, err, errOut, js)
	}
	r.ask(n, a, b)
	got := r.arrivals()
	if len(got) != n {
		t.Fatalf("%d sub-agent calls, want %d", len(got), n)
	}
	by := map[string]int{}
	for _, c := range got {
		by[c.key]++
	}
	// The queue limits starts; a call reaches the fake a few milliseconds
	// after its start, so the window is checked with 150ms to spare (a
	// limit not shared lets twice the calls through, none of them apart).
	for i := 0; i+limit < len(got); i++ {
		if gap := got[i+limit].at.Sub(got[i].at); gap < period-150*time.Millisecond {
			t.Errorf("calls %d to %d arrived within %v: %d in one %v window, limit %d", i, i+limit, gap, limit+1, period, limit)
		}
	}
	if by["sk-a"] == 0 || by["sk-b"] == 0 {
		t.Errorf("calls per worker %v, want both to serve some", by)
	}
	t.Logf("calls per worker %v; first to last %v", by, got[len(got)-1].at.Sub(got[0].at).Round(time.Millisecond))
}

// The 429 acceptance: the fake answers the first sub-agent call
// with a 429 asking for 1.5s. No call from either worker reaches it until
// that has passed (allowing 100ms for the 429 to be recorded, less than a
// call's 200ms), and both workers serve calls after it.
func TestA429PausesEveryWorker(t *testing.T) {
	const n = 12
	const retryAfter = 1500 * time.Millisecond
	r := newLimitsRig(t, n, func(k int) llmtest.Reply {
		if k == 1 {
			return llmtest.RateLimit(retryAfter)
		}
		rep := llmtest.Text("finding")
		rep.Delay = 200 * time.Millisecond
		return rep
	})
	a := r.worker("worker-a", "sk-a", "--concurrency", "1")
	b := r.worker("worker-b", "sk-b", "--concurrency", "1")
	r.ask(n, a, b)
	got := r.arrivals()
	t429 := got[0].at
	after := map[string]int{}
	for _, c := range got[1:] {
		since := c.at.Sub(t429)
		if since > 100*time.Millisecond && since < retryAfter {
			t.Errorf("a call from %s arrived %v after the 429, within its retry-after %v", c.key, since.Round(time.Millisecond), retryAfter)
		}
		if since >= retryAfter {
			after[c.key]++
		}
	}
	if after["sk-a"] == 0 || after["sk-b"] == 0 {
		t.Errorf("calls per worker after the pause %v, want both to serve some", after)
	}
	if len(got) != n+1 {
		t.Errorf("%d sub-agent calls, want %d (the 429's call sent again once)", len(got), n+1)
	}
	t.Logf("%d calls; after the pause %v; first after the 429 at +%v", len(got), after, got[1].at.Sub(t429).Round(time.Millisecond))
}
