package ledger

import (
	"os"
	"testing"
)

// TestMain keeps the lock files the tests take (filelock keeps them in the
// user's cache folder) in a folder of the test binary's own, removed after.
// Child processes the tests start inherit it, so they contend for the same
// locks.
func TestMain(m *testing.M) {
	owned := ""
	if os.Getenv("BATON_TEST_CACHE") == "" {
		if dir, err := os.MkdirTemp("", "baton-test-cache-"); err == nil {
			os.Setenv("XDG_CACHE_HOME", dir)
			os.Setenv("BATON_TEST_CACHE", dir)
			owned = dir
		}
	}
	code := m.Run()
	if owned != "" {
		os.RemoveAll(owned)
	}
	os.Exit(code)
}
