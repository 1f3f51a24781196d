package history

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

const columns = `id, kind, status, title, answer, skills, error, provider, model, input_tokens, output_tokens,
	cache_read_tokens, cache_write_tokens, naive_savings, single_call_savings, cost_usd, duration_ms, dir, record, started_at,
	continuous_input_tokens, continuous_savings`

// Put adds r to the index, or replaces the row of the same id, and its
// full-text entry with it.
func (d *DB) Put(r Run) error {
	tx, err := d.db.Begin()
	if err != nil {
		return wrap("index run "+r.ID, err)
	}
	defer tx.Rollback()
	if err := put(tx, r); err != nil {
		return wrap("index run "+r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return wrap("index run "+r.ID, err)
	}
	return nil
}

func put(tx *sql.Tx, r Run) error {
	skills := strings.Join(r.Skills, " ")
	// An upsert keeps the row's rowid, which is the key of its text entry.
	_, err := tx.Exec(`INSERT INTO runs (`+columns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET kind=excluded.kind, status=excluded.status, title=excluded.title,
		answer=excluded.answer, skills=excluded.skills, error=excluded.error, provider=excluded.provider, model=excluded.model,
		input_tokens=excluded.input_tokens, output_tokens=excluded.output_tokens,
		cache_read_tokens=excluded.cache_read_tokens, cache_write_tokens=excluded.cache_write_tokens,
		naive_savings=excluded.naive_savings, single_call_savings=excluded.single_call_savings,
		cost_usd=excluded.cost_usd, duration_ms=excluded.duration_ms, dir=excluded.dir,
		record=excluded.record, started_at=excluded.started_at,
		continuous_input_tokens=excluded.continuous_input_tokens, continuous_savings=excluded.continuous_savings`,
		r.ID, r.Kind, r.Status, r.Title, r.Answer, skills, r.Error, r.Provider, r.Model, r.InputTokens, r.OutputTokens,
		r.CacheReadTokens, r.CacheWriteTokens, r.NaiveSavings, r.SingleCallSavings, r.CostUSD, r.DurationMS,
		r.Dir, r.Record, r.StartedAt.UnixMilli(), r.ContinuousSessionInputTokens, r.ContinuousSessionSavings)
	if err != nil {
		return err
	}
	var rowid int64
	if err := tx.QueryRow(`SELECT rowid FROM runs WHERE id = ?`, r.ID).Scan(&rowid); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM runs_fts WHERE rowid = ?`, rowid); err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO runs_fts (rowid, title, answer) VALUES (?, ?, ?)`, rowid, r.Title, strings.TrimSpace(r.Answer+" "+skills))
	return err
}

// Filter selects runs for List; zero fields select everything.
type Filter struct {
	Kind     string
	Statuses []string
	Since    time.Time
	// Search is words that must all occur in the task, workflow name or
	// answer (full-text, any word form the tokenizer folds together).
	Search string
	Limit  int
}

// List returns the runs f selects, newest first.
func (d *DB) List(f Filter) ([]Run, error) {
	var where []string
	var args []any
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, f.Kind)
	}
	if len(f.Statuses) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(",?", len(f.Statuses)-1)+")")
		for _, s := range f.Statuses {
			args = append(args, s)
		}
	}
	if !f.Since.IsZero() {
		where, args = append(where, "started_at >= ?"), append(args, f.Since.UnixMilli())
	}
	if q := matchQuery(f.Search); q != "" {
		where, args = append(where, "rowid IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)"), append(args, q)
	}
	query := `SELECT ` + columns + ` FROM runs`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY started_at DESC, id DESC"
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := d.db.Query(query, args...)
	if err != nil {
		return nil, wrap("run history", err)
	}
	defer rows.Close()
	runs := []Run{}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, wrap("run history", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("run history", err)
	}
	return runs, nil
}

// Get returns the run with id, or an error wrapping ErrNotFound.
func (d *DB) Get(id string) (Run, error) {
	r, err := scan(d.db.QueryRow(`SELECT `+columns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Run{}, wrap("run history", err)
	}
	return r, nil
}

type scanner interface{ Scan(dest ...any) error }

func scan(s scanner) (Run, error) {
	var r Run
	var skills string
	var started int64
	var naive, single, cost, continuous sql.NullFloat64
	err := s.Scan(&r.ID, &r.Kind, &r.Status, &r.Title, &r.Answer, &skills, &r.Error, &r.Provider, &r.Model,
		&r.InputTokens, &r.OutputTokens, &r.CacheReadTokens, &r.CacheWriteTokens, &naive, &single, &cost,
		&r.DurationMS, &r.Dir, &r.Record, &started, &r.ContinuousSessionInputTokens, &continuous)
	if err != nil {
		return Run{}, err
	}
	r.Skills = strings.Fields(skills)
	r.NaiveSavings, r.SingleCallSavings, r.CostUSD = ptr(naive), ptr(single), ptr(cost)
	r.ContinuousSessionSavings = ptr(continuous)
	r.StartedAt = time.UnixMilli(started).UTC()
	return r, nil
}

func ptr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

// matchQuery turns what a user typed into an FTS5 query: every word a
// quoted string, all required, so that no character of theirs is read as
// query syntax (a "-" or a ":" in a task is just text).
func matchQuery(s string) string {
	var terms []string
	// A NUL would end the query string inside SQLite: control characters
	// separate words like spaces do.
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	for _, w := range strings.Fields(s) {
		terms = append(terms, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(terms, " ")
}

// Find returns the run whose id is id or, failing that, the only run whose
// id begins with it; ids are long, and a prefix is what people type.
func (d *DB) Find(id string) (Run, error) {
	r, err := d.Get(id)
	if !errors.Is(err, ErrNotFound) || id == "" {
		return r, err
	}
	// LIKE would read % and _ in id as patterns: compare the prefix itself.
	rows, err := d.db.Query(`SELECT `+columns+` FROM runs WHERE substr(id, 1, ?) = ? ORDER BY started_at DESC LIMIT 2`, len(id), id)
	if err != nil {
		return Run{}, wrap("run history", err)
	}
	defer rows.Close()
	var found []Run
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return Run{}, wrap("run history", err)
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return Run{}, wrap("run history", err)
	}
	switch len(found) {
	case 0:
		return Run{}, fmt.Errorf("run %q: %w", id, ErrNotFound)
	case 1:
		return found[0], nil
	}
	return Run{}, fmt.Errorf("run %q: %w", id, ErrAmbiguous)
}

// ErrAmbiguous is returned by Find for a prefix of more than one run's id.
var ErrAmbiguous = errors.New("more than one run's id begins so; give more of it")
