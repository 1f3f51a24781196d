package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"time"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/batondir"
	"github.com/baton-dev/baton/internal/spill"
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

// Bounds on SpillDir, the defaults of Config.SpillMaxAge, SpillMaxBytes
// and SpillMaxFiles. A spilled result is for the call that made it; a day
// is long enough for a host to read it, and the folder never grows past a
// few hundred MiB however many calls are made.
const (
	DefaultSpillMaxAge   = 24 * time.Hour
	DefaultSpillMaxBytes = 256 << 20
	DefaultSpillMaxFiles = 1000
)

// spillLimits are cfg's bounds on SpillDir: 0 the default, negative none.
func spillLimits(cfg Config) spill.Limits {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return spill.Limits{
		MaxAge:   time.Duration(pick(int64(cfg.SpillMaxAge), int64(DefaultSpillMaxAge))),
		MaxBytes: pick(cfg.SpillMaxBytes, DefaultSpillMaxBytes),
		MaxFiles: int(pick(int64(cfg.SpillMaxFiles), DefaultSpillMaxFiles)),
	}
}

// spillName matches the files writeSpill names, and only them: pruning
// removes nothing else from the folder.
var spillName = regexp.MustCompile(`^[a-z0-9_-]{1,64}-[0-9a-f]{12}\.(md|json)$`)

// ErrSpillSymlink is a spill refused because its folder is a symlink.
var ErrSpillSymlink = errors.New("the spill folder is a symlink")

// writeSpill writes data to SpillDir/<tool>-<hash>.<ext> under the root,
// atomically, and returns that path. Then it prunes the folder to its
// bounds (spill.Prune), never removing the file just written: a spill
// larger than SpillMaxBytes by itself is still written, so nothing is
// lost, and it is the next spill that removes it. Pruning is best effort:
// the result is saved either way.
func (s *Server) writeSpill(tool, ext string, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	base := fmt.Sprintf("%s-%s.%s", tool, hex.EncodeToString(sum[:6]), ext)
	name := path.Join(SpillDir, base)
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	dir, err := s.openSpillDir()
	if err != nil {
		return "", fmt.Errorf("writing the %s result (%d bytes, over the %d-byte bound) under %s: %w", tool, len(data), s.maxResult, SpillDir, err)
	}
	defer dir.Close()
	// Written beside and renamed over: a symlink of that name is
	// replaced, never written through.
	if err := atomicfile.WriteIn(dir, base, data, 0o644); err != nil {
		return "", fmt.Errorf("writing the %s result to %s: %w", tool, name, plainPathErr(err))
	}
	_, _ = spill.Prune(dir, base, s.spillLimits, time.Now(), spillName.MatchString)
	return name, nil
}

// openSpillDir makes SpillDir under the root and opens it, refusing it
// when it or .baton is a symlink: a spill is not written, nor a folder
// pruned, anywhere but in the server's own folder.
func (s *Server) openSpillDir() (*os.Root, error) {
	if err := s.root.MkdirAll(SpillDir, 0o755); err != nil {
		if err := s.spillSymlink(); err != nil {
			return nil, err
		}
		return nil, plainPathErr(err)
	}
	if err := s.spillSymlink(); err != nil {
		return nil, err
	}
	info, err := s.root.Lstat(SpillDir)
	if err != nil {
		return nil, plainPathErr(err)
	}
	dir, err := s.root.OpenRoot(SpillDir)
	if err != nil {
		return nil, plainPathErr(err)
	}
	// The folder opened is the one looked at, not one swapped in since.
	if opened, err := dir.Stat("."); err != nil || !os.SameFile(info, opened) {
		dir.Close()
		return nil, fmt.Errorf("%s changed while being opened", SpillDir)
	}
	return dir, nil
}

// spillSymlink is ErrSpillSymlink when .baton or SpillDir is a symlink.
func (s *Server) spillSymlink() error {
	for _, p := range []string{batondir.Name, SpillDir} {
		if info, err := s.root.Lstat(p); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s; baton writes no spill through one", ErrSpillSymlink, p)
		}
	}
	return nil
}
