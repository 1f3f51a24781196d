// Package testcache keeps what tests leave in the user's cache folder — the
// lock files filelock takes there — in a folder of the test binary's own.
// Child processes a test starts inherit it, so they contend for the same
// locks as the test; go build's own cache stays where it was.
package testcache

import (
	"os"
	"path/filepath"
)

// envOwner marks that a parent test process already chose the folder.
const envOwner = "BATON_TEST_CACHE"

// Isolate points XDG_CACHE_HOME at a fresh temporary folder, unless a parent
// test process already did, and returns what removes it. Call it first in
// TestMain and run the returned function after m.Run.
func Isolate() (cleanup func()) {
	if os.Getenv(envOwner) != "" {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "baton-test-cache-")
	if err != nil {
		return func() {}
	}
	// go build (run by some tests) finds its cache through XDG_CACHE_HOME
	// too: it is pinned where it was, or every build starts cold.
	if os.Getenv("GOCACHE") == "" {
		if c, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(c, "go-build"))
		}
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv(envOwner, dir)
	return func() { os.RemoveAll(dir) }
}
