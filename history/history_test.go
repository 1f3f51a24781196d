package history_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/runlog"
)

func openDB(t *testing.T, home string) *history.DB {
	t.Helper()
	d, err := history.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// saveAsk writes an ask record under work/.baton/runs, as baton ask does.
func saveAsk(t *testing.T, work, id, task, answer string, started time.Time) (*orchestrate.Record, string) {
	t.Helper()
	dir := filepath.Join(work, ".baton", "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cost := 0.0123
	rec := &orchestrate.Record{ID: id, StartedAt: started, Task: task, Answer: answer, Status: orchestrate.RunOK,
		Provider: "anthropic", Model: "claude-sonnet-4-5", CostUSD: &cost, DurationMS: 1500,
		Usage:      orchestrate.PhaseUsage{Total: llm.Usage{InputTokens: 1200, OutputTokens: 80}},
		Accounting: orchestrate.Accounting{NaiveInputTokens: 4000, SavingsRatio: 0.7}}
	p, err := rec.Save(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rec, p
}

func ids(runs []history.Run) string {
	var s []string
	for _, r := range runs {
		s = append(s, r.ID)
	}
	return strings.Join(s, ",")
}

func TestIndexListSearchAndFilters(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	d := openDB(t, home)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i, a := range []struct{ id, task, answer string }{
		{"a1", "Why did the outage happen?", "The connection pool was exhausted."},
		{"a2", "List the action items", "Raise the pool limit; add an alert: p99-latency."},
		{"a3", "Summarise the report", "A quiet week."},
	} {
		rec, p := saveAsk(t, work, a.id, a.task, a.answer, t0.Add(time.Duration(i)*time.Hour))
		if err := d.IndexRecord(rec, p); err != nil {
			t.Fatal(err)
		}
	}
	all, err := d.List(history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(all); got != "a3,a2,a1" {
		t.Errorf("list = %s, want newest first a3,a2,a1", got)
	}
	r := all[2]
	if r.Kind != history.KindAsk || r.Dir != work || r.InputTokens != 1200 || r.NaiveSavings == nil || *r.NaiveSavings != 0.7 ||
		r.CostUSD == nil || *r.CostUSD != 0.0123 || !r.StartedAt.Equal(t0) {
		t.Errorf("row = %+v", r)
	}
	for _, tc := range []struct {
		f    history.Filter
		want string
	}{
		{history.Filter{Search: "pool"}, "a2,a1"},
		{history.Filter{Search: "exhausted"}, "a1"},
		{history.Filter{Search: "pools exhausting"}, "a1"}, // word forms
		{history.Filter{Search: "Pool LIMITS"}, "a2"},
		{history.Filter{Search: "POOL limit"}, "a2"},
		{history.Filter{Search: `p99-latency: "x`}, ""}, // query syntax is text
		{history.Filter{Search: "p99-latency"}, "a2"},
		{history.Filter{Search: "outage"}, "a1"}, // a word of the task
		{history.Filter{Since: t0.Add(90 * time.Minute)}, "a3"},
		{history.Filter{Kind: history.KindRun}, ""},
		{history.Filter{Statuses: []string{"failed", "ok"}, Limit: 1}, "a3"},
	} {
		got, err := d.List(tc.f)
		if err != nil {
			t.Fatalf("%+v: %v", tc.f, err)
		}
		if ids(got) != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.f, ids(got), tc.want)
		}
	}
	// Indexing again replaces the row and its text entry.
	rec, p := saveAsk(t, work, "a1", "Why did the outage happen?", "A bad deploy.", t0)
	if err := d.IndexRecord(rec, p); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.List(history.Filter{Search: "exhausted"}); len(got) != 0 {
		t.Errorf("old answer still found: %s", ids(got))
	}
	if got, _ := d.List(history.Filter{Search: "deploy"}); ids(got) != "a1" {
		t.Errorf("new answer not found: %s", ids(got))
	}
	if _, err := d.Get("nope"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("Get(nope) = %v", err)
	}
}

// writeRunLog writes a run log as the runner does, under work/.baton/runs/id.
func writeRunLog(t *testing.T, work, id string, events []runlog.Event) string {
	t.Helper()
	dir := filepath.Join(work, ".baton", "runs", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := runlog.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		e.Run = id
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return dir
}

func TestFromRunDir(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "baton.yaml"), []byte("name: review-flow\nphases:\n  - name: p\n    skill: s\n"), 0o644)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	use := func(in, out int) *runlog.Usage { return &runlog.Usage{InputTokens: in, OutputTokens: out} }
	dir := writeRunLog(t, work, "r1", []runlog.Event{
		{Time: t0, Type: runlog.RunStart},
		{Time: t0.Add(time.Second), Type: runlog.StepStart, Skill: "draft", Step: "1"},
		{Time: t0.Add(2 * time.Second), Type: runlog.ModelCall, Model: "claude-sonnet-4-5", Usage: use(1000, 100)},
		{Time: t0.Add(3 * time.Second), Type: runlog.ModelCall, Model: "claude-sonnet-4-5", Usage: use(2000, 50)},
		{Time: t0.Add(4 * time.Second), Type: runlog.StepEnd, Skill: "draft", Step: "1", Status: "ok", Usage: use(3000, 150)},
		{Time: t0.Add(5 * time.Second), Type: runlog.StepStart, Skill: "review", Step: "2"},
		{Time: t0.Add(9 * time.Second), Type: runlog.StepEnd, Skill: "review", Step: "2", Status: "failed", Note: "refused: bad request"},
	})
	r, err := history.FromRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "r1" || r.Kind != history.KindRun || r.Status != "failed" || r.Error != "refused: bad request" ||
		r.Title != "review-flow" || r.Dir != work || r.InputTokens != 3000 || r.OutputTokens != 150 ||
		r.DurationMS != 9000 || r.Model != "claude-sonnet-4-5" || strings.Join(r.Skills, " ") != "draft review" || r.CostUSD == nil {
		t.Errorf("row = %+v", r)
	}
	// A resumed run's calls answered from the journal were paid once, when
	// first made: marked replayed (or, in older logs, only noted) they add
	// nothing.
	resumed := writeRunLog(t, work, "r3", []runlog.Event{
		{Time: t0, Type: runlog.RunStart},
		{Time: t0.Add(time.Second), Type: runlog.ModelCall, Model: "claude-sonnet-4-5", Usage: use(1000, 100)},
		{Time: t0.Add(2 * time.Second), Type: runlog.Resume},
		{Time: t0.Add(3 * time.Second), Type: runlog.ModelCall, Model: "claude-sonnet-4-5", Replayed: true, ContextTokens: 1000},
		{Time: t0.Add(4 * time.Second), Type: runlog.ModelCall, Model: "claude-sonnet-4-5", Usage: use(1000, 100), Note: "answered from the step journal"},
		{Time: t0.Add(5 * time.Second), Type: runlog.ModelCall, Model: "claude-sonnet-4-5", Usage: use(1500, 10)},
	})
	if r, err := history.FromRunDir(resumed); err != nil || r.InputTokens != 2500 || r.OutputTokens != 110 {
		t.Errorf("resumed run: %d in, %d out (%v); want 2500 in, 110 out", r.InputTokens, r.OutputTokens, err)
	}
	// An agent command's steps have no price: the run has no cost.
	agent := writeRunLog(t, work, "r2", []runlog.Event{
		{Time: t0, Type: runlog.RunStart},
		{Time: t0.Add(time.Second), Type: runlog.ModelCall, Model: "agent-cmd", Usage: use(0, 0)},
	})
	if r, err := history.FromRunDir(agent); err != nil || r.CostUSD != nil {
		t.Errorf("agent-cmd run: cost %v, err %v; want no cost", r.CostUSD, err)
	}
	// Resumed and finished: the run_end decides.
	w, _ := runlog.Open(filepath.Join(dir, "events.jsonl"))
	w.Write(runlog.Event{Time: t0.Add(20 * time.Second), Run: "r1", Type: runlog.StepEnd, Skill: "review", Step: "2", Status: "ok"})
	w.Write(runlog.Event{Time: t0.Add(21 * time.Second), Run: "r1", Type: runlog.RunEnd, Status: "ok"})
	w.Close()
	if r, _ = history.FromRunDir(dir); r.Status != orchestrate.RunOK || r.Error != "" || r.DurationMS != 21000 {
		t.Errorf("after the end: status %q error %q duration %d", r.Status, r.Error, r.DurationMS)
	}
}

func TestRebuildWhenMissingOrDamaged(t *testing.T) {
	home, w1, w2 := t.TempDir(), t.TempDir(), t.TempDir()
	d := openDB(t, home)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	rec, p := saveAsk(t, w1, "a1", "task one", "answer about pools", t0)
	if err := d.IndexRecord(rec, p); err != nil {
		t.Fatal(err)
	}
	if err := d.IndexRunDir(writeRunLog(t, w2, "r1", []runlog.Event{{Time: t0.Add(time.Hour), Type: runlog.RunStart}})); err != nil {
		t.Fatal(err)
	}
	d.Close()
	db := filepath.Join(home, history.DBName)

	for _, damage := range []string{"missing", "garbage", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			switch damage {
			case "missing":
				for _, ext := range []string{"", "-wal", "-shm"} {
					os.Remove(db + ext)
				}
			case "garbage":
				os.WriteFile(db, []byte(strings.Repeat("not a database at all ", 500)), 0o644)
			case "truncated":
				data, _ := os.ReadFile(db)
				os.WriteFile(db, append([]byte("SQLite format 3\x00"), data[16:min(len(data), 200)]...), 0o644)
			}
			d, err := history.Open(home)
			if err != nil {
				t.Fatalf("open after %s: %v", damage, err)
			}
			defer d.Close()
			if !d.Recovered.Rebuilt || d.Recovered.Runs != 2 {
				t.Errorf("recovered = %+v, want a rebuild of 2 runs", d.Recovered)
			}
			if (d.Recovered.Damaged != "") != (damage != "missing") {
				t.Errorf("damaged copy = %q", d.Recovered.Damaged)
			}
			if d.Recovered.Damaged != "" {
				if _, err := os.Stat(d.Recovered.Damaged); err != nil {
					t.Errorf("the damaged file was not kept: %v", err)
				}
			}
			runs, err := d.List(history.Filter{})
			if err != nil || ids(runs) != "r1,a1" {
				t.Fatalf("list after rebuild = %s, %v", ids(runs), err)
			}
			if got, _ := d.List(history.Filter{Search: "pools"}); ids(got) != "a1" {
				t.Errorf("search after rebuild = %s", ids(got))
			}
		})
	}
}

