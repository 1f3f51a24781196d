package runid

import (
	"errors"
	"fmt"
	"regexp"
)

// ErrBad is wrapped when a run id is not one baton could have made.
var ErrBad = errors.New("not a baton run id")

// pattern is the alphabet of run ids. New makes 20060102T150405Z-1a2b3c4d
// (earlier batons made six hex digits, not eight, and those runs still
// resume); the pattern is a little looser so that ids made by hand or by a
// later baton still work, but it holds no separator, no dot and nothing a
// shell or a path would read specially: an id is joined into paths under
// .baton/runs/.
var pattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Check returns an error wrapping ErrBad unless id is made of letters,
// digits, "-" and "_" (at most 64): a run id that could name a path outside
// .baton/runs/ is never joined into one. Every entry point that takes a run
// id from a user, a file or a client checks it here.
func Check(id string) error {
	if !pattern.MatchString(id) {
		return fmt.Errorf("run id %q: %w", id, ErrBad)
	}
	return nil
}
