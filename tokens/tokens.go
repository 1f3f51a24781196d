// Package tokens counts tokens the way baton's accounting needs: one counter
// for every prompt in a run, so that "naive" and "orchestrated" figures are
// measured with the same ruler. Encodings are embedded in the tokenizer
// library; nothing is downloaded at run time.
//
// A local count is an estimate of what a provider will bill (providers use
// their own tokenizers). Run records therefore keep provider-reported usage
// and local counts in separate, clearly named fields, and Calibration relates
// the two.
package tokens

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// Encoding names a tokenizer encoding.
type Encoding string

const (
	O200kBase  Encoding = "o200k_base"
	Cl100kBase Encoding = "cl100k_base"
)

// DefaultEncoding is used when the model gives no better hint. o200k_base is
// the encoding of current OpenAI models; for other providers it is a
// reasonable, stable proxy.
const DefaultEncoding = O200kBase

// Counter counts tokens with one encoding. It is safe for concurrent use.
type Counter struct {
	enc   Encoding
	codec *codec.Codec
	meter *atomic.Int64 // nil, or where Metered counts bytes tokenized
	memo  *preMemo      // nil for an encoding splitASCII does not know
	// ctx, when set (IndexedContext's counter), ends the count of a long
	// pre-token early once it is done; the count is then discarded.
	ctx context.Context
}

var (
	mu       sync.Mutex
	counters = map[Encoding]*Counter{}
)

// New returns the counter for enc. Counters are cached: loading an encoding's
// vocabulary is the expensive part.
func New(enc Encoding) (*Counter, error) {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := counters[enc]; ok {
		return c, nil
	}
	cd, err := tokenizer.Get(tokenizer.Encoding(enc))
	if err != nil {
		return nil, fmt.Errorf("tokens: encoding %q: %w", enc, err)
	}
	cc, ok := cd.(*codec.Codec)
	if !ok {
		return nil, fmt.Errorf("tokens: encoding %q: unexpected codec type %T", enc, cd)
	}
	// Documents are user input and may hold invalid UTF-8; count it the way
	// a provider would see it after replacement rather than failing.
	cc.SetErrorMode(codec.ErrorModeReplace)
	c := &Counter{enc: enc, codec: cc}
	if enc == O200kBase || enc == Cl100kBase {
		c.memo = &preMemo{n: map[string]int32{}}
	}
	counters[enc] = c
	return c, nil
}

// Default returns the counter for DefaultEncoding. It panics only if the
// embedded encoding is missing, which is a build defect, not user input.
func Default() *Counter {
	c, err := New(DefaultEncoding)
	if err != nil {
		panic(err)
	}
	return c
}

// ForModel picks the counter that best matches a model name.
func ForModel(model string) *Counter {
	m := strings.ToLower(model)
	enc := DefaultEncoding
	switch {
	case strings.HasPrefix(m, "gpt-4-"), m == "gpt-4", strings.HasPrefix(m, "gpt-3.5"):
		enc = Cl100kBase
	}
	c, err := New(enc)
	if err != nil {
		return Default()
	}
	return c
}

// Metered returns a counter that counts as c does and adds the size in
// bytes of every text it tokenizes to *n. Bytes over a text's size say how
// many times it was read: a run that tokenizes its context once shows n
// close to the context's size.
func (c *Counter) Metered(n *atomic.Int64) *Counter {
	return &Counter{enc: c.enc, codec: c.codec, meter: n, memo: c.memo}
}

// Encoding reports the encoding c counts with.
func (c *Counter) Encoding() Encoding { return c.enc }

// Count returns the number of tokens in s. A long text is counted in pieces
// cut at clean breaks (see stream.go), so memory stays bounded by the piece,
// not the text, and the count is the same.
func (c *Counter) Count(s string) int { return c.countJoined(s) }

// CountJoined returns Count of the concatenation of parts, without building
// it.
func (c *Counter) CountJoined(parts ...string) int { return c.countJoined(parts...) }

// Count counts s with the default counter.
func Count(s string) int { return Default().Count(s) }