func TestImport(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	saveAsk(t, filepath.Join(root, "proj-a"), "a1", "one", "x", t0)
	saveAsk(t, filepath.Join(root, "deep", "proj-b"), "a2", "two", "y", t0.Add(time.Minute))
	writeRunLog(t, filepath.Join(root, "proj-a"), "r1", []runlog.Event{{Time: t0.Add(time.Hour), Type: runlog.RunStart}})
	os.WriteFile(filepath.Join(root, "proj-a", ".baton", "runs", "junk.json"), []byte("{not json"), 0o644)
	flat := filepath.Join(root, "records") // a --runs-dir folder
	os.MkdirAll(flat, 0o755)
	(&orchestrate.Record{ID: "a3", StartedAt: t0, Task: "three"}).Save(flat)

	d := openDB(t, home)
	n, problems, err := d.Import(root)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || len(problems) != 1 || !strings.Contains(problems[0], "junk.json") {
		t.Errorf("imported %d, problems %q", n, problems)
	}
	if n, _, err := d.Import(flat); err != nil || n != 1 {
		t.Errorf("import of a records folder: %d, %v", n, err)
	}
	runs, _ := d.List(history.Filter{})
	if ids(runs) != "r1,a2,a3,a1" {
		t.Errorf("list = %s", ids(runs))
	}
	dirs, _ := d.Dirs()
	if len(dirs) != 3 {
		t.Errorf("dirs = %q", dirs)
	}
	if _, _, err := d.Import(filepath.Join(root, "nope")); err == nil {
		t.Error("import of a missing folder succeeded")
	}
}

