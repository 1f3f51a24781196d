package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/runid"
	"github.com/baton-dev/baton/ledger"
	"github.com/baton-dev/baton/runlog"
)

// ledgerLint does what `baton ledger lint` does (cmd/baton/ledger_cmd.go),
// with every file read through the root, and parts that cannot be read
// reported in the result rather than as an error, so the findings in the
// rest are not lost.
func (s *Server) ledgerLint(_ context.Context, _ *mcp.CallToolRequest, in LedgerLintIn) (*mcp.CallToolResult, LedgerLintOut, error) {
	out := LedgerLintOut{Findings: []LintFinding{}, Problems: []string{}}
	events, err := s.lintEvents(in, &out)
	if err != nil {
		return nil, LedgerLintOut{}, err
	}
	entries, err := s.lintEntries(in, events, &out)
	if err != nil {
		return nil, LedgerLintOut{}, err
	}
	var skills []ledger.SkillBody
	for _, p := range in.Skills {
		files, err := s.skillFiles(p)
		if err != nil {
			return nil, LedgerLintOut{}, err
		}
		for _, f := range files {
			body, err := s.read(f)
			if err != nil {
				return nil, LedgerLintOut{}, fmt.Errorf("skills: %w", err)
			}
			skills = append(skills, ledger.SkillBody{Path: f, Body: body})
		}
	}
	if events == nil && entries == nil && skills == nil {
		return nil, LedgerLintOut{}, fmt.Errorf("nothing to check: there is no ledger at %s; give ledger, run_log or skills", s.lintLedgerName(in, events))
	}
	for _, f := range ledger.Lint(events, entries, skills) {
		out.Findings = append(out.Findings, LintFinding{Where: f.Where, Rule: f.Rule, Message: f.Message})
	}
	out.Entries = len(entries)
	out.Clean = len(out.Findings) == 0 && len(out.Problems) == 0
	return nil, out, nil
}

// lintEvents reads the run log named, or the run's own log, through the
// root. Nil when neither is given.
func (s *Server) lintEvents(in LedgerLintIn, out *LedgerLintOut) ([]runlog.Event, error) {
	name := in.RunLog
	// A checked run id names one folder under .baton/runs.
	if in.Run != "" && runid.Check(in.Run) != nil {
		return nil, fmt.Errorf("run %q is not a baton run id (letters, digits, - and _)", in.Run)
	}
	if name == "" && in.Run != "" {
		name = filepath.ToSlash(batondir.Rel.RunLog(in.Run))
	}
	if name == "" {
		return nil, nil
	}
	c, err := s.confine("run log", name, false)
	if err != nil {
		return nil, err
	}
	f, err := s.root.Open(c.rel)
	if err != nil {
		return nil, fmt.Errorf("run log %q: %w", c.rel, rootErr(err))
	}
	defer f.Close()
	evs, problems, err := runlog.Decode(f, c.rel)
	if err != nil {
		return nil, fmt.Errorf("run log %s: %w", c.rel, err)
	}
	for _, p := range problems {
		if p.Torn {
			// A run killed mid-write leaves this; it is not a fault of
			// the log, but the reader should know a line is lost.
			out.Warnings = append(out.Warnings, p.String())
			continue
		}
		out.Problems = append(out.Problems, p.String())
	}
	events := []runlog.Event{}
	for _, e := range evs {
		if in.Run == "" || e.Run == in.Run {
			events = append(events, e)
		}
	}
	if in.Run != "" && len(events) == 0 {
		return nil, fmt.Errorf("run log %s has no events of run %q", c.rel, in.Run)
	}
	return events, nil
}

// lintLedgerName is the ledger lint reads: the one named, else the one the run
// wrote (its run_start event says), else the server's own.
func (s *Server) lintLedgerName(in LedgerLintIn, events []runlog.Event) string {
	if in.Ledger != "" {
		return in.Ledger
	}
	for _, e := range events {
		if e.Type == runlog.RunStart && e.LedgerPath != "" {
			return e.LedgerPath
		}
	}
	return s.defaultPath("ledger")
}

// lintEntries reads the ledger. A ledger nobody named that does not exist
// is no error (the reset rules say so if a reset needed it): the entries
// are then nil, so the run log's ledger_written events stand in for them.
func (s *Server) lintEntries(in LedgerLintIn, events []runlog.Event, out *LedgerLintOut) ([]ledger.Entry, error) {
	c, err := s.confine("ledger", s.lintLedgerName(in, events), false)
	if err != nil {
		if in.Ledger == "" && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	es, problems, err := ledger.Read(c.abs)
	if err != nil {
		return nil, c.wrap(err)
	}
	for _, p := range problems {
		p.Path = c.rel
		out.Problems = append(out.Problems, p.String())
	}
	// Non-nil even when empty: a ledger was read, so it, not the run
	// log's ledger_written events, says what was written.
	entries := make([]ledger.Entry, 0, len(es))
	for _, e := range es {
		e.Path = c.rel
		entries = append(entries, e)
	}
	out.Ledger = c.rel
	return entries, nil
}

// skillFiles is the SKILL.md named, or every one under the folder named,
// walked through the root (a symlinked folder is not followed).
func (s *Server) skillFiles(name string) ([]string, error) {
	rel, err := localPath("skills", name)
	if err != nil {
		return nil, err
	}
	info, err := s.root.Stat(rel)
	if err != nil {
		return nil, fmt.Errorf("skills %q: %w", name, rootErr(err))
	}
	if !info.IsDir() {
		return []string{rel}, nil
	}
	var files []string
	err = fs.WalkDir(s.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "SKILL.md" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("skills %q: %w", name, rootErr(err))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("skills %q: no SKILL.md found", name)
	}
	return files, nil
}
