package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"

	"github.com/baton-dev/baton/internal/batondir"
)

// DefaultMaxResultBytes bounds a tool result as it goes over the wire:
// about 15k tokens, well under the 25k-token output cap common hosts
// enforce. A text that would take a result past it is written to a file
// under the root and the result says where, so that a host's context
// never takes a whole document by accident.
const DefaultMaxResultBytes = 60 << 10

// MinResultBytes is the smallest bound a server takes: room for the
// reserve beside a text and for a result that says where a spilled text
// went.
const MinResultBytes = 2 * reserve

// SpillDir is where spilled results go, relative to the root.
const SpillDir = batondir.Name + "/" + batondir.MCPName

// reserve is what a result's other fields (matches, counts, the
// envelope) are allowed beside its text before the text is spilled; the
// bound middleware (bound.go) catches a result whose other fields are
// larger still.
const reserve = 4 << 10

// Spill says where a result too large to return inline was written.
type Spill struct {
	Path   string `json:"path"` // relative to the server's root
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
	Note   string `json:"note"`
}

// wireBytes is what text takes in a tool result: once as a JSON string
// in structuredContent, and once more inside the text mirror of that JSON,
// escaped a second time.
func wireBytes(text string) int {
	once, _ := json.Marshal(text)
	twice, _ := json.Marshal(string(once))
	return len(once) + len(twice)
}

// spill returns text unchanged when a result holding it fits the bound,
// and otherwise writes it under SpillDir (named by its content, so the
// same result is one file) and returns "" with the Spill that says where.
func (s *Server) spill(tool, text string, tokens int) (string, *Spill, error) {
	if wireBytes(text)+reserve <= s.maxResult {
		return text, nil, nil
	}
	return s.spillText(tool, text, tokens)
}

// fits reports whether a tool result carrying out stays within the bound:
// out once as structuredContent and once as its JSON text mirror.
func (s *Server) fits(out any) bool {
	once, err := json.Marshal(out)
	if err != nil {
		return false
	}
	twice, _ := json.Marshal(string(once))
	return len(once)+len(twice)+512 <= s.maxResult
}

// spillText writes text under SpillDir and returns the Spill saying where.
func (s *Server) spillText(tool, text string, tokens int) (string, *Spill, error) {
	name, err := s.writeSpill(tool, "md", []byte(text))
	if err != nil {
		return "", nil, err
	}
	return "", &Spill{Path: name, Bytes: len(text), Tokens: tokens,
		Note: fmt.Sprintf("the text is %d bytes (%d tokens), too large for a result bounded at %d bytes; it was written to %s: cut a smaller part (sections, line ranges) or read the file in pieces", len(text), tokens, s.maxResult, name)}, nil
}

// writeSpill writes data to SpillDir/<tool>-<hash>.<ext> under the root
// and returns that path.
func (s *Server) writeSpill(tool, ext string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	name := path.Join(SpillDir, fmt.Sprintf("%s-%s.%s", tool, hex.EncodeToString(sum[:6]), ext))
	if err := s.root.MkdirAll(SpillDir, 0o755); err != nil {
		return "", fmt.Errorf("writing the %s result (%d bytes, over the %d-byte bound) under %s: %w", tool, len(data), s.maxResult, SpillDir, plainPathErr(err))
	}
	if err := s.root.WriteFile(name, data, 0o644); err != nil {
		return "", fmt.Errorf("writing the %s result to %s: %w", tool, name, plainPathErr(err))
	}
	return name, nil
}