// Two baton processes finishing at once both get their rows: the second
// writer waits for the first (busy timeout) instead of failing.
func TestConcurrentWriters(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	a, b := openDB(t, home), openDB(t, home)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for w, d := range []*history.DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%02d", w, i)
				rec := &orchestrate.Record{ID: id, StartedAt: t0.Add(time.Duration(i) * time.Second), Task: "t " + id}
				if err := d.IndexRecord(rec, filepath.Join(work, id+".json")); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	runs, err := a.List(history.Filter{})
	if err != nil || len(runs) != 2*each {
		t.Errorf("%d rows, %v", len(runs), err)
	}
}

func TestHome(t *testing.T) {
	t.Setenv(history.EnvHome, "")
	t.Setenv("XDG_DATA_HOME", "/data")
	if h, _ := history.Home(); h != filepath.Join("/data", "baton") && os.PathSeparator == '/' {
		t.Errorf("home under XDG_DATA_HOME = %q", h)
	}
	dir := t.TempDir()
	t.Setenv(history.EnvHome, dir)
	if h, _ := history.Home(); h != dir {
		t.Errorf("home with %s = %q", history.EnvHome, h)
	}
}

// TestWriterProcess is the other process of TestTwoProcesses.
func TestWriterProcess(t *testing.T) {
	home := os.Getenv("HISTORY_TEST_WRITER_HOME")
	if home == "" {
		t.Skip("run by TestTwoProcesses")
	}
	writeMany(t, home, "child")
}

