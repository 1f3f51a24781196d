// Package pgtest starts a real PostgreSQL for the tests that need one
// (internal/pgserver does the work): a fresh cluster in a temporary folder,
// on a unix socket only, stopped and removed when the test ends.
//
// .ci/run installs Debian's postgresql package when the binaries are
// missing and sets BATON_PG_BIN (or BATON_PG_UNAVAILABLE to why it could
// not). When no binaries can be found a test skips and says so in its skip
// line, or fails under CI=true (see internal/testdep); with BATON_PG_BIN
// set there is no skip path.
package pgtest

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/pgserver"
	"github.com/baton-dev/baton/internal/testdep"
)

// Server is one running PostgreSQL cluster.
type Server = pgserver.Server

// ErrNotFound is returned by Find when no PostgreSQL binaries can be found.
var ErrNotFound = pgserver.ErrNotFound

// Find returns the folder that holds initdb and postgres (see pgserver.Find).
func Find() (string, error) { return pgserver.Find() }

// Launch is Start without a test: for a TestMain that shares one server
// among a package's tests. The caller must call Stop.
func Launch(bin string) (*Server, error) { return pgserver.Launch(bin) }

// Require returns the binaries' folder or, when there is none, skips t
// loudly (fails it under CI=true). With BATON_PG_BIN set, binaries that are
// not there fail the test.
func Require(t testing.TB) string {
	t.Helper()
	dir, err := Find()
	if err != nil {
		if os.Getenv("BATON_PG_BIN") != "" || !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		testdep.Missing(t, "PostgreSQL", err.Error())
	}
	return dir
}

// Start makes a fresh cluster and starts PostgreSQL on it, or skips t when
// there are no binaries (see Require). The server is stopped with SIGINT
// (PostgreSQL's fast shutdown) when t ends, and killed if it has not stopped
// within 30 seconds.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Require(t)
	s, err := Launch(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("PostgreSQL in %s ready in %v", s.Dir, s.StartTime.Round(time.Millisecond))
	return s
}
