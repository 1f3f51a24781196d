// Package spill keeps in full what does not fit a model's context: a tool
// result, a sub-agent's answer, an external agent's output. The model gets a
// bounded head and a pointer to the spill file; nothing is lost.
//
// A spill file is named from a label and the hash of its content, so the
// same content always lands in the same file: a resumed step that spills
// again names the file the first attempt named, and the request that
// carries the pointer hashes the same. Files are written atomically (a
// temporary file in the same folder, fsync, rename), as every file baton
// persists is. A folder that outlives the work that wrote it (the MCP
// server's) is kept within an age and a size by Prune.
package spill

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/atomicfile"
)

// File is one spill file.
type File struct {
	Path  string // absolute
	Name  string // file name inside the spill folder
	Bytes int64
	Lines int // newline-separated lines; a last line without a newline counts
}

// Dir is a spill folder, created when the first file is written.
type Dir struct{ path string }

// New returns the spill folder at path (absolute).
func New(path string) Dir { return Dir{path: path} }

// Path is the folder's absolute path.
func (d Dir) Path() string { return d.path }

// Write writes text in full to the file for label and text, unless it is
// already there.
func (d Dir) Write(label string, text []byte) (File, error) {
	sum := sha256.Sum256(text)
	f := File{Name: name(label, sum[:]), Bytes: int64(len(text)), Lines: countLines(text)}
	f.Path = filepath.Join(d.path, f.Name)
	if fi, err := os.Lstat(f.Path); err == nil && fi.Mode().IsRegular() && fi.Size() == f.Bytes {
		// Content-addressed: the same name is the same text.
		return f, nil
	}
	if err := atomicfile.Write(f.Path, text, 0o644); err != nil {
		return File{}, fmt.Errorf("spill: %w", err)
	}
	return f, nil
}

// name is label made safe for a file name, then the content hash.
func name(label string, sum []byte) string {
	safe := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, label)
	safe = strings.Trim(safe, ".")
	if len(safe) > 60 {
		safe = safe[:60]
	}
	if safe == "" {
		safe = "spill"
	}
	return safe + "-" + hex.EncodeToString(sum)[:16] + ".txt"
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// Stream writes a spill file whose size is not known in advance (a
// process's output) without holding it in memory. Commit names it by its
// content; Abort removes it. A Stream is not safe for concurrent use.
type Stream struct {
	d     Dir
	label string
	f     *os.File
	h     hash.Hash
	n     int64
	lines int
	last  byte
	err   error
}

// Create starts a stream in d.
func (d Dir) Create(label string) (*Stream, error) {
	if err := os.MkdirAll(d.path, 0o755); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	f, err := os.CreateTemp(d.path, ".stream-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &Stream{d: d, label: label, f: f, h: sha256.New()}, nil
}

// Write appends p. A write error is kept and returned by Commit too.
func (s *Stream) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.f.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	s.lines += bytes.Count(p[:n], []byte("\n"))
	if n > 0 {
		s.last = p[n-1]
	}
	if err != nil {
		s.err = fmt.Errorf("spill: %w", err)
	}
	return n, s.err
}

// Size is how many bytes were written so far.
func (s *Stream) Size() int64 { return s.n }

// Commit makes the stream a spill file: fsynced, renamed to its content's
// name, the folder fsynced.
func (s *Stream) Commit() (File, error) {
	tmp := s.f.Name()
	err := s.err
	if err == nil {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return File{}, fmt.Errorf("spill: %w", err)
	}
	f := File{Name: name(s.label, s.h.Sum(nil)), Bytes: s.n, Lines: s.lines}
	if s.n > 0 && s.last != '\n' {
		f.Lines++
	}
	f.Path = filepath.Join(s.d.path, f.Name)
	if err := os.Rename(tmp, f.Path); err != nil {
		os.Remove(tmp)
		return File{}, fmt.Errorf("spill: %w", err)
	}
	// Best effort, as in atomicfile: some file systems refuse to sync a
	// folder; the data itself is already on disk.
	if dir, err := os.Open(s.d.path); err == nil {
		dir.Sync()
		dir.Close()
	}
	return f, nil
}

// Abort removes the stream's temporary file.
func (s *Stream) Abort() {
	s.f.Close()
	os.Remove(s.f.Name())
}
