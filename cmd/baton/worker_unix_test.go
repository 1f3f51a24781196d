//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/pgtest"
	"github.com/baton-dev/baton/internal/recordcmp"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
)

const workerSecret = "sk-worker-secret-5151"

// fiftyParts is a document of n sections, each with its own marker, and a
// plan delegating one subtask to each.
func fiftyParts(n int) (doc, plan string) {
	var d strings.Builder
	d.WriteString("# Plant log\n\nThe log of the plant.\n\n")
	var subs []string
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&d, "## Part %d\n\nPart %d holds marker-%03d and nothing else.\n\n", i, i, i)
		subs = append(subs, fmt.Sprintf(`{"task": "Summarise part %d", "skill": "summarization", "context_pointers": {"sections": ["Part %d"], "line_ranges": []}}`, i, i))
	}
	return d.String(), `{"subtasks": [` + strings.Join(subs, ",\n") + `], "reasoning": "one per part"}`
}

// partsScript plays the planner, a sub-agent that answers from its slice
// after delay, and the synthesis. arrived, when set, is called with each
// sub-agent request on arrival.
func partsScript(plan string, delay time.Duration, arrived func(r llmtest.RecordedRequest)) llmtest.Rule {
	return llmtest.Func(func(r llmtest.RecordedRequest) llmtest.Reply {
		switch {
		case strings.Contains(r.System, "You are the planner"):
			return llmtest.Text(plan)
		case strings.Contains(r.System, "You are the synthesis step"):
			return llmtest.Text("All parts summarised.")
		}
		if arrived != nil {
			arrived(r)
		}
		user := r.Messages[len(r.Messages)-1].Content
		_, after, _ := strings.Cut(user, "marker-")
		rep := llmtest.Text("finding: marker-" + after[:min(3, len(after))])
		rep.Delay = delay
		return rep
	})
}

// comparableRecord is a record as plain values without what differs
// between two runs of one ask (see internal/recordcmp).
func comparableRecord(t *testing.T, data string) any {
	t.Helper()
	v, err := recordcmp.Comparable([]byte(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return v
}

// worker is a baton worker process.
type workerProc struct {
	cmd *exec.Cmd
	out *lockedBuffer
}

func startWorker(t *testing.T, bin, url, id string, env ...string) *workerProc {
	t.Helper()
	return startWorkerN(t, bin, url, id, 4, env...)
}

// startWorkerN starts a worker that runs up to concurrency items at once.
func startWorkerN(t *testing.T, bin, url, id string, concurrency int, env ...string) *workerProc {
	t.Helper()
	w := &workerProc{out: &lockedBuffer{}}
	w.cmd = exec.Command(bin, append([]string{"worker", "--database-url", url, "--id", id, "--concurrency", strconv.Itoa(concurrency), "--provider", "openai"}, testBeatFlags...)...)
	w.cmd.Env = append(os.Environ(), env...)
	w.cmd.Stderr = w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
	})
	return w
}

// workerFixture is what each test of the dbos engine's processes starts
// from: a migrated database on a PostgreSQL of its own, a baton binary, and
// a document of n parts with a plan delegating one subtask to each.
type workerFixture struct {
	url, bin, dir, docPath, plan string
}

