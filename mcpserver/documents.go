package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/baton-dev/baton/slice"
)

// MaxDocuments bounds the documents one call of outline or ask takes: the
// paths named, and the files they give once folders are expanded and
// repeats folded. Past it a call is a mistake, not a wish: a planner reads
// no more, and each file is a stat, a policy check and a read.
const MaxDocuments = 1000

// Sentinels of the documents bounds, for a caller that branches on them.
var (
	ErrTooManyDocuments  = errors.New("too many documents")
	ErrDocumentsTooLarge = errors.New("documents too large")
)

// errStopWalk ends a folder's walk once the cap is passed.
var errStopWalk = errors.New("stop the walk")

// docFile is one distinct file a call takes, by the first name given it.
type docFile struct {
	name string
	size int64
}

// docSet gathers the distinct files of a documents list within the
// bounds. The same file is taken once whatever the spelling that reaches
// it (a.md, ./a.md, x/../a.md, a symlink to it, a folder holding it);
// repeats are folded, not refused, so that a host may name a folder and a
// file inside it.
type docSet struct {
	s      *Server
	files  []docFile
	seen   map[fileID]bool
	walked map[string]bool // folders whose files are taken
	total  int64
}

// documents resolves names (outline's and ask's documents) to distinct
// files, refusing a list over MaxDocuments before any file system work,
// and a set over MaxDocuments files or MaxDocumentBytes in total by the
// sizes the files have, before any file is read.
func (s *Server) documents(names []string) ([]docFile, error) {
	if err := documentCount(len(names)); err != nil {
		return nil, err
	}
	d := &docSet{s: s, seen: map[fileID]bool{}, walked: map[string]bool{}}
	named := make(map[string]bool, len(names))
	for _, name := range names {
		rel, err := localPath("document", name)
		if err != nil {
			return nil, err
		}
		// Spellings that clean to the same path are one, unlooked-at.
		if named[rel] {
			continue
		}
		named[rel] = true
		if err := d.add(name, rel); err != nil {
			return nil, err
		}
	}
	return d.files, nil
}

// documentCount refuses a documents list that is empty or longer than
// MaxDocuments, by its length alone.
func documentCount(n int) error {
	switch {
	case n == 0:
		return errors.New("no documents given")
	case n > MaxDocuments:
		return fmt.Errorf("%w: %d paths given, over the limit of %d documents per call; name their folder, or fewer files", ErrTooManyDocuments, n, MaxDocuments)
	}
	return nil
}

// add takes the file or folder named name (rel, cleaned).
func (d *docSet) add(name, rel string) error {
	s := d.s
	if err := s.checkPolicy("document", name, rel, false); err != nil {
		return err
	}
	s.docOps.stats.Add(1)
	info, err := s.root.Stat(rel)
	if err != nil {
		return fmt.Errorf("document %q: %w", name, rootErr(err))
	}
	if info.IsDir() {
		return d.walk(name, rel)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("document %q is not a regular file", name)
	}
	return d.take(rel, info)
}

// take adds one file by its identity, within the bounds.
func (d *docSet) take(rel string, info fs.FileInfo) error {
	id := identity(rel, info)
	if d.seen[id] {
		return nil
	}
	d.seen[id] = true
	if info.Size() > MaxDocumentBytes {
		return fmt.Errorf("%w: document %q is %d bytes, over the %d-byte limit", ErrDocumentsTooLarge, rel, info.Size(), MaxDocumentBytes)
	}
	if len(d.files) == MaxDocuments {
		return fmt.Errorf("%w: the paths given hold more than %d files, over the limit of %d documents per call; name fewer or smaller folders", ErrTooManyDocuments, MaxDocuments, MaxDocuments)
	}
	if d.total += info.Size(); d.total > MaxDocumentBytes {
		return errTotalBytes
	}
	d.files = append(d.files, docFile{name: rel, size: info.Size()})
	return nil
}

