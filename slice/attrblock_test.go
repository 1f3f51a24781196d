package slice

import (
	"strings"
	"testing"
)

// rfcStyle is how RFC sources (kramdown-rfc), pandoc, MkDocs attr_list
// and Hugo write headings: a trailing attribute block with the anchor.
const rfcStyle = `# QUIC Transport {#quic}

Intro.

## Flow Control {#flow-control}

How flow control works.

### Increasing Flow Control Limits {#fc-credit}

Send MAX_DATA frames.

### Flow Control Performance {#fc-perf .informative}

Performance notes.

## Setext With Block {#setext}
---------------------------------

Last.
`

// A heading with an attribute block is found by its title, by the title
// with the block as copied from the source, and by its id; it never falls
// back to the whole document.
func TestAttributeBlockHeadings(t *testing.T) {
	d := ParseString(rfcStyle)
	lines := strings.Split(rfcStyle, "\n")
	for _, ptr := range []string{
		"Increasing Flow Control Limits",
		"Increasing Flow Control Limits {#fc-credit}",
		"### Increasing Flow Control Limits {#fc-credit}",
		"{#fc-credit}",
		"#fc-credit",
		"fc-credit",
		"Flow Control > Increasing Flow Control Limits",
	} {
		r := d.Extract(Pointers{Sections: []string{ptr}})
		if r.Fallback || len(r.Matched) != 1 {
			t.Errorf("%q: fallback %v, matches %+v, warnings %q", ptr, r.Fallback, r.Matched, r.Warnings)
			continue
		}
		m := r.Matched[0]
		if m.Heading != "Increasing Flow Control Limits" || m.StartLine != 9 || m.EndLine != 12 {
			t.Errorf("%q matched %q lines %d-%d, want Increasing Flow Control Limits lines 9-12", ptr, m.Heading, m.StartLine, m.EndLine)
		}
		if !strings.Contains(r.Text, "Send MAX_DATA") || strings.Contains(r.Text, "Performance notes") {
			t.Errorf("%q cut %q", ptr, r.Text)
		}
	}
	for i, h := range d.headings {
		if strings.Contains(h.Title, "{") {
			t.Errorf("heading %d keeps its attribute block in its title: %q (line %q)", i, h.Title, lines[h.Line-1])
		}
	}
	if h := d.headings[3]; h.ID != "fc-perf" || h.Title != "Flow Control Performance" {
		t.Errorf("heading with classes: id %q title %q", h.ID, h.Title)
	}
	if h := d.headings[4]; h.Title != "Setext With Block" || h.ID != "setext" {
		t.Errorf("setext heading with a block: id %q title %q", h.ID, h.Title)
	}
	// An id that names nothing is a miss like any other pointer.
	if r := d.Extract(Pointers{Sections: []string{"#no-such-id"}}); !r.Fallback {
		t.Errorf("an unknown id matched: %+v", r.Matched)
	}
}