func writeMany(t *testing.T, home, who string) {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := range 60 {
		// A process opens the history for each run it indexes, as baton
		// does: the opening (schema check, WAL) contends too.
		d, err := history.Open(home)
		if err != nil {
			t.Fatalf("%s open %d: %v", who, i, err)
		}
		id := fmt.Sprintf("%s-%02d", who, i)
		rec := &orchestrate.Record{ID: id, StartedAt: t0.Add(time.Duration(i) * time.Second), Task: "t " + id}
		if err := d.IndexRecord(rec, filepath.Join(home, id+".json")); err != nil {
			t.Errorf("%s: %v", who, err)
		}
		d.Close()
	}
}

// Two baton processes indexing at once both get every row in.
func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HISTORY_TEST_WRITER_HOME="+home)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	writeMany(t, home, "parent")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the other process failed: %v\n%s", err, out.String())
	}
	d := openDB(t, home)
	runs, err := d.List(history.Filter{})
	if err != nil || len(runs) != 120 {
		t.Errorf("%d rows, %v, want 120", len(runs), err)
	}
	if dirs, _ := d.Dirs(); len(dirs) != 1 {
		t.Errorf("dirs = %q, want the one folder once", dirs)
	}
}

// BenchmarkIndexOneRun is what the hook adds to an ask or a run: open the
// history, index one record, close.
func BenchmarkIndexOneRun(b *testing.B) {
	home := b.TempDir()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; b.Loop(); i++ {
		d, err := history.Open(home)
		if err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("r%06d", i)
		rec := &orchestrate.Record{ID: id, StartedAt: t0.Add(time.Duration(i) * time.Second), Task: "task " + id, Answer: strings.Repeat("answer words ", 200)}
		if err := d.IndexRecord(rec, filepath.Join(home, id+".json")); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// The database lives where the home folder says, spaces and "#" included
// (macOS's folder is ~/Library/Application Support).
func TestHomeWithSpacesAndHash(t *testing.T) {
	home := filepath.Join(t.TempDir(), "Application Support #1")
	d := openDB(t, home)
	if err := d.Put(history.Run{ID: "x", Kind: history.KindAsk, Status: "ok", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, history.DBName)); err != nil {
		t.Errorf("the database is not in the home folder: %v", err)
	}
}

// A database whose damage shows only past its first page (Open succeeds)
// reports ErrDamaged, and Repair rebuilds it from the records.
func TestDamageFoundAfterOpen(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	d := openDB(t, home)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const n = 60
	for i := range n {
		rec, p := saveAsk(t, work, fmt.Sprintf("a%02d", i), "task", strings.Repeat("long answer text ", 300), t0.Add(time.Duration(i)*time.Minute))
		if err := d.IndexRecord(rec, p); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	db := filepath.Join(home, history.DBName)
	data, err := os.ReadFile(db)
	if err != nil || len(data) < 40*4096 {
		t.Fatalf("database of %d bytes (%v); want a large one", len(data), err)
	}
	// Garbage over the second half of the file, the first page intact.
	for i := len(data) / 2; i < len(data); i++ {
		data[i] = byte(i * 7)
	}
	os.WriteFile(db, data, 0o644)

	d2, err := history.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d2.List(history.Filter{Search: "answer"})
	d2.Close()
	if !errors.Is(err, history.ErrDamaged) {
		t.Fatalf("list over a damaged database: %v, want ErrDamaged", err)
	}
	d3, err := history.Repair(home)
	if err != nil {
		t.Fatal(err)
	}
	defer d3.Close()
	if d3.Recovered.Damaged == "" || !d3.Recovered.Rebuilt || d3.Recovered.Runs != n {
		t.Errorf("repair = %+v", d3.Recovered)
	}
	if runs, err := d3.List(history.Filter{Search: "answer"}); err != nil || len(runs) != n {
		t.Errorf("after repair: %d runs, %v", len(runs), err)
	}
}
