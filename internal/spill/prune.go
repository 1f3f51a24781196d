package spill

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"
)

// Limits bound a spill folder that outlives the work that wrote it (the
// MCP server's). A zero field is no bound of that kind.
type Limits struct {
	MaxAge   time.Duration // files older than this are removed
	MaxBytes int64         // then the oldest, until the rest hold at most this
	MaxFiles int           // and are at most this many
}

// Pruned says what Prune removed and what it left.
type Pruned struct {
	Removed      int
	RemovedBytes int64
	Left         int
	LeftBytes    int64
}

// entry is one spill file Prune may remove.
type entry struct {
	name string
	size int64
	mod  time.Time
}

// Prune removes spill files from the folder dir: first those older than
// lim.MaxAge, then the oldest until the rest are within lim.MaxBytes and
// lim.MaxFiles. Only regular files whose names ours accepts are counted or
// removed, so that a file someone else put there is left alone; a symlink
// is never followed nor removed, nor is anything under a subfolder. keep,
// the file just written, is never removed: when it alone is over
// lim.MaxBytes every other file goes and it stays, so that nothing just
// spilled is lost. dir is a root, so no name leaves the folder.
//
// It goes on past a file it cannot remove and returns the first such
// error with what it did.
func Prune(dir *os.Root, keep string, lim Limits, now time.Time, ours func(name string) bool) (Pruned, error) {
	var p Pruned
	files, err := spillFiles(dir, ours)
	if err != nil {
		return p, err
	}
	// Oldest first; names break ties so the order is the same each time.
	sort.Slice(files, func(i, j int) bool {
		if !files[i].mod.Equal(files[j].mod) {
			return files[i].mod.Before(files[j].mod)
		}
		return files[i].name < files[j].name
	})
	for _, f := range files {
		p.Left++
		p.LeftBytes += f.size
	}
	var first error
	for _, f := range files {
		old := lim.MaxAge > 0 && now.Sub(f.mod) > lim.MaxAge
		over := lim.MaxBytes > 0 && p.LeftBytes > lim.MaxBytes || lim.MaxFiles > 0 && p.Left > lim.MaxFiles
		if f.name == keep || !old && !over {
			continue
		}
		if err := dir.Remove(f.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if first == nil {
				first = fmt.Errorf("spill: prune %s: %w", f.name, err)
			}
			continue
		}
		p.Removed++
		p.RemovedBytes += f.size
		p.Left--
		p.LeftBytes -= f.size
	}
	return p, first
}

// spillFiles lists the folder's spill files, a batch at a time.
func spillFiles(dir *os.Root, ours func(string) bool) ([]entry, error) {
	d, err := dir.Open(".")
	if err != nil {
		return nil, fmt.Errorf("spill: prune: %w", err)
	}
	defer d.Close()
	var files []entry
	for {
		batch, err := d.ReadDir(256)
		for _, e := range batch {
			// Type is the entry's own (Lstat), so a symlink is seen as one.
			if !e.Type().IsRegular() || !ours(e.Name()) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			files = append(files, entry{name: e.Name(), size: info.Size(), mod: info.ModTime()})
		}
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return files, fmt.Errorf("spill: prune: %w", err)
		}
	}
}
