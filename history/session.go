package history

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/runlog"
)

// KindSession is a host agent's session (Claude Code, Codex) that baton's
// hooks governed; its log is <workspace>/.baton/sessions/<id>/events.jsonl.
const KindSession = "session"

// isSessionsFolder reports whether p is a workspace's .baton/sessions.
func isSessionsFolder(p string) bool {
	return batondir.IsSessions(p)
}

// FromSessionDir makes the row of a host session from its folder: the
// title names the host and counts what the hooks saw (compactions, ledger
// entries, threshold notices, oversized returns). Its status is "failed"
// when a compaction was logged with no ledger entry before it, and
// "unfinished" otherwise: baton sees no end of a host's session.
func FromSessionDir(dir string) (Run, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Run{}, err
	}
	logPath := filepath.Join(abs, batondir.RunLogName)
	events, _, err := runlog.Read(logPath)
	if err != nil {
		return Run{}, err
	}
	if len(events) == 0 {
		return Run{}, fmt.Errorf("session log %s has no events", logPath)
	}
	r := Run{ID: filepath.Base(abs), Kind: KindSession, Status: StatusUnfinished,
		Dir: filepath.Dir(filepath.Dir(filepath.Dir(abs))), Record: logPath, StartedAt: events[0].Time.UTC()}
	host := "host"
	var compactions, composed, written, crossings, oversize, bare int
	last := events[0].Time
	for _, e := range events {
		if e.Time.After(last) {
			last = e.Time
		}
		switch e.Type {
		case runlog.RunStart:
			if h, _, ok := strings.Cut(e.Note, " session "); ok && h != "" {
				host = h
			}
		case runlog.Reset:
			compactions++
			if e.LedgerTime.IsZero() {
				bare++
			}
		case runlog.LedgerWritten:
			if e.Complete != nil && *e.Complete {
				if strings.HasPrefix(e.Note, "composed") {
					composed++
				} else {
					written++
				}
			}
		case runlog.ThresholdCrossed, runlog.MissNote:
			crossings++
		case runlog.SubagentReturn:
			oversize++
		}
	}
	r.Title = fmt.Sprintf("%s session: %d compactions, %d ledger entries by the agent, %d composed by baton, %d threshold notices, %d oversized returns",
		host, compactions, written, composed, crossings, oversize)
	if bare > 0 {
		r.Status, r.Error = "failed", fmt.Sprintf("%d compactions with no ledger entry before them", bare)
	}
	r.DurationMS = last.Sub(events[0].Time).Milliseconds()
	return r, nil
}

// IndexSessionDir indexes the host session in dir
// (.baton/sessions/<id>) and remembers the folder of sessions it is in.
func (d *DB) IndexSessionDir(dir string) error {
	r, err := FromSessionDir(dir)
	if err != nil {
		return err
	}
	if err := d.Put(r); err != nil {
		return err
	}
	return d.AddDir(filepath.Dir(filepath.Dir(r.Record)))
}
