package workspace

import (
	"strings"

	"github.com/baton-dev/baton/internal/writepolicy"
)

// keyPath is a location in the form the rules compare paths in (see key),
// built one segment at a time as a walk goes: each segment is keyed once,
// when the walk reaches it, and ".." drops the last one. A walk over a
// path of n segments therefore keys n segments, not every prefix again.
type keyPath struct {
	buf  []byte // the segments' keys joined by "/"
	ends []int  // ends[i] is len(buf) once segment i was added
	last string // the key of the last segment added
}

// push adds raw, one segment as named on disk, and returns its key.
func (k *keyPath) push(raw string) string {
	seg := writepolicy.Segment(raw)
	if len(k.ends) > 0 {
		k.buf = append(k.buf, '/')
	}
	k.buf = append(k.buf, seg...)
	k.ends = append(k.ends, len(k.buf))
	k.last = seg
	return seg
}

// pop drops the last segment.
func (k *keyPath) pop() {
	k.ends = k.ends[:len(k.ends)-1]
	end := 0
	if n := len(k.ends); n > 0 {
		end = k.ends[n-1]
	}
	k.buf = k.buf[:end]
	k.last = ""
}

// reset empties k: the walk starts again at the root.
func (k *keyPath) reset() { k.buf, k.ends, k.last = k.buf[:0], k.ends[:0], "" }

func (k *keyPath) depth() int { return len(k.ends) }

func (k *keyPath) String() string { return string(k.buf) }

// pattern is one protect: glob, compiled: its text as key gives it, and
// the number of segments a path it matches has when that number is fixed
// (no "**", no {a,b} group that may hold a "/"), else -1. A pattern of a
// fixed depth is matched only against the one prefix of that depth, which
// is what keeps checking every prefix of a deep path cheap.
type pattern struct {
	glob  string
	depth int
}

func newPattern(glob string) pattern {
	p := pattern{glob: glob, depth: -1}
	if !strings.Contains(glob, "**") && !strings.ContainsAny(glob, "{") {
		p.depth = strings.Count(glob, "/") + 1
	}
	return p
}

// applies reports whether p can match a path of depth segments.
func (p pattern) applies(depth int) bool { return p.depth < 0 || p.depth == depth }
