package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/outline"
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// MaxDocumentBytes bounds each file a tool reads, as `--doc` does: a larger
// one is refused by its size before it is read.
const MaxDocumentBytes = 64 << 20

// reads is the truthful annotation of a tool that reads files under the
// root and writes only a spilled result (spill.go): not read-only, but not
// destructive, and the same input writes the same file.
var reads = &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}

// readOnly is the annotation of a tool that changes nothing.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

// OutlineIn names the documents to outline.
type OutlineIn struct {
	Documents []string `json:"documents" jsonschema:"paths of markdown or text files or of folders (a folder gives its markdown and text files), relative to the server's root: at most 1000 files and 64 MiB in all; a file named twice is read once"`
	Budget    int      `json:"budget,omitempty" jsonschema:"the most tokens the rendered outline may take; 0 for no limit (deeper levels collapse first)"`
}

// OutlineOut is the outline: its entries and the text a planner reads.
// When the rendered outline is over the result bound, Text is empty and
// its entries are left out: Spilled says where the text was written.
type OutlineOut struct {
	Outline *outline.Outline `json:"outline"`
	Text    string           `json:"text"`
	Spilled *Spill           `json:"spilled,omitempty"`
}

// SliceIn is one cut of one document.
type SliceIn struct {
	Document   string   `json:"document" jsonschema:"path of a markdown or text file, relative to the server's root"`
	Sections   []string `json:"sections,omitempty" jsonschema:"section pointers: a heading title or a unique path such as 'Globex > Pricing'"`
	LineRanges [][2]int `json:"line_ranges,omitempty" jsonschema:"1-based inclusive line ranges, as [start, end] pairs"`
	Passages   []string `json:"passages,omitempty" jsonschema:"passage ids as the outline lists them ('p17') or runs of them ('p18-p20'), for text with no headings"`
}

// SliceOut is `baton slice --json`'s type (baton.Slice), plus Spilled: a
// slice over the result bound is written to a file, Text is then empty and
// Spilled says where.
type SliceOut struct {
	baton.Slice
	Spilled *Spill `json:"spilled,omitempty"`
}

// CountIn is what to count.
type CountIn struct {
	Texts []string `json:"texts,omitempty" jsonschema:"texts to count"`
	Files []string `json:"files,omitempty" jsonschema:"paths of files to count, relative to the server's root"`
	Model string   `json:"model,omitempty" jsonschema:"the model whose tokenizer and window to use; empty for baton's default"`
}

// Count is one counted item.
type Count struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// CountOut is the counts with the encoding used and the model's window.
type CountOut struct {
	Encoding    string  `json:"encoding"`
	Window      int     `json:"window"`
	WindowKnown bool    `json:"window_known"`
	Counts      []Count `json:"counts"`
	Total       int     `json:"total"`
}

func (s *Server) addTools() {
	addTool(s, &mcp.Tool{Name: "outline", Annotations: reads,
		Description: "The heading outline of one or more documents: each heading's unique path, its line range, its size in tokens and its first words; for a document with no headings, its passages (p1, p2, ...) with their lines, sizes and first words. Read this instead of a whole document to decide which sections or passages a step needs."},
		s.outline)
	addTool(s, &mcp.Tool{Name: "slice", Annotations: reads,
		Description: "Cut sections (by heading title or unique path), line ranges and passages (p17, p18-p20, as the outline lists them) out of a document without a model call. Unmatched pointers are reported with the nearest headings; a title naming several sections is reported ambiguous; nothing matched falls back to the whole document and says so."},
		s.slice)
	addTool(s, &mcp.Tool{Name: "count_tokens", Annotations: readOnly,
		Description: "Count the tokens of texts or files with the model's tokenizer (o200k_base or cl100k_base), and give the model's known context window."},
		s.countTokens)
	s.addLedgerTools()
	s.addAskTools()
}

// read reads one file under the root, refusing one over MaxDocumentBytes
// by its size, any path that leaves the root and any the read policy
// forbids (git's files, secrets).
func (s *Server) read(name string) (string, error) {
	return s.readWithin(name, MaxDocumentBytes)
}

