// Package history keeps one index of every `baton ask` and `baton run` a
// user made, wherever it ran: a SQLite database (pure Go, modernc.org/sqlite,
// so no cgo) with one row per run and a full-text index over tasks and
// answers. The record files stay where the runs wrote them and remain the
// truth; the database is a cache of them. A database that is missing or
// damaged is rebuilt from the record files, found through a plain list of
// the folders the index has seen (Dirs, history.dirs beside the database),
// because a lost database cannot say where its runs were.
package history

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// EnvHome overrides the folder that holds the database and its folder list.
const EnvHome = "BATON_HOME"

// File names inside the home folder.
const (
	DBName   = "history.db"
	DirsName = "history.dirs"
)

// SchemaVersion is the version of the tables this package writes. An older
// database is migrated on open; a newer one (a later baton's) is refused.
const SchemaVersion = 1

// ErrNewerSchema is returned by Open for a database a later baton made.
var ErrNewerSchema = errors.New("the run history was made by a newer baton")

// ErrDamaged is wrapped by the errors of a database that turned out to be
// damaged after it opened (a corrupt page); Repair moves it aside and
// rebuilds it.
var ErrDamaged = errors.New("the run history is damaged")

// ErrNotFound is returned by Get for an id the index does not hold.
var ErrNotFound = errors.New("no such run in the history")

// Home returns the folder of the history: $BATON_HOME when set, else the
// user's data folder: $XDG_DATA_HOME/baton or ~/.local/share/baton on Unix,
// ~/Library/Application Support/baton on macOS (unless XDG_DATA_HOME is
// set), %LocalAppData%\baton on Windows (the index holds this machine's
// paths, so it does not roam).
func Home() (string, error) {
	if h := os.Getenv(EnvHome); h != "" {
		return filepath.Abs(h)
	}
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "baton"), nil
		}
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("run history: %w", err)
		}
		return filepath.Join(d, "baton"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "baton"), nil
	}
	if runtime.GOOS == "darwin" {
		d, err := os.UserConfigDir() // ~/Library/Application Support
		if err != nil {
			return "", fmt.Errorf("run history: %w", err)
		}
		return filepath.Join(d, "baton"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("run history: set %s or HOME: %w", EnvHome, err)
	}
	return filepath.Join(h, ".local", "share", "baton"), nil
}

// DB is an open run history.
type DB struct {
	db   *sql.DB
	home string
	// Recovered says what Open had to do to get a usable index.
	Recovered Recovery
}

// Recovery is what Open did about a missing or damaged database.
type Recovery struct {
	// Damaged is where a damaged database was moved aside ("" if none).
	Damaged string
	// Rebuilt is true when the index was rebuilt from the record files;
	// Runs is how many runs that found.
	Rebuilt bool
	Runs    int
	// Problems are record files the rebuild could not read.
	Problems []string
}

// busyTimeout is how long a writer waits for another baton process that
// holds the database: two runs finishing at once both get their row.
const busyTimeout = 10 * time.Second

// Open opens (creating if need be) the history in home ("" for Home()).
// A database file that is not a SQLite database or is corrupt is moved
// aside and rebuilt, as is a missing one when the folder list names
// folders of records.
func Open(home string) (*DB, error) {
	if home == "" {
		h, err := Home()
		if err != nil {
			return nil, err
		}
		home = h
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("run history: %w", err)
	}
	path := filepath.Join(home, DBName)
	_, statErr := os.Stat(path)
	fresh := errors.Is(statErr, fs.ErrNotExist)

	d, err := open(path, home)
	var rec Recovery
	if err != nil && damaged(err) {
		aside, merr := moveAside(path)
		if merr != nil {
			return nil, fmt.Errorf("run history %s is damaged (%v) and could not be moved aside: %w", path, err, merr)
		}
		rec.Damaged = aside
		fresh = true
		d, err = open(path, home)
	}
	if err != nil {
		return nil, err
	}
	if fresh {
		dirs, _ := d.Dirs()
		if len(dirs) > 0 {
			n, problems, err := d.rebuild(dirs)
			if err != nil {
				d.Close()
				return nil, err
			}
			rec.Rebuilt, rec.Runs, rec.Problems = true, n, problems
		}
	}
	d.Recovered = rec
	return d, nil
}

// Repair moves the database in home aside and rebuilds it from the record
// files, for a database whose errors wrap ErrDamaged.
func Repair(home string) (*DB, error) {
	if home == "" {
		h, err := Home()
		if err != nil {
			return nil, err
		}
		home = h
	}
	path := filepath.Join(home, DBName)
	aside, err := moveAside(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run history %s is damaged and could not be moved aside: %w", path, err)
	}
	d, err := Open(home)
	if err != nil {
		return nil, err
	}
	d.Recovered.Damaged = aside
	return d, nil
}

