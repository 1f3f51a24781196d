package history_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-dev/baton/history"
	"github.com/baton-dev/baton/runlog"
)

func writeSessionLog(t *testing.T, work, id string, events []runlog.Event) string {
	t.Helper()
	dir := filepath.Join(work, ".baton", "sessions", id)
	w, err := runlog.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, e := range events {
		e.Run = id
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSessionRows(t *testing.T) {
	work, home := t.TempDir(), t.TempDir()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	ok := writeSessionLog(t, work, "good", []runlog.Event{
		{Time: at, Type: runlog.RunStart, Note: "claude-code session good"},
		{Time: at.Add(time.Minute), Type: runlog.ThresholdCrossed},
		{Time: at.Add(2 * time.Minute), Type: runlog.LedgerWritten, Complete: runlog.Bool(true), Note: "written by the agent", LedgerTime: at},
		{Time: at.Add(2 * time.Minute), Type: runlog.Reset, Reason: "manual", LedgerTime: at},
	})
	writeSessionLog(t, work, "bare", []runlog.Event{
		{Time: at, Type: runlog.RunStart, Note: "codex session bare"},
		{Time: at.Add(time.Minute), Type: runlog.Reset, Reason: "auto"},
	})
	r, err := history.FromSessionDir(ok)
	if err != nil {
		t.Fatal(err)
	}
	want := "claude-code session: 1 compactions, 1 ledger entries by the agent, 0 composed by baton, 1 threshold notices, 0 oversized returns"
	if r.Kind != history.KindSession || r.Status != history.StatusUnfinished || r.Title != want || r.Dir != work || r.DurationMS != 120_000 {
		t.Errorf("row %+v", r)
	}
	// A lost database is rebuilt with the sessions, through the folder
	// list, and an import finds them too.
	db := openDB(t, home)
	if err := db.IndexSessionDir(ok); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Remove(filepath.Join(home, history.DBName)); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, home)
	runs, err := db.List(history.Filter{Kind: history.KindSession})
	if err != nil || ids(runs) != "bare,good" && ids(runs) != "good,bare" {
		t.Fatalf("rebuilt sessions %s, %v", ids(runs), err)
	}
	bare, err := db.Get("bare")
	if err != nil || bare.Status != "failed" || bare.Error == "" {
		t.Errorf("a compaction without an entry: %+v, %v", bare, err)
	}
	other := openDB(t, t.TempDir())
	if n, _, err := other.Import(work); err != nil || n != 2 {
		t.Errorf("import found %d sessions, %v", n, err)
	}
}
