package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton"
	"github.com/baton-dev/baton/internal/document"
	"github.com/baton-dev/baton/slice"
)

func init() { register(newSliceCmd) }

// sliceJSON is the public --json shape, the MCP slice tool's too.
type sliceJSON = baton.Slice

// sliceLong is slice's help.
const sliceLong = `slice prints the part of a markdown document that --section and --lines
name, exactly as baton hands it to a sub-agent. No model is called.

A section runs from its heading to the line before the next heading of the
same or higher level. Section titles are matched forgivingly: case, spacing,
markup, quotes, section numbers ("3.2 Results" or "Results"), parent paths
("Methods > Sampling") and a slip of one letter that cannot be another word
("Rsults", not "Posting" for "Hosting") are all tolerated. A title that names
nothing is reported with the nearest headings, never bound to a neighbour,
and a title that names several sections is reported as ambiguous, with their
paths, and cuts none of them. Line ranges are 1-indexed and inclusive; a
line ends at LF, CRLF or a lone CR.

Every document also has a passage index: its text cut into passages of at
most 2,000 bytes (about 400-500 tokens) at paragraph breaks, then sentence
ends, each named p1, p2, ... A heading starts a passage, so none straddles two
sections. --passage p17 (or a run, p18-p20) cuts passages, which works on a
document with no headings and even on one long line; --passages lists them.

If no pointer matches, or none is given, the whole document is printed and a
warning goes to standard error. Use --outline to see the headings, their
lines and their unique paths ("Globex > Pricing", "Notes (2)"), which any
--section may cite to name one section alone; for a document with no headings
--outline lists its passages instead. With several --doc files, each becomes a top-level section named by
its path, and line numbers refer to the combined text.`

const sliceExample = `  baton slice --doc report.md --section "Results" --section "Methods > Sampling"
  baton slice --doc report.md --lines 40-80 --json
  baton slice --doc report.md --outline
  baton slice --doc transcript.txt --passage p17 --passage p18-p20`

func newSliceCmd() *cobra.Command {
	var (
		docs     []string
		sections []string
		lines    []string
		passages []string
		asJSON   bool
		outline  bool
		listPass bool
	)
	cmd := &cobra.Command{
		Use:     "slice --doc FILE [--section TITLE]... [--lines A-B]... [--passage ID]...",
		Short:   "Cut the sections or lines of a document that a subtask needs",
		Long:    sliceLong,
		Example: sliceExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(docs) == 0 {
				return usageErrorf("slice needs --doc FILE (- for standard input)")
			}
			var ranges [][2]int
			for _, v := range lines {
				r, err := parseLineRange(v)
				if err != nil {
					return usageErrorf("--lines %q: %v", v, err)
				}
				ranges = append(ranges, r)
			}
			src, parts, err := readDocs(cmd.InOrStdin(), docs)
			if err != nil {
				return withCode(exitError, err)
			}
			// Line ranges alone need no markdown parse: the lines are
			// indexed and cut, which is all a --lines request reads.
			var d *slice.Document
			if len(sections) == 0 && len(passages) == 0 && !outline && !listPass {
				d = slice.LinesOnly(src)
			} else {
				if d, err = parseStructure(cmd.Context(), src, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if listPass || (outline && !asJSON && len(d.Outline()) == 0) {
				return printPassages(out, d.Passages(), asJSON)
			}
			if outline {
				return printOutline(out, d.Outline(), asJSON)
			}
			r := d.Extract(slice.Pointers{Sections: sections, LineRanges: ranges, Passages: passages})
			// Every unmatched pointer has its warning among these.
			for _, w := range r.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "baton: warning: %s\n", w)
			}
			if !asJSON {
				_, err := io.WriteString(out, r.Text)
				if err == nil && r.Text != "" && !strings.HasSuffix(r.Text, "\n") {
					_, err = io.WriteString(out, "\n")
				}
				return err
			}
			return writeJSON(out, baton.NewSlice(r, parts))
		},
	}
	f := cmd.Flags()
	// StringArray, not StringSlice: section titles may contain commas.
	f.StringArrayVar(&docs, "doc", nil, "markdown `FILE` to cut from (- for standard input); repeat to combine files")
	f.StringArrayVar(&sections, "section", nil, "section `TITLE` to include; repeatable")
	f.StringArrayVar(&lines, "lines", nil, "line range `A-B` to include (1-indexed, inclusive; a single number is one line); repeatable")
	f.StringArrayVar(&passages, "passage", nil, "passage `ID` to include (p17, or a run such as p18-p20); repeatable")
	f.BoolVar(&listPass, "passages", false, "print the document's passage index (id, bytes, lines, tokens, first words) instead of a slice")
	f.BoolVar(&asJSON, "json", false, "print JSON with the text, its token count and what each pointer matched")
	f.BoolVar(&outline, "outline", false, "print the document's headings with their line spans instead of a slice")
	return cmd
}

