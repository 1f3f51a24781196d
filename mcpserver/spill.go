package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
)

// DefaultMaxResultBytes bounds the text a tool returns inline: about 15k
// tokens of prose, well under the 25k-token output cap common hosts enforce.
// A larger text is written to a file under the root and the result says
// where, so that a host's context never takes a whole document by accident.
const DefaultMaxResultBytes = 60 << 10

// SpillDir is where spilled results go, relative to the root.
const SpillDir = ".baton/mcp"

// Spill says where a result too large to return inline was written.
type Spill struct {
	Path   string `json:"path"` // relative to the server's root
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
	Note   string `json:"note"`
}

// spill returns text unchanged when it fits the bound, and otherwise writes
// it under SpillDir (named by its content, so the same result is one file)
// and returns "" with the Spill that says where.
func (s *Server) spill(tool, text string, tokens int) (string, *Spill, error) {
	if len(text) <= s.maxResult {
		return text, nil, nil
	}
	sum := sha256.Sum256([]byte(text))
	name := path.Join(SpillDir, fmt.Sprintf("%s-%s.md", tool, hex.EncodeToString(sum[:6])))
	if err := s.root.MkdirAll(SpillDir, 0o755); err != nil {
		return "", nil, fmt.Errorf("writing the %s result (%d bytes, over the %d-byte bound) under %s: %w", tool, len(text), s.maxResult, SpillDir, plainPathErr(err))
	}
	if err := s.root.WriteFile(name, []byte(text), 0o644); err != nil {
		return "", nil, fmt.Errorf("writing the %s result to %s: %w", tool, name, plainPathErr(err))
	}
	return "", &Spill{Path: name, Bytes: len(text), Tokens: tokens,
		Note: fmt.Sprintf("the text is %d bytes (%d tokens), over the %d-byte bound for a result; it was written to %s: cut a smaller part (sections, line ranges) or read the file in pieces", len(text), tokens, s.maxResult, name)}, nil
}
