package writepolicy

import (
	"errors"
	"fmt"
)

// A path a tool names is refused at once when it is longer than
// MaxPathBytes or deeper than MaxPathDepth segments. No real file needs
// more (Linux's own PATH_MAX is 4,096 bytes), and the bound keeps what a
// hostile model can make one check cost small: a path is walked segment by
// segment, and a user's protect: patterns are matched at every depth.
const (
	MaxPathBytes = 4096
	MaxPathDepth = 64
)

// ErrPathTooLong is wrapped by the refusal of a path over MaxPathBytes or
// MaxPathDepth, as given or once symlinks are followed.
var ErrPathTooLong = errors.New("path too long")

// CheckLimits refuses rel when it is longer than MaxPathBytes or has more
// than MaxPathDepth segments (split at "/" and "\", "." and empty ones not
// counted). The error is one line naming the limits, and quotes only the
// head of rel.
func CheckLimits(rel string) error {
	if len(rel) > MaxPathBytes {
		return limitErr(rel, fmt.Sprintf("is %d bytes long", len(rel)))
	}
	if d := depth(rel); d > MaxPathDepth {
		return limitErr(rel, fmt.Sprintf("is %d segments deep", d))
	}
	return nil
}

func limitErr(rel, what string) error {
	return fmt.Errorf("path %s %s: %w (baton takes paths of at most %d segments and %d bytes)", head(rel), what, ErrPathTooLong, MaxPathDepth, MaxPathBytes)
}

// head quotes the first bytes of a path, so that a refusal stays one short
// line whatever it was given.
func head(p string) string {
	const n = 40
	if len(p) <= n {
		return fmt.Sprintf("%q", p)
	}
	cut := n
	for cut > 0 && p[cut]&0xc0 == 0x80 {
		cut-- // not inside a UTF-8 sequence
	}
	return fmt.Sprintf("%q…", p[:cut])
}

// depth counts rel's segments as Key splits them, without building them.
func depth(rel string) int {
	n := 0
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' && rel[i] != '\\' {
			continue
		}
		if s := rel[start:i]; s != "" && s != "." {
			n++
		}
		start = i + 1
	}
	return n
}
