// Package state reads and edits state.yaml, the cockpit through which
// decisions travel between skill steps that each start in a fresh context.
//
// A user's own keys, comments, key order, blank lines and quoting must
// survive every write, so the file is never decoded and re-encoded. Instead
// an edit finds the byte span of the one value it changes (or the end of the
// mapping a new key joins) in goccy/go-yaml's AST and splices freshly encoded
// text into the original bytes. Every edit is then proved: the result must
// parse, and decoding it must give exactly the old document with only the
// edited value changed. An edit that fails the proof is refused and nothing
// changes.
//
// The keys baton owns:
//
//	handoff:
//	  next_skill, last_step_completed, open_decisions, required_reading, context
//	  decisions: [{decision, evidence, skill, at}]   # appended by AddDecision
//	<flow>_cycle:                                    # e.g. epic_cycle
//	  current_step, next_skill, completed_steps
//	metrics:
//	  skill_timings:
//	    <skill>:
//	      calls, total_seconds, avg_seconds,
//	      input_tokens, output_tokens,
//	      cache_read_input_tokens, cache_creation_input_tokens
//
// Owned values keep the shape the file gives them: completed_steps may be a
// list or one comma-separated string (it grows as what it is), and a
// last_step_completed kept as a multi-line summary gets the step's summary
// in the same block style rather than a bare skill name (see Record).
//
// Decisions live under handoff because the handoff is what the next step is
// told to read first; a decision recorded elsewhere would be missed.
//
// Where the file's shape leaves no lossless edit, the choice is stated
// rather than hidden: an owned parent written in flow style (handoff: {…})
// is rewritten in block style with any user keys in it kept, in order, but
// re-rendered; a list in flow style that baton appends to is rewritten the
// same way; a top-level flow mapping other than "{}" is refused; an edit
// that would break an alias the user points at an owned value is refused.
//
// Writers are serialised by flock on <path>.lock (left in place; see
// Lock). Update is the one call a runner needs: lock, load fresh, edit,
// save atomically, unlock.
package state

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-dev/baton/internal/yamlsafe"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Errors callers branch on. Every error returned by this package wraps one of
// these, ErrInvalid (a bad argument to a cockpit helper), a lock error or an
// I/O error, and reads as one line that names the file.
var (
	// ErrMalformed: the bytes are not a single well-formed YAML document.
	ErrMalformed = errors.New("malformed YAML")
	// ErrNotMapping: the document parses but its top level is not a mapping.
	ErrNotMapping = errors.New("top level is not a mapping")
	// ErrUnsafeEdit: an edit could not be made without disturbing content
	// baton does not own, so it was refused and nothing changed.
	ErrUnsafeEdit = errors.New("edit refused")
	// ErrNoPath: Save was called on a File that has no path.
	ErrNoPath = errors.New("no file path")
)

// MaxSize bounds the state files this package reads. A state file is a few
// kilobytes; anything near this is a mistake, and refusing it keeps a
// pathological file from exhausting memory in the YAML library.
const MaxSize = 4 << 20

// maxValues bounds the decoded size of a document, aliases expanded
// (counted by yamlsafe.ExpandedSize before anything is decoded).
const maxValues = 100_000

// File is one state.yaml held as its original bytes. It is not safe for
// concurrent use; use Update to serialise writers across goroutines and
// processes.
type File struct {
	path string
	data []byte
	doc  *document
	mode fs.FileMode
}

// document is everything derived from one version of the bytes.
type document struct {
	lines  lineIndex
	root   *ast.MappingNode // nil when the document holds no content
	end    *token.Token     // the "..." marker, if any
	tree   map[string]any   // decoded content, for reads and for proofs
	indent int              // indentation step the file uses
}

// Load reads path. A missing file is an empty document that Save creates;
// that is how a first run starts.
func Load(path string) (*File, error) {
	root, name, err := openFolder(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Parse(nil, path) // the folder is missing too
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, mode, err := readIn(root, name, path)
	if errors.Is(err, fs.ErrNotExist) {
		return Parse(nil, path)
	}
	if err != nil {
		return nil, err
	}
	f, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	f.mode = mode
	return f, nil
}

// Parse reads data as a state file; path names it in errors and is where
// Save writes.
func Parse(data []byte, path string) (*File, error) {
	doc, err := parseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", path, err)
	}
	return &File{path: path, data: bytes.Clone(data), doc: doc, mode: 0o644}, nil
}

// Path is where Save writes.
func (f *File) Path() string { return f.path }

// Bytes returns the current content. The caller must not modify it.
func (f *File) Bytes() []byte { return f.data }

// Get returns a copy of the decoded value at path (keys from the top level
// down) and whether it exists. Mappings are map[string]any, lists []any,
// integers int64 or uint64, other numbers float64.
func (f *File) Get(path ...string) (any, bool) {
	var cur any = f.doc.tree
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cloneValue(cur), true
}

// Save writes the file atomically, keeping the mode of the file it was
// loaded from. If path is a symbolic link to a file in the same folder, the
// link's target is replaced, so a user who links state.yaml to a sibling
// keeps the link; a link leading out of the folder is refused.
func (f *File) Save() error {
	if f.path == "" {
		return fmt.Errorf("state: save: %w", ErrNoPath)
	}
	return writeIn(f.path, f.data, f.mode)
}