// errTotalBytes is the one line for documents that fit alone but not
// together.
var errTotalBytes = fmt.Errorf("%w: together over the limit of %d MiB per call; pass fewer or smaller files", ErrDocumentsTooLarge, MaxDocumentBytes>>20)

// textExts are the files taken from a folder, as `baton ask --doc DIR`
// takes them (package document): a docs folder's documents, not its assets.
var textExts = map[string]bool{
	".md": true, ".markdown": true, ".mdown": true, ".mkd": true, ".mdx": true,
	".txt": true, ".text": true, ".rst": true, ".adoc": true,
}

// walk takes a folder's text files in path order, hidden entries,
// node_modules and vendor skipped, as --doc does. A folder already walked
// (named twice, or inside one named before) is not walked again. The walk
// goes through the root, which does not follow a symlink out of it, and
// takes no symlink.
func (d *docSet) walk(name, rel string) error {
	if d.walked[rel] {
		return nil
	}
	d.s.docOps.walks.Add(1)
	var found []string
	infos := map[string]fs.FileInfo{}
	err := fs.WalkDir(d.s.root.FS(), rel, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("document folder %q: %w", name, plainPathErr(err))
		}
		if p != rel && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if e.Name() == "node_modules" || e.Name() == "vendor" {
				return fs.SkipDir
			}
			d.walked[p] = true
			return nil
		}
		if !e.Type().IsRegular() || !textExts[strings.ToLower(path.Ext(p))] {
			return nil
		}
		// Every file counts against the cap, taken before or not, so
		// that a walk of a huge folder ends early.
		if len(found) > MaxDocuments {
			return errStopWalk
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("document folder %q: %w", name, plainPathErr(err))
		}
		found, infos[p] = append(found, p), info
		return nil
	})
	switch {
	case errors.Is(err, errStopWalk):
		return fmt.Errorf("%w: folder %q holds more than %d files, over the limit of %d documents per call; name fewer or smaller folders", ErrTooManyDocuments, name, MaxDocuments, MaxDocuments)
	case err != nil:
		return err
	case len(found) == 0:
		return fmt.Errorf("document folder %q holds no markdown or text files", name)
	}
	sort.Strings(found) // the order --doc gives, whole paths compared
	for _, p := range found {
		if err := d.s.checkPolicy("document", p, p, false); err != nil {
			return err
		}
		if err := d.take(p, infos[p]); err != nil {
			return err
		}
	}
	return nil
}

// readDocuments reads the distinct files of names, within the bounds, and
// returns each as a named text.
func (s *Server) readDocuments(names []string) ([]slice.NamedDoc, error) {
	files, err := s.documents(names)
	if err != nil {
		return nil, err
	}
	docs := make([]slice.NamedDoc, len(files))
	var total int64
	for i, f := range files {
		data, err := s.readBounded(f.name, MaxDocumentBytes-total)
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			return nil, fmt.Errorf("document %q looks binary (NUL bytes); baton reads markdown and text", f.name)
		}
		docs[i] = slice.NamedDoc{Name: f.name, Data: data}
	}
	return docs, nil
}

// readBounded reads the file rel, refusing it when it has grown past
// budget since it was looked at.
func (s *Server) readBounded(rel string, budget int64) ([]byte, error) {
	s.docOps.reads.Add(1)
	f, err := s.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("document %q: %w", rel, rootErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, budget+1))
	if err != nil {
		return nil, fmt.Errorf("document %q: %w", rel, plainPathErr(err))
	}
	if int64(len(data)) > budget {
		return nil, errTotalBytes
	}
	return data, nil
}

// askContext is ask's context of docs: one document as it is, several
// combined into one with a top-level section per file, so that the plan
// and its slices are the same as `baton ask`'s.
func askContext(docs []slice.NamedDoc) (string, []slice.Part) {
	if len(docs) == 1 {
		return string(docs[0].Data), nil
	}
	// The parts give the record its document map, as `baton ask` has.
	combined, parts := slice.Combine(docs)
	return string(combined), parts
}
