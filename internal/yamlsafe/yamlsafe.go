// Package yamlsafe parses untrusted YAML with bounded time and memory.
//
// baton reads YAML written by people and by models: SKILL.md frontmatter,
// the handoff block an external agent prints, baton.yaml and state.yaml.
// The YAML library (goccy/go-yaml) is correct on ordinary input but not
// defensive:
//
//   - aliases are expanded while decoding, so a 500-byte "billion laughs"
//     document decodes to gigabytes and the process dies out of memory;
//   - some malformed input makes it panic;
//   - its parser is quadratic in the number of keys of one block mapping,
//     in the number of documents and in the nesting depth, so a megabyte
//     of plain "key: value" lines takes half a minute.
//
// Every parse therefore goes through this package, which refuses input
// over a size cap, checks the token stream for nesting, keys per mapping
// and documents before the parser sees it, counts the values aliases
// expand to before anything is decoded, and turns a panic in the library
// into an error. The caps are far above anything a real file needs and far
// below what hurts.
//
// Every error is one line. Refusals are *Error values that carry the line
// (in the data given) and wrap one of the sentinels; the library's own
// syntax errors are turned into *Error wrapping ErrSyntax, so callers that
// number lines differently (frontmatter starts on line 2 of its file) can
// renumber them.
package yamlsafe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// Sentinels callers branch on; every error this package returns wraps one.
var (
	// ErrTooLarge: the input is longer than the size cap.
	ErrTooLarge = errors.New("YAML input too large")
	// ErrAliasBomb: aliases would expand the document past the value cap.
	ErrAliasBomb = errors.New("YAML aliases expand too far")
	// ErrTooComplex: nesting, keys in one mapping or documents exceed
	// what the parser handles in bounded time.
	ErrTooComplex = errors.New("YAML structure too complex")
	// ErrParserPanic: the YAML library panicked on this input.
	ErrParserPanic = errors.New("YAML parser failed")
	// ErrSyntax: the library rejected the input, or could not decode it
	// into the value given.
	ErrSyntax = errors.New("invalid YAML")
)

// Defaults. Real files are a few kilobytes, nest a handful of levels and
// hold tens of keys; each cap is more than a hundred times that, and each
// keeps the parser well under a second on a slow machine.
const (
	DefaultMaxBytes     = 1 << 20
	DefaultMaxValues    = 10_000
	DefaultMaxDepth     = 200
	DefaultMaxKeys      = 2_000
	DefaultMaxDocuments = 100
)

// Limits bounds one parse. A zero field takes its default.
type Limits struct {
	// MaxBytes caps the input's length.
	MaxBytes int
	// MaxValues caps the values aliases add to a document: what it
	// decodes to, each alias counting as the size of its anchor, less
	// the values written out in it.
	MaxValues int
	// MaxDepth caps nesting of mappings and lists, block and flow.
	MaxDepth int
	// MaxKeys caps the keys of one block mapping.
	MaxKeys int
	// MaxDocuments caps the documents in one stream.
	MaxDocuments int
}

// Default is the limits Unmarshal and Parse use.
var Default = Limits{}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxBytes, DefaultMaxBytes)
	def(&l.MaxValues, DefaultMaxValues)
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxKeys, DefaultMaxKeys)
	def(&l.MaxDocuments, DefaultMaxDocuments)
	return l
}

// Error is one refusal or failure. Line is 1-based in the data given, or 0
// when unknown.
type Error struct {
	Line int
	Msg  string
	Kind error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Kind }

// Unmarshal decodes the first document in data into v, as
// yaml.UnmarshalWithOptions does, within the default limits.
func Unmarshal(data []byte, v any, opts ...yaml.DecodeOption) error {
	return Default.Unmarshal(data, v, opts...)
}

// Parse parses data into an AST within the default limits; decode its nodes
// with NodeToValue.
func Parse(data []byte, mode parser.Mode) (*ast.File, error) {
	return Default.Parse(data, mode)
}

// Unmarshal decodes the first document in data into v within l.
func (l Limits) Unmarshal(data []byte, v any, opts ...yaml.DecodeOption) error {
	if _, err := l.Parse(data, 0); err != nil {
		return err
	}
	// The checks passed on the whole stream, so decoding (which parses
	// again, to keep exactly the library's semantics for options and
	// empty documents) is bounded.
	return guard(func() error {
		return yaml.NewDecoder(bytes.NewReader(data), opts...).Decode(v)
	}, true)
}

// Parse parses data into an AST within l. Every alias in the result is
// known to add at most l.MaxValues values when expanded.
func (l Limits) Parse(data []byte, mode parser.Mode) (f *ast.File, err error) {
	l = l.withDefaults()
	if len(data) > l.MaxBytes {
		return nil, &Error{Kind: ErrTooLarge, Msg: fmt.Sprintf("the YAML is %d bytes; at most %d are accepted", len(data), l.MaxBytes)}
	}
	err = guard(func() error {
		tokens := lexer.Tokenize(string(data))
		if err := l.checkTokens(tokens); err != nil {
			return err
		}
		var perr error
		f, perr = parser.Parse(tokens, mode)
		return perr
	}, false)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Docs {
		if d == nil {
			continue
		}
		if aliasGrowth(d.Body, l.MaxValues) > l.MaxValues {
			return nil, &Error{Kind: ErrAliasBomb, Msg: fmt.Sprintf("its aliases expand to more than %d values", l.MaxValues)}
		}
	}
	return f, nil
}

// NodeToValue decodes one node of a tree Parse returned. A panic in the
// library becomes an ErrParserPanic error.
func NodeToValue(n ast.Node, v any, opts ...yaml.DecodeOption) error {
	return guard(func() error { return yaml.NodeToValue(n, v, opts...) }, true)
}

// guard runs fn, turning a panic into ErrParserPanic and the library's
// errors into one-line *Error values. io.EOF (no document) is not an error
// when decoding.
func guard(fn func() error, decoding bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Kind: ErrParserPanic, Msg: fmt.Sprintf("%s: %s", ErrParserPanic, oneLine(fmt.Sprint(r)))}
		}
	}()
	err = fn()
	if err == nil {
		return nil
	}
	if decoding && err == io.EOF {
		return nil
	}
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	return syntaxError(err)
}

// syntaxError turns the library's multi-line error (with a source excerpt)
// into one line with the line number.
func syntaxError(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &Error{Kind: ErrSyntax, Msg: oneLine(ye.GetMessage())}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.Line = tk.Position.Line
		}
		return e
	}
	return &Error{Kind: ErrSyntax, Msg: oneLine(err.Error())}
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}
