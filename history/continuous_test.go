package history_test

import (
	"database/sql"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/runlog"
)

// continuousLog is a two-step run: step 1's last context (3000 tokens) is
// dropped at the step change, so step 2's call of 1000 would have sent
// 4000 in one continuous session. Sent 2000 + 3000 + 1000 = 6000, the
// baseline 2000 + 3000 + 4000 = 9000, savings 1 − 6000/9000 = 1/3.
func continuousLog(t *testing.T, work, id string) string {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	use := &runlog.Usage{InputTokens: 10, OutputTokens: 1}
	return writeRunLog(t, work, id, []runlog.Event{
		{Time: t0, Type: runlog.RunStart},
		{Time: t0, Type: runlog.StepStart, Step: "1", Skill: "a"},
		{Time: t0, Type: runlog.ModelCall, Step: "1", Model: "m", ContextTokens: 2000, Usage: use},
		{Time: t0, Type: runlog.ModelCall, Step: "1", Model: "m", ContextTokens: 3000, Usage: use},
		{Time: t0, Type: runlog.StepEnd, Step: "1", Skill: "a", Status: "ok"},
		{Time: t0, Type: runlog.StepStart, Step: "2", Skill: "b"},
		{Time: t0, Type: runlog.ModelCall, Step: "2", Model: "m", ContextTokens: 1000, Usage: use},
	})
}

func TestRunRowHasTheContinuousSessionBaseline(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	dir := continuousLog(t, work, "r1")
	r, err := history.FromRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.ContinuousSessionInputTokens != 9000 || r.ContinuousSessionSavings == nil || math.Abs(*r.ContinuousSessionSavings-1.0/3) > 1e-12 {
		t.Fatalf("row: baseline %d, savings %v; want 9000, 1/3", r.ContinuousSessionInputTokens, r.ContinuousSessionSavings)
	}
	d := openDB(t, home)
	if err := d.IndexRunDir(dir); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get("r1")
	if err != nil || got.ContinuousSessionInputTokens != 9000 || got.ContinuousSessionSavings == nil || *got.ContinuousSessionSavings != *r.ContinuousSessionSavings {
		t.Errorf("indexed row: %+v, %v", got, err)
	}
	// A run without a paid call has no baseline.
	empty := writeRunLog(t, work, "r2", []runlog.Event{{Type: runlog.RunStart}})
	if r, err := history.FromRunDir(empty); err != nil || r.ContinuousSessionSavings != nil || r.ContinuousSessionInputTokens != 0 {
		t.Errorf("empty run: %+v, %v", r, err)
	}
}

// A database made before the baseline's columns gains them on open, with
// its workflow runs' figures read again from their logs, and keeps its
// schema version so an older baton still opens it.
func TestOldDatabaseGainsTheBaselineColumns(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	dir := continuousLog(t, work, "r1")
	db, err := sql.Open("sqlite", filepath.Join(home, history.DBName))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE runs (id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, status TEXT NOT NULL, title TEXT NOT NULL,
	answer TEXT NOT NULL, skills TEXT NOT NULL, error TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
	input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL,
	cache_write_tokens INTEGER NOT NULL, naive_savings REAL, single_call_savings REAL, cost_usd REAL,
	duration_ms INTEGER NOT NULL, dir TEXT NOT NULL, record TEXT NOT NULL, started_at INTEGER NOT NULL);
CREATE VIRTUAL TABLE runs_fts USING fts5(title, answer, tokenize = 'porter unicode61');
INSERT INTO runs VALUES ('r1', 'run', 'unfinished', 'flow', '', 'a b', '', '', 'm', 30, 3, 0, 0, NULL, NULL, NULL, 0, ?, ?, 0);`,
		work, filepath.Join(dir, "events.jsonl"))
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	d := openDB(t, home)
	r, err := d.Get("r1")
	if err != nil || r.ContinuousSessionInputTokens != 9000 || r.ContinuousSessionSavings == nil {
		t.Errorf("migrated row: %+v, %v", r, err)
	}
	d.Close()
	db, _ = sql.Open("sqlite", filepath.Join(home, history.DBName))
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != 1 {
		t.Errorf("schema version %d, %v; want 1", v, err)
	}
}
