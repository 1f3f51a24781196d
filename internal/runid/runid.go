// Package runid makes the ids of baton's runs, one format for `baton ask`
// and `baton run`: the start time in UTC to the second, then eight hex
// digits of randomness (20261201T134500Z-1a2b3c4d). Ids sort by start
// time, and two runs started in the same second (parallel CI jobs, say)
// collide with odds of one in four billion.
package runid

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// randomBytes is how much randomness follows the time.
const randomBytes = 4

// New returns a fresh run id for a run started at t.
func New(t time.Time) string {
	var b [randomBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
