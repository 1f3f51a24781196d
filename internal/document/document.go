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
//
// Nothing is read without a bound: a file is refused by its size before it
// is opened, standard input is read only up to the budget, and devices,
// named pipes and sockets (which have no size and may never end) are refused
// without being opened.
func Load(args []string, stdin io.Reader) (*Context, error) {
	if len(args) == 0 {
		return nil, ErrNoInput
	}
	var sources []Source
	total := 0
	usedStdin := false
	for _, arg := range args {
		if arg == "-" {
			if usedStdin {
				return nil, errors.New("--doc - given more than once")
			}
			usedStdin = true
			if stdin == nil {
				return nil, errors.New("--doc -: no standard input")
			}
			data, err := readLimited(stdin, MaxBytes-total, 0)
			switch {
			case errors.Is(err, errTooBig) && total == 0:
				return nil, fmt.Errorf("standard input exceeds %d MiB", MaxBytes>>20)
			case errors.Is(err, errTooBig):
				return nil, errTotal
			case err != nil:
				return nil, fmt.Errorf("read standard input: %w", err)
			}
			total += len(data)
			sources = append(sources, Source{Name: "-", Data: data})
			continue
		}
		info, err := os.Stat(arg)
		if err != nil {
			return nil, fmt.Errorf("document %s: %w", arg, unwrapPathError(err))
		}
		paths := []string{arg}
		if info.IsDir() {
			if paths, err = walkFolder(arg); err != nil {
				return nil, err
			}
			if len(paths) == 0 {
				return nil, fmt.Errorf("document folder %s holds no markdown or text files", arg)
			}
		}
		for _, p := range paths {
			data, err := readText(p, MaxBytes-total)
			if err != nil {
				return nil, err
			}
			total += len(data)
			sources = append(sources, Source{Name: filepath.ToSlash(p), Data: data})
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

// errTotal is the one line for documents that fit alone but not together.
var errTotal = fmt.Errorf("documents exceed %d MiB in total; pass fewer or smaller files", MaxBytes>>20)

// errTooBig is what readLimited returns past its budget.
var errTooBig = errors.New("over the budget")

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

// readText reads one file of at most budget bytes and refuses it when it
// looks binary.
func readText(path string, budget int) ([]byte, error) {
	data, err := readFile(path, budget)
	if err != nil {
		return nil, err
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

// ReadFile reads one file of at most MaxBytes as it is (no binary check),
// with the same refusals as Load: not a regular file, or too large.
func ReadFile(path string) ([]byte, error) { return readFile(path, MaxBytes) }

// ReadStdin reads r (standard input) up to MaxBytes, failing with one line
// beyond it.
func ReadStdin(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no standard input")
	}
	data, err := readLimited(r, MaxBytes, 0)
	switch {
	case errors.Is(err, errTooBig):
		return nil, fmt.Errorf("standard input exceeds %d MiB", MaxBytes>>20)
	case err != nil:
		return nil, fmt.Errorf("read standard input: %w", err)
	}
	return data, nil
}

// readFile reads one file of at most budget bytes. The kind and size are
// checked before the file is opened (opening a named pipe blocks until a
// writer comes), and again on the open file in case it was replaced between
// the two; the read itself stops at budget+1 bytes in case the file grows.
func readFile(path string, budget int) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("document %s: %w", path, unwrapPathError(err))
	}
	if err := checkFile(path, info, budget); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("document %s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("document %s: %w", path, unwrapPathError(err))
	}
	if err := checkFile(path, info, budget); err != nil {
		return nil, err
	}
	data, err := readLimited(f, budget, int(info.Size()))
	if errors.Is(err, errTooBig) {
		return nil, fmt.Errorf("document %s grew past the %d MiB limit while being read", path, MaxBytes>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("document %s: %w", path, unwrapPathError(err))
	}
	return data, nil
}

// checkFile refuses what is not a regular file, and a file whose size is
// over the budget, before any of it is read.
func checkFile(path string, info fs.FileInfo, budget int) error {
	m := info.Mode()
	if !m.IsRegular() {
		kind := "an unusual kind of file"
		switch {
		case m.IsDir():
			kind = "a folder"
		case m&fs.ModeNamedPipe != 0:
			kind = "a named pipe"
		case m&fs.ModeSocket != 0:
			kind = "a socket"
		case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
			kind = "a device"
		}
		return fmt.Errorf("document %s: not a regular file (%s); baton reads files, folders and - for standard input", path, kind)
	}
	switch size := info.Size(); {
	case size > MaxBytes:
		return fmt.Errorf("document %s is %d MiB, over the %d MiB limit", path, (size+1<<20-1)>>20, MaxBytes>>20)
	case size > int64(budget):
		return errTotal
	}
	return nil
}

// readLimited reads r to its end, or fails with errTooBig as soon as it has
// more than budget bytes. hint is the expected size (0 when unknown): with
// it the whole read is one allocation; without it the data comes in chunks
// joined once at the end, so reading N bytes allocates about 2N rather than
// the 4-5N that growing one slice costs.
func readLimited(r io.Reader, budget, hint int) ([]byte, error) {
	lr := io.LimitReader(r, int64(budget)+1)
	if hint > 0 && hint <= budget {
		// One byte more than expected, so a file that grew shows at once.
		buf := make([]byte, 0, hint+1)
		for {
			n, err := lr.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if len(buf) > budget {
				return nil, errTooBig
			}
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return nil, err
			}
			if len(buf) == cap(buf) {
				// Grew, but may still be within the budget.
				buf = append(buf, 0)[:len(buf)]
			}
		}
	}
	const chunk = 1 << 20
	var chunks [][]byte
	size := 0
	for {
		c := make([]byte, chunk)
		n, err := io.ReadFull(lr, c)
		if n > 0 {
			chunks = append(chunks, c[:n])
			size += n
		}
		if size > budget {
			return nil, errTooBig
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return bytes.Join(chunks, nil), nil
		}
		if err != nil {
			return nil, err
		}
	}
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