func startDistributed(t *testing.T, n int, database string) workerFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("builds baton and starts PostgreSQL and three processes")
	}
	isolateEnv(t)
	f := workerFixture{url: pgtest.Start(t).URL(database), bin: buildBaton(t), dir: t.TempDir()}
	doc, plan := fiftyParts(n)
	f.plan, f.docPath = plan, filepath.Join(f.dir, "plant.md")
	if err := os.WriteFile(f.docPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runBaton(t, "", "engine", "migrate", "--database-url", f.url); code != exitOK {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	return f
}

// waitFor polls cond every 20ms until it holds or limit passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The kill-and-restart acceptance: an ask of 50 delegated subtasks
// through two baton worker processes, one killed with SIGKILL mid-run and
// started again with its id. Every subtask gets its answer; a call whose
// response was recorded is never sent again (only calls in flight at the
// kill are); the record equals a local run's apart from times; the
// provider key is in no table of the database.
func TestAskThroughTwoWorkersOneKilledAndRestarted(t *testing.T) {
	killedWorkerAsk(t, true)
}

// The kill-and-adopt acceptance: the same, but the killed worker
// never comes back. The survivor finds its heartbeat stale, adopts its
// unfinished items (saying so on stderr) and the ask completes with every
// answer, no recorded call sent again.
func TestAskThroughTwoWorkersOneKilledAndAdopted(t *testing.T) {
	killedWorkerAsk(t, false)
}

// Heartbeats for the kill tests: a killed worker is taken for dead a
// second after its last beat.
var testBeatFlags = []string{"--heartbeat", "200ms", "--dead-after", "1s"}

// killedWorkerAsk runs an ask of 50 subtasks through workers a and b, kills
// a once it has answered some items and holds others, and then either
// starts a again with its id (restart) or leaves b to adopt a's work.
func killedWorkerAsk(t *testing.T, restart bool) {
	t.Helper()
	const n = 50
	const delay = 400 * time.Millisecond
	f := startDistributed(t, n, "baton_workers")
	url, bin, dir, docPath, plan := f.url, f.bin, f.dir, f.docPath, f.plan
	askArgs := func(runs string, extra ...string) []string {
		return append([]string{"ask", "--doc", docPath, "--provider", "openai", "--json", "--max-subtasks", "50", "--concurrency", "50",
			"--runs-dir", runs}, append(extra, "Summarise every part")...)
	}

	lout := localAsk(t, bin, plan, askArgs(filepath.Join(dir, "local-runs")))

	// Worker a has a fake of its own, so that the test knows when a
	// holds a call in flight; the requests of both are counted together.
	arr := &arrivals{at: map[[32]byte][]time.Time{}}
	sA, sB := arr.fake(t, plan, delay, true), arr.fake(t, plan, delay, false)
	envA := []string{"OPENAI_API_KEY=" + workerSecret, "OPENAI_BASE_URL=" + sA.OpenAIBaseURL()}
	env := []string{"OPENAI_API_KEY=" + workerSecret, "OPENAI_BASE_URL=" + sB.OpenAIBaseURL()}
	a := startWorker(t, bin, url, "worker-a", envA...)
	b := startWorker(t, bin, url, "worker-b", env...)
	// The ask starts once both workers have launched (and beaten), as a
	// user's would: an ask before any worker says none is alive.
	waitFor(t, 60*time.Second, "both workers to start", func() bool {
		return strings.Contains(a.out.String(), "taking up to") && strings.Contains(b.out.String(), "taking up to")
	})

	ask := exec.Command(bin, askArgs(filepath.Join(dir, "runs"), "--engine", "dbos", "--database-url", url)...)
	ask.Env = append(os.Environ(), env...)
	var askOut, askErr bytes.Buffer
	ask.Stdout, ask.Stderr = &askOut, &askErr
	if err := ask.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ask.Wait() }()

	// Kill worker a once it has answered some items and holds at least
	// one call in flight: one that reached its fake less than half a
	// delay ago, so its answer is not yet back.
	waitFor(t, 60*time.Second, "worker a to finish some items and hold another", func() bool {
		return arr.busyA(delay/2) && strings.Count(a.out.String(), " ok in ") >= 3
	})
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed := time.Now()
	a2 := &workerProc{out: &lockedBuffer{}}
	if restart {
		time.Sleep(500 * time.Millisecond)
		a2 = startWorker(t, bin, url, "worker-a", envA...)
	}
	logs := func() string {
		return fmt.Sprintf("%s\nworker a:\n%s\nworker a again:\n%s\nworker b:\n%s", askErr.String(), a.out, a2.out, b.out)
	}

	waitAsk(t, ask, done, logs)
	if strings.Contains(askErr.String(), "no baton worker") {
		t.Errorf("the ask said no worker was alive, with two running:\n%s", askErr.String())
	}
	checkMarkers(t, askOut.String(), n)

	arr.checkSentOnce(t, n, killed, delay)
	if !restart {
		checkAdopted(t, b.out.String())
	}

	if d := cmp.Diff(comparableRecord(t, string(lout)), comparableRecord(t, askOut.String())); d != "" {
		t.Errorf("the distributed record differs from the local one (-local +distributed):\n%s", d)
	}

	stopWorkers(t, b, a2)
	assertNotInDatabase(t, url, workerSecret)
}

// waitAsk waits for the ask to end well, at most three minutes; logs says
// what the processes wrote, for a failure.
func waitAsk(t *testing.T, ask *exec.Cmd, done <-chan error, logs func() string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ask through the workers: %v\n%s", err, logs())
		}
	case <-time.After(3 * time.Minute):
		ask.Process.Kill()
		t.Fatalf("the ask did not finish\n%s", logs())
	}
}

// localAsk runs the ask in one process, for the record to compare with.
func localAsk(t *testing.T, bin, plan string, args []string) []byte {
	t.Helper()
	local := llmtest.NewServer(t, partsScript(plan, 0, nil))
	lcmd := exec.Command(bin, args...)
	lcmd.Env = append(os.Environ(), "OPENAI_API_KEY="+workerSecret, "OPENAI_BASE_URL="+local.OpenAIBaseURL())
	lout, err := lcmd.Output()
	if err != nil {
		t.Fatalf("local ask: %v", err)
	}
	return lout
}

