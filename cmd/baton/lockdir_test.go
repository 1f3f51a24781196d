package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/baton-dev/baton/internal/testcache"
)

// TestMain keeps the lock files the tests take out of the user's cache.
func TestMain(m *testing.M) {
	cleanup := testcache.Isolate()
	// Every ask and run a test makes is indexed: never in the user's own
	// run history, also for tests that do not call isolateEnv.
	home, err := os.MkdirTemp("", "baton-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "no temporary BATON_HOME:", err)
		os.Exit(1)
	}
	os.Setenv("BATON_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	cleanup()
	os.Exit(code)
}
