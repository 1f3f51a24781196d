package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/baton-dev/baton/slice"
)

// readDocuments reads each document through the root (a folder gives its
// markdown and text files, as --doc does) and combines several into one
// context with a top-level section per file, so that the plan and its
// slices are the same as `baton ask`'s.
func (s *Server) readDocuments(args []string) (string, []string, []slice.Part, error) {
	var names []string
	for _, arg := range args {
		found, err := s.documentFiles(arg)
		if err != nil {
			return "", nil, nil, err
		}
		names = append(names, found...)
	}
	texts := make([]string, len(names))
	total := 0
	for i, name := range names {
		text, err := s.read(name)
		if err != nil {
			return "", nil, nil, err
		}
		if strings.IndexByte(text[:min(len(text), 8192)], 0) >= 0 {
			return "", nil, nil, fmt.Errorf("document %q looks binary (NUL bytes); ask reads markdown and text", name)
		}
		if total += len(text); total > MaxDocumentBytes {
			return "", nil, nil, fmt.Errorf("documents exceed %d MiB in total; pass fewer or smaller files", MaxDocumentBytes>>20)
		}
		texts[i] = text
	}
	if len(texts) == 1 {
		return texts[0], names, nil, nil
	}
	docs := make([]slice.NamedDoc, len(texts))
	for i, t := range texts {
		docs[i] = slice.NamedDoc{Name: names[i], Data: []byte(t)}
	}
	// The parts give the record its document map, as `baton ask` has.
	combined, parts := slice.Combine(docs)
	return string(combined), names, parts, nil
}

// textExts are the files taken from a folder, as `baton ask --doc DIR`
// takes them (package document): a docs folder's documents, not its assets.
var textExts = map[string]bool{
	".md": true, ".markdown": true, ".mdown": true, ".mkd": true, ".mdx": true,
	".txt": true, ".text": true, ".rst": true, ".adoc": true,
}

// documentFiles is name itself, or for a folder its text files in path
// order, hidden entries, node_modules and vendor skipped. The walk goes
// through the root, which does not follow a symlink out of it.
func (s *Server) documentFiles(name string) ([]string, error) {
	if name == "" {
		return nil, errors.New("a document path is empty")
	}
	name = path.Clean(filepath.ToSlash(name))
	info, err := s.root.Stat(name)
	if err != nil || !info.IsDir() {
		return []string{name}, nil // s.read says what is wrong with it
	}
	var out []string
	err = fs.WalkDir(s.root.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("document folder %q: %w", name, plainPathErr(err))
		}
		if p != name && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "vendor" {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && textExts[strings.ToLower(path.Ext(p))] {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out) // the order --doc gives, whole paths compared
	if len(out) == 0 {
		return nil, fmt.Errorf("document folder %q holds no markdown or text files", name)
	}
	return out, nil
}
