package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/orchestrate"
)

// Dirs returns the folders of run records the index has seen, from
// history.dirs: one absolute path a line, oldest first.
func (d *DB) Dirs() ([]string, error) {
	data, err := os.ReadFile(filepath.Join(d.home, DirsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run history: %w", err)
	}
	var dirs []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// Two processes may add the same folder at once: the list is read
		// as a set.
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || seen[line] || !filepath.IsAbs(line) {
			continue
		}
		seen[line] = true
		dirs = append(dirs, line)
	}
	return dirs, nil
}

// AddDir adds a folder of run records to history.dirs unless it is there.
func (d *DB) AddDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	dirs, err := d.Dirs()
	if err != nil {
		return err
	}
	for _, v := range dirs {
		if v == abs {
			return nil
		}
	}
	p := filepath.Join(d.home, DirsName)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("run history: %w", err)
	}
	// One write of one whole line: appends of two processes do not mix.
	_, werr := f.WriteString(abs + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("run history %s: %w", p, werr)
	}
	return nil
}

// IndexRecord indexes an ask record saved at path and remembers its folder.
func (d *DB) IndexRecord(rec *orchestrate.Record, path string) error {
	r, err := FromRecord(rec, path)
	if err != nil {
		return err
	}
	if err := d.Put(r); err != nil {
		return err
	}
	return d.AddDir(filepath.Dir(r.Record))
}

// IndexRunDir indexes the workflow run in dir (.baton/runs/<id>) and
// remembers the folder of runs it is in.
func (d *DB) IndexRunDir(dir string) error {
	r, err := FromRunDir(dir)
	if err != nil {
		return err
	}
	if err := d.Put(r); err != nil {
		return err
	}
	return d.AddDir(filepath.Dir(filepath.Dir(r.Record)))
}

// Import indexes every run under root: each .baton/runs folder below it,
// and root itself when it holds ask records (a --runs-dir folder). It
// returns how many runs it indexed and the files it could not read.
func (d *DB) Import(root string) (int, []string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return 0, nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return 0, nil, fmt.Errorf("import: %w", err)
	}
	if !info.IsDir() {
		return 0, nil, fmt.Errorf("import %s: not a folder", root)
	}
	var folders []string
	err = filepath.WalkDir(abs, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == abs {
				return err
			}
			return nil // an unreadable folder below is not the import's business
		}
		if !e.IsDir() {
			return nil
		}
		switch {
		case isRunsFolder(p), isSessionsFolder(p):
			folders = append(folders, p)
			return filepath.SkipDir
		case p != abs && (e.Name() == ".git" || e.Name() == "node_modules"):
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("import %s: %w", root, err)
	}
	if len(folders) == 0 || folders[0] != abs {
		folders = append([]string{abs}, folders...) // root may be a --runs-dir folder
	}
	total := 0
	var problems []string
	for _, f := range folders {
		n, probs, err := d.importFolder(f, f != abs || isRunsFolder(f) || isSessionsFolder(f))
		if err != nil {
			return total, problems, err
		}
		total += n
		problems = append(problems, probs...)
	}
	return total, problems, nil
}

func isRunsFolder(p string) bool {
	return batondir.IsRuns(p)
}

// rebuild indexes the folders the list names, in one transaction per
// folder; a folder that is gone is skipped.
func (d *DB) rebuild(dirs []string) (int, []string, error) {
	total := 0
	var problems []string
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		n, probs, err := d.importFolder(dir, true)
		if err != nil {
			return total, problems, err
		}
		total += n
		problems = append(problems, probs...)
	}
	return total, problems, nil
}

// importFolder indexes the ask records (*.json) and workflow runs
// (<id>/events.jsonl) directly in dir. A .json file that is not a record
// is a problem in a folder of records (strict), and ignored elsewhere.
func (d *DB) importFolder(dir string, strict bool) (int, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("import %s: %w", dir, err)
	}
	var runs []Run
	var problems []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(p, batondir.RunLogName)); err != nil {
				continue
			}
			from := FromRunDir
			if isSessionsFolder(dir) {
				from = FromSessionDir
			}
			r, err := from(p)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			runs = append(runs, r)
		case strings.HasSuffix(e.Name(), ".json") && e.Type().IsRegular():
			rec, err := ReadRecord(p)
			if err != nil {
				if strict {
					problems = append(problems, err.Error())
				}
				continue
			}
			r, err := FromRecord(rec, p)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return 0, problems, nil
	}
	tx, err := d.db.Begin()
	if err != nil {
		return 0, problems, wrap("import "+dir, err)
	}
	defer tx.Rollback()
	for _, r := range runs {
		if err := put(tx, r); err != nil {
			return 0, problems, wrap("import "+dir+": run "+r.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, problems, wrap("import "+dir, err)
	}
	return len(runs), problems, d.AddDir(dir)
}