// stopWorkers sends SIGTERM to the workers still running: each stops and
// exits 0.
func stopWorkers(t *testing.T, ws ...*workerProc) {
	t.Helper()
	for _, w := range ws {
		if w.cmd == nil {
			continue
		}
		w.cmd.Process.Signal(syscall.SIGTERM)
		if err := w.cmd.Wait(); err != nil {
			t.Errorf("worker after SIGTERM: %v\n%s", err, w.out)
		}
	}
}

// arrivals are the times each sub-agent request (by body hash) reached the
// workers' fakes, and the last time one reached worker a's.
type arrivals struct {
	mu      sync.Mutex
	at      map[[32]byte][]time.Time
	lastAtA time.Time
}

// fake is a worker's fake provider, answering after delay and noting each
// request's arrival.
func (r *arrivals) fake(t *testing.T, plan string, delay time.Duration, isA bool) *llmtest.Server {
	return llmtest.NewServer(t, partsScript(plan, delay, func(req llmtest.RecordedRequest) {
		r.mu.Lock()
		defer r.mu.Unlock()
		h := sha256.Sum256(req.Body)
		r.at[h] = append(r.at[h], time.Now())
		if isA {
			r.lastAtA = time.Now()
		}
	}))
}

// busyA reports whether a request reached worker a less than within ago:
// its answer is not back yet.
func (r *arrivals) busyA(within time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.lastAtA) < within
}

// checkSentOnce: each of the n calls was sent once, or twice when it was in
// flight at the kill.
func (r *arrivals) checkSentOnce(t *testing.T, n int, killed time.Time, delay time.Duration) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	again, total := 0, 0
	for _, at := range r.at {
		total += len(at)
		switch {
		case len(at) > 2:
			t.Errorf("one request was sent %d times", len(at))
		case len(at) == 2:
			again++
			// Its first answer was due within the kill's reach: sent
			// after killed-delay-2s (generous: the response must have
			// been recorded for it to count).
			if at[0].Before(killed.Add(-delay - 2*time.Second)) {
				t.Errorf("a request answered %v before the kill was sent again", killed.Sub(at[0]))
			}
		}
	}
	if len(r.at) != n {
		t.Errorf("%d distinct sub-agent requests, want %d", len(r.at), n)
	}
	if again == 0 {
		t.Errorf("no call was sent again, yet worker a was killed holding one in flight")
	}
	if again > 4 {
		t.Errorf("%d requests sent again, more than the killed worker's 4 in flight", again)
	}
	t.Logf("%d sub-agent calls for %d subtasks; %d sent again after the kill", total, n, again)
}

// checkAdopted: the survivor says it adopted a's items. With a 1 s
// dead-after and 200 ms beats the bound is 1.2 s after a's last beat; the
// check allows ten times that for a loaded machine.
func checkAdopted(t *testing.T, out string) {
	t.Helper()
	line := regexp.MustCompile(`baton worker worker-b: adopted (\d+) unfinished items of worker-a`).FindStringSubmatch(out)
	if line == nil {
		t.Errorf("worker b never said it adopted worker a's items:\n%s", out)
	} else if k, _ := strconv.Atoi(line[1]); k < 1 || k > 4 {
		t.Errorf("worker b adopted %d items, want 1 to 4 (a's concurrency)", k)
	}
}

// checkMarkers: the record has n subtasks, each ok with its part's marker.
func checkMarkers(t *testing.T, record string, n int) {
	t.Helper()
	rec := decodeRecord(t, record)
	for _, st := range rec.Subtasks {
		want := fmt.Sprintf("finding: marker-%03d", st.Index+1)
		if st.Status != orchestrate.StatusOK || st.Output != want {
			t.Errorf("subtask %d: %s %q, want ok %q (%s)", st.Index+1, st.Status, st.Output, want, st.Error)
		}
	}
	if len(rec.Subtasks) != n {
		t.Fatalf("%d subtasks, want %d", len(rec.Subtasks), n)
	}
}

// assertNotInDatabase checks that secret is in no row of any table.
func assertNotInDatabase(t *testing.T, url, secret string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var s, n string
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, pgx.Identifier{s, n}.Sanitize())
	}
	rows.Close()
	if len(tables) < 3 {
		t.Fatalf("only %d tables: %v", len(tables), tables)
	}
	for _, tb := range tables {
		var k int
		if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s x WHERE x::text LIKE '%%' || $1 || '%%'`, tb), secret).Scan(&k); err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		if k > 0 {
			t.Errorf("the provider key is in %d rows of %s", k, tb)
		}
	}
}