// parseStructure is the structure pass with its degradations said on
// stderr: lines nested too deep and headings past the cap, read as text.
func parseStructure(ctx context.Context, src []byte, stderr io.Writer) (*slice.Document, error) {
	d, err := parseMarkdown(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("reading the document's structure: %w", err)
	}
	if n := d.CappedLines(); n > 0 {
		fmt.Fprintf(stderr, "baton: warning: %d lines nest block quotes or list items deeper than %d levels; their deeper part was read as text\n", n, slice.MaxNesting)
	}
	if n := d.HeadingsCut(); n > 0 {
		fmt.Fprintf(stderr, "baton: warning: %d headings past the first %d were read as text, part of the last section\n", n, slice.MaxHeadings)
	}
	return d, nil
}

// parseMarkdown is the structure pass, which Ctrl-C stops; a test
// replaces it to see that --lines alone never parses.
var parseMarkdown = func(ctx context.Context, src []byte) (*slice.Document, error) {
	return slice.ParseContext(ctx, string(src))
}

var lineRangeRe = regexp.MustCompile(`^\s*(\d+)\s*(?:[-:]\s*(\d+)\s*)?$`)

// parseLineRange reads "A-B" (or "A:B", or "A" for one line). Order and
// bounds are left to the assembler, which reports a reversed or
// out-of-document range as unmatched, the same as it would from a plan.
func parseLineRange(v string) ([2]int, error) {
	m := lineRangeRe.FindStringSubmatch(v)
	if m == nil {
		return [2]int{}, fmt.Errorf("want A-B, two line numbers")
	}
	a, err := strconv.Atoi(m[1])
	if err != nil {
		return [2]int{}, fmt.Errorf("line number %s is too large", m[1])
	}
	b := a
	if m[2] != "" {
		if b, err = strconv.Atoi(m[2]); err != nil {
			return [2]int{}, fmt.Errorf("line number %s is too large", m[2])
		}
	}
	return [2]int{a, b}, nil
}

// readDocs reads one document, or combines several so each is a top-level
// section named by its path.
func readDocs(stdin io.Reader, names []string) ([]byte, []slice.Part, error) {
	var nds []slice.NamedDoc
	for _, name := range names {
		var data []byte
		var err error
		if name == "-" {
			data, err = document.ReadStdin(stdin)
		} else {
			data, err = document.ReadFile(name)
		}
		if err != nil {
			return nil, nil, err
		}
		nds = append(nds, slice.NamedDoc{Name: name, Data: data})
	}
	if len(nds) == 1 {
		return nds[0].Data, nil, nil
	}
	src, parts := slice.Combine(nds)
	return src, parts, nil
}

func printOutline(w io.Writer, hs []slice.Heading, asJSON bool) error {
	if asJSON {
		for i := range hs {
			if hs[i].Path == nil {
				hs[i].Path = []string{}
			}
		}
		if hs == nil {
			hs = []slice.Heading{}
		}
		return writeJSON(w, hs)
	}
	width := 1
	if len(hs) > 0 {
		width = len(strconv.Itoa(hs[len(hs)-1].EndLine))
		for _, h := range hs {
			width = max(width, len(strconv.Itoa(h.EndLine)))
		}
	}
	for _, h := range hs {
		span := fmt.Sprintf("%d-%d", h.Line, h.EndLine)
		indent := strings.Repeat("  ", h.Level-1)
		// The unique path follows a nested or repeated title, so two
		// sections called Pricing can be told apart and cited.
		path := ""
		if h.UniquePath != h.Title {
			path = "  [" + h.UniquePath + "]"
		}
		if _, err := fmt.Fprintf(w, "%-*s  %s%s %s%s\n", 2*width+1, span, indent, strings.Repeat("#", h.Level), h.Title, path); err != nil {
			return err
		}
	}
	return nil
}

// printPassages prints the passage index: one line a passage with its
// lines, size and first words, or the slice.Passage objects as JSON.
func printPassages(w io.Writer, ps []slice.Passage, asJSON bool) error {
	if asJSON {
		if ps == nil {
			ps = []slice.Passage{}
		}
		return writeJSON(w, ps)
	}
	for _, p := range ps {
		if _, err := fmt.Fprintf(w, "%s [lines %d-%d, bytes %d-%d, %d tokens]: %s\n", p.ID, p.Line, p.EndLine, p.Start, p.End, p.Tokens, p.Lead); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
