// Package document turns what a user passes with --doc (files, folders, or
// standard input) into the one context a run works on. One source is used
// exactly as it is, so line numbers in plans and slices are the file's own;
// several sources become one markdown document with a top-level section per
// source, named by its path, so a planner can point at a file by name.
package document

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/baton-dev/baton/slice"
)

// MaxBytes bounds the whole context. Beyond it no model window holds the
// document anyway, and reading it would only burn memory.
const MaxBytes = 64 << 20

// ErrNoInput is returned when no --doc was given and nothing came on stdin.
var ErrNoInput = errors.New("no document given")

// Source is one input file (or standard input, named "-").
type Source struct {
	Name string
	Data []byte
}

// Context is the text a run works on and where it came from.
type Context struct {
	Text    string
	Sources []Source
	// Parts maps lines of Text back to sources when several were combined;
	// nil for a single source.
	Parts []slice.Part
}

// textExts are the file kinds taken from a folder. Anything else in a folder
// (images, binaries, code) is skipped silently: a user pointing baton at a
// docs folder wants its documents, not its assets.
var textExts = map[string]bool{
	".md": true, ".markdown": true, ".mdown": true, ".mkd": true, ".mdx": true,
	".txt": true, ".text": true, ".rst": true, ".adoc": true,
}

// Load reads every argument: a file, a folder (its markdown and text files,
// recursively, in path order, hidden entries skipped), or "-" for stdin.
func Load(args []string, stdin io.Reader) (*Context, error) {
	if len(args) == 0 {
		return nil, ErrNoInput
	}
	var sources []Source
	total := 0
	usedStdin := false
	add := func(s Source) error {
		total += len(s.Data)
		if total > MaxBytes {
			return fmt.Errorf("documents exceed %d MiB in total; pass fewer or smaller files", MaxBytes>>20)
		}
		sources = append(sources, s)
		return nil
	}
	for _, arg := range args {
		if arg == "-" {
			if usedStdin {
				return nil, errors.New("--doc - given more than once")
			}
			usedStdin = true
			if stdin == nil {
				return nil, errors.New("--doc -: no standard input")
			}
			data, err := io.ReadAll(io.LimitReader(stdin, MaxBytes+1))
			if err != nil {
				return nil, fmt.Errorf("read standard input: %w", err)
			}
			if err := add(Source{Name: "-", Data: data}); err != nil {
				return nil, err
			}
			continue
		}
		info, err := os.Stat(arg)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", arg, unwrapPathError(err))
		}
		if !info.IsDir() {
			data, err := readText(arg)
			if err != nil {
				return nil, err
			}
			if err := add(Source{Name: filepath.ToSlash(arg), Data: data}); err != nil {
				return nil, err
			}
			continue
		}
		found, err := walkFolder(arg)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("document folder %s holds no markdown or text files", arg)
		}
		for _, p := range found {
			data, err := readText(p)
			if err != nil {
				return nil, err
			}
			if err := add(Source{Name: filepath.ToSlash(p), Data: data}); err != nil {
				return nil, err
			}
		}
	}
	if len(sources) == 1 {
		return &Context{Text: string(sources[0].Data), Sources: sources}, nil
	}
	named := make([]slice.NamedDoc, len(sources))
	for i, s := range sources {
		named[i] = slice.NamedDoc{Name: s.Name, Data: s.Data}
	}
	combined, parts := slice.Combine(named)
	return &Context{Text: string(combined), Sources: sources, Parts: parts}, nil
}

func walkFolder(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("document folder %s: %w", root, unwrapPathError(err))
		}
		name := d.Name()
		if p != root && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if name == "node_modules" || name == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && textExts[strings.ToLower(filepath.Ext(name))] {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func readText(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("document %s: %w", path, unwrapPathError(err))
	}
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, fmt.Errorf("document %s: looks binary (NUL bytes); baton reads markdown and text", path)
	}
	return data, nil
}

// unwrapPathError drops the path that *fs.PathError repeats, so the message
// names the file once.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