func open(path, home string) (*DB, error) {
	// The pragmas are applied to every connection the pool opens. Every
	// transaction takes the write lock when it begins (_txlock=immediate),
	// so a second process waits out the busy timeout at BEGIN instead of
	// failing when a read would turn into a write. It is a plain file
	// name, not a file: URI, so that a path with spaces or a
	// "#" (~/Library/Application Support) is taken as it is; the driver
	// cuts its own parameters off at the "?".
	dsn := path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate", busyTimeout.Milliseconds())
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("run history %s: %w", path, err)
	}
	sdb.SetMaxOpenConns(1) // one process writes little; one connection keeps it simple
	d := &DB{db: sdb, home: home}
	if err := d.migrate(); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("run history %s: %w", path, err)
	}
	return d, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Home is the folder the history lives in.
func (d *DB) Home() string { return d.home }

const schema = `
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
	id TEXT NOT NULL UNIQUE,
	kind TEXT NOT NULL,
	status TEXT NOT NULL,
	title TEXT NOT NULL,
	answer TEXT NOT NULL,
	skills TEXT NOT NULL,
	error TEXT NOT NULL,
	provider TEXT NOT NULL,
	model TEXT NOT NULL,
	input_tokens INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	cache_read_tokens INTEGER NOT NULL,
	cache_write_tokens INTEGER NOT NULL,
	naive_savings REAL,
	single_call_savings REAL,
	cost_usd REAL,
	duration_ms INTEGER NOT NULL,
	dir TEXT NOT NULL,
	record TEXT NOT NULL,
	started_at INTEGER NOT NULL,
	continuous_input_tokens INTEGER NOT NULL DEFAULT 0,
	continuous_savings REAL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started_at);
-- porter: a search for "pools" finds "pool", "exhausted" finds "exhaust".
CREATE VIRTUAL TABLE IF NOT EXISTS runs_fts USING fts5(title, answer, tokenize = 'porter unicode61');
`

func (d *DB) migrate() error {
	tx, err := d.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	var v int
	switch err := tx.QueryRow(`SELECT version FROM schema_version`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.Exec(`INSERT INTO schema_version(version) VALUES (?)`, SchemaVersion); err != nil {
			return err
		}
	case err != nil:
		return err
	case v > SchemaVersion:
		return fmt.Errorf("%w (schema %d; this baton knows %d)", ErrNewerSchema, v, SchemaVersion)
	}
	added, err := addColumns(tx)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if added {
		d.refreshRuns()
	}
	return nil
}

// addedColumns are the columns added to runs since schema 1. They are added
// in place, without a new schema version, so that an older baton still
// opens the database: it names its columns and never sees these.
var addedColumns = []struct{ name, decl string }{
	{"continuous_input_tokens", "INTEGER NOT NULL DEFAULT 0"},
	{"continuous_savings", "REAL"},
}

// addColumns adds the columns a database made before them lacks, and
// reports whether it added any.
func addColumns(tx *sql.Tx) (bool, error) {
	rows, err := tx.Query(`SELECT name FROM pragma_table_info('runs')`)
	if err != nil {
		return false, err
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return false, err
		}
		have[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	added := false
	for _, c := range addedColumns {
		if have[c.name] {
			continue
		}
		if _, err := tx.Exec(`ALTER TABLE runs ADD COLUMN ` + c.name + ` ` + c.decl); err != nil {
			return false, err
		}
		added = true
	}
	return added, nil
}

// refreshRuns re-reads the workflow runs' logs into their rows, for the
// columns just added. A log that is gone or unreadable keeps its row as it
// was: the figures are a cache, and the next index of the run fills them.
func (d *DB) refreshRuns() {
	rows, err := d.db.Query(`SELECT record FROM runs WHERE kind = ?`, KindRun)
	if err != nil {
		return
	}
	var logs []string
	for rows.Next() {
		var p string
		if rows.Scan(&p) == nil {
			logs = append(logs, p)
		}
	}
	rows.Close()
	for _, p := range logs {
		if r, err := FromRunDir(filepath.Dir(p)); err == nil {
			d.Put(r)
		}
	}
}

// damaged says whether err means the file is not a usable database.
func damaged(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return true
	}
	return false
}

// wrap adds context to a database error, and ErrDamaged when the error
// says the file is damaged.
func wrap(what string, err error) error {
	if damaged(err) {
		return fmt.Errorf("%s: %w: %w", what, ErrDamaged, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// moveAside renames a damaged database (and its WAL files, which belong to
// it) to history.db.damaged-<time>, so nothing is deleted.
func moveAside(path string) (string, error) {
	aside := path + ".damaged-" + time.Now().UTC().Format("20060102T150405.000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	for _, ext := range []string{"-wal", "-shm"} {
		if err := os.Rename(path+ext, aside+ext); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return aside, err
		}
	}
	return aside, nil
}