// readWithin is read with budget bytes left of a call's MaxDocumentBytes:
// a file that fits alone but not in what is left is refused by its size,
// unread.
func (s *Server) readWithin(name string, budget int64) (string, error) {
	rel, err := localPath("document", name)
	if err != nil {
		return "", err
	}
	if err := s.checkPolicy("document", name, rel, false); err != nil {
		return "", err
	}
	info, err := s.root.Stat(rel)
	if err != nil {
		return "", fmt.Errorf("document %q: %w", name, rootErr(err))
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("document %q is not a regular file", name)
	}
	switch {
	case info.Size() > MaxDocumentBytes:
		return "", fmt.Errorf("document %q is %d bytes, over the %d-byte limit", name, info.Size(), MaxDocumentBytes)
	case info.Size() > budget:
		return "", errTotalBytes
	}
	s.docOps.reads.Add(1)
	data, err := s.root.ReadFile(rel)
	if err != nil {
		return "", fmt.Errorf("document %q: %w", name, rootErr(err))
	}
	return string(data), nil
}

// plainPathErr drops the *PathError's repeat of the path.
func plainPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (s *Server) outline(_ context.Context, _ *mcp.CallToolRequest, in OutlineIn) (*mcp.CallToolResult, OutlineOut, error) {
	docs, err := s.readDocuments(in.Documents)
	if err != nil {
		return nil, OutlineOut{}, err
	}
	srcs := make([]outline.Source, len(docs))
	for i, d := range docs {
		srcs[i] = outline.Source{Name: d.Name, Doc: slice.Parse(d.Data)}
	}
	o, err := outline.Build(srcs, tokens.Default(), max(in.Budget, 0))
	if err != nil {
		return nil, OutlineOut{}, err
	}
	out := OutlineOut{Outline: o, Text: o.Text()}
	if !s.fits(out) {
		// The entries are as large as the text; the file holds it.
		if out.Text, out.Spilled, err = s.spillText("outline", out.Text, o.Tokens); err != nil {
			return nil, OutlineOut{}, err
		}
		o.Entries = nil
		// An outline is made smaller by its budget, not by cutting it.
		out.Spilled.Note = fmt.Sprintf("the outline is %d bytes (%d tokens), too large for a result bounded at %d bytes; it was written to %s: call outline again with a budget (deeper headings collapse first) or read the file in pieces", out.Spilled.Bytes, out.Spilled.Tokens, s.maxResult, out.Spilled.Path)
	}
	return nil, out, nil
}

func (s *Server) slice(_ context.Context, _ *mcp.CallToolRequest, in SliceIn) (*mcp.CallToolResult, SliceOut, error) {
	text, err := s.read(in.Document)
	if err != nil {
		return nil, SliceOut{}, err
	}
	for _, r := range in.LineRanges {
		if r[0] < 1 || r[1] < r[0] {
			return nil, SliceOut{}, fmt.Errorf("line range [%d, %d]: want 1 <= start <= end", r[0], r[1])
		}
	}
	r := slice.ParseString(text).Extract(slice.Pointers{Sections: in.Sections, LineRanges: in.LineRanges, Passages: in.Passages})
	out := SliceOut{Slice: baton.NewSlice(r, nil)}
	if out.Text, out.Spilled, err = s.spill("slice", out.Text, out.Tokens); err != nil {
		return nil, SliceOut{}, err
	}
	return nil, out, nil
}

func (s *Server) countTokens(_ context.Context, _ *mcp.CallToolRequest, in CountIn) (*mcp.CallToolResult, CountOut, error) {
	switch {
	case len(in.Texts)+len(in.Files) == 0:
		return nil, CountOut{}, errors.New("nothing to count: give texts or files")
	case len(in.Files) > MaxDocuments:
		// The files are counted one by one, by name, so they are not
		// folded as outline's and ask's are; they are bounded alike.
		return nil, CountOut{}, filesCount(len(in.Files))
	}
	c := tokens.ForModel(in.Model)
	w, known := tokens.Window(in.Model, 0)
	out := CountOut{Encoding: string(c.Encoding()), Window: w, WindowKnown: known, Counts: []Count{}}
	for i, t := range in.Texts {
		n := c.Count(t)
		out.Counts = append(out.Counts, Count{Name: fmt.Sprintf("text %d", i+1), Tokens: n})
		out.Total += n
	}
	var read int64
	for _, name := range in.Files {
		text, err := s.readWithin(name, MaxDocumentBytes-read)
		if err != nil {
			return nil, CountOut{}, err
		}
		read += int64(len(text))
		n := c.Count(text)
		out.Counts = append(out.Counts, Count{Name: name, Tokens: n})
		out.Total += n
	}
	return nil, out, nil
}