// parseDocument parses and decodes data, returning one-line errors.
func parseDocument(data []byte) (*document, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: file is larger than %d bytes", ErrMalformed, MaxSize)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	// goccy/go-yaml counts "\r\n" as two lines; parse with plain line feeds
	// so its line numbers match ours. A lone carriage return is a line
	// break to YAML but not to us, so it is refused rather than misplaced.
	norm := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	if i := bytes.IndexByte(norm, '\r'); i >= 0 {
		line := bytes.Count(norm[:i], []byte("\n")) + 1
		return nil, fmt.Errorf("%w: line %d: carriage return without a line feed", ErrMalformed, line)
	}
	if bytes.IndexByte(norm, 0) >= 0 {
		return nil, fmt.Errorf("%w: contains a NUL byte", ErrMalformed)
	}
	// The YAML library is third-party code fed user input: yamlsafe bounds
	// the parse and turns a panic inside it into an error.
	af, err := yamlsafe.Limits{MaxBytes: MaxSize, MaxValues: maxValues}.Parse(norm, parser.ParseComments)
	if err != nil {
		return nil, yamlError(err)
	}
	doc := &document{lines: newLineIndex(data), tree: map[string]any{}}
	// A directive ("%YAML 1.2") comes back as a document of its own, and a
	// final "---" with nothing after it as an empty one; neither is a
	// second document in any sense a user would recognise.
	var docs []*ast.DocumentNode
	for _, d := range af.Docs {
		if d == nil {
			continue
		}
		if _, directive := d.Body.(*ast.DirectiveNode); !directive {
			docs = append(docs, d)
		}
	}
	for len(docs) > 1 && isEmptyBody(docs[len(docs)-1].Body) {
		docs = docs[:len(docs)-1]
	}
	if len(docs) > 1 {
		return nil, fmt.Errorf("%w: more than one YAML document", ErrMalformed)
	}
	var body ast.Node
	if len(docs) == 1 {
		body = docs[0].Body
		doc.end = docs[0].End
	}
	switch b := body.(type) {
	case nil, *ast.CommentGroupNode:
	case *ast.MappingNode:
		doc.root = b
	default:
		return nil, fmt.Errorf("%w (it is %s)", ErrNotMapping, describe(b))
	}
	if doc.root != nil {
		// Aliases can make a small file decode to an enormous value (the
		// "billion laughs"); count before decoding.
		if n := yamlsafe.ExpandedSize(doc.root, maxValues); n > maxValues {
			return nil, fmt.Errorf("%w: its aliases expand to more than %d values", ErrMalformed, maxValues)
		}
		var v any
		// Decode the tree already parsed; parsing the bytes a second time
		// doubled the cost of every edit.
		if err := yamlsafe.NodeToValue(doc.root, &v); err != nil {
			return nil, yamlError(err)
		}
		m, ok := normalise(v).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w (it decodes to %T)", ErrNotMapping, v)
		}
		doc.tree = m
	}
	doc.indent = doc.lines.indentStep()
	return doc, nil
}

// yamlError turns yamlsafe's error into ErrMalformed with the line
// number.
func yamlError(err error) error {
	var ye *yamlsafe.Error
	if errors.As(err, &ye) && ye.Line > 0 {
		return fmt.Errorf("%w: line %d: %s", ErrMalformed, ye.Line, oneLine(ye.Msg))
	}
	return fmt.Errorf("%w: %s", ErrMalformed, oneLine(err.Error()))
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}

func isEmptyBody(n ast.Node) bool {
	switch n.(type) {
	case nil, *ast.CommentGroupNode:
		return true
	}
	return false
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.SequenceNode:
		return "a list"
	case *ast.AnchorNode, *ast.TagNode, *ast.AliasNode:
		return "an anchored, tagged or aliased node; state.yaml must be a plain mapping"
	}
	return "a single value"
}

// normalise makes decoded values comparable: mapping keys become strings
// whatever type the decoder gave them.
func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalise(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalise(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalise(e)
		}
		return x
	}
	return v
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		s := slices.Clone(x)
		for i, e := range s {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}

// lineIndex maps 1-based line numbers to byte offsets in the original bytes
// (line feeds separate lines; a carriage return before one belongs to the
// terminator).
type lineIndex struct {
	data   []byte
	starts []int
}

func newLineIndex(data []byte) lineIndex {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{data: data, starts: starts}
}

// count is the number of lines; a final line feed does not start a line.
func (l lineIndex) count() int {
	n := len(l.starts)
	if l.starts[n-1] == len(l.data) {
		n--
	}
	return n
}

func (l lineIndex) start(line int) int { return l.starts[line-1] }

// end is the offset just past the line's terminator.
func (l lineIndex) end(line int) int {
	if line < len(l.starts) {
		return l.starts[line]
	}
	return len(l.data)
}

// text is the line without its terminator.
func (l lineIndex) text(line int) string {
	s := string(l.data[l.start(line):l.end(line)])
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

func (l lineIndex) terminated(line int) bool {
	e := l.end(line)
	return e > 0 && l.data[e-1] == '\n'
}

// eol is the file's line ending, so new lines match the old ones.
func (l lineIndex) eol() string {
	crlf := bytes.Count(l.data, []byte("\r\n"))
	if crlf > 0 && crlf*2 >= bytes.Count(l.data, []byte("\n")) {
		return "\r\n"
	}
	return "\n"
}

// indentStep is the smallest indentation the file uses, so that keys baton
// adds look like the user's; two spaces when nothing is indented.
func (l lineIndex) indentStep() int {
	step := 0
	for i := 1; i <= l.count(); i++ {
		t := l.text(i)
		trimmed := strings.TrimLeft(t, " ")
		ind := len(t) - len(trimmed)
		if ind == 0 || trimmed == "" || trimmed[0] == '#' || trimmed[0] == '-' {
			continue
		}
		if step == 0 || ind < step {
			step = ind
		}
	}
	if step == 0 || step > 8 {
		return 2
	}
	return step
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// byteCol converts the library's 1-based rune column into a byte offset in
// line.
func byteCol(line string, col int) int {
	n := 1
	for i := range line {
		if n == col {
			return i
		}
		n++
	}
	return len(line)
}
