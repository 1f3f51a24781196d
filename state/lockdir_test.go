package state

import (
	"os"
	"testing"

	"github.com/baton-dev/baton/internal/testcache"
)

// TestMain keeps the lock files the tests take out of the user's cache.
func TestMain(m *testing.M) {
	cleanup := testcache.Isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}
