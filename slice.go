package baton

import (
	"github.com/baton-dev/baton/slice"
	"github.com/baton-dev/baton/tokens"
)

// Slice is one cut of a document in its public JSON form: what
// `baton slice --json` prints and the MCP slice tool returns. Matched,
// Unmatched, Misses and Warnings are always arrays, so consumers need not
// tell null from empty.
type Slice struct {
	Text      string        `json:"text"`
	Tokens    int           `json:"tokens"`
	Matched   []slice.Match `json:"matched"`
	Unmatched []string      `json:"unmatched"`
	Fallback  bool          `json:"fallback"`
	Warnings  []string      `json:"warnings"`
	// Files locates each document when several were combined.
	Files []slice.Part `json:"files,omitempty"`
	// Misses says why each unmatched pointer matched nothing: ambiguous
	// (with the sections it could mean) or not found (with the nearest
	// headings).
	Misses []slice.Miss `json:"misses"`
}

// NewSlice is the JSON form of an extract; files are the documents'
// parts when several were combined (nil for one).
func NewSlice(r slice.Result, files []slice.Part) Slice {
	s := Slice{Text: r.Text, Tokens: tokens.Count(r.Text), Matched: r.Matched, Unmatched: r.Unmatched,
		Fallback: r.Fallback, Warnings: r.Warnings, Files: files, Misses: r.Misses}
	if s.Matched == nil {
		s.Matched = []slice.Match{}
	}
	if s.Unmatched == nil {
		s.Unmatched = []string{}
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	if s.Misses == nil {
		s.Misses = []slice.Miss{}
	}
	return s
}
