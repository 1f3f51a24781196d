package pgtest

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/pgserver"
)

// A package whose tests need many databases shares one server: initdb is
// most of a start's second, CREATE DATABASE a few milliseconds.
var shared struct {
	enabled atomic.Bool
	once    sync.Once
	srv     *Server
	err     error
	seq     atomic.Int64
}

// Main runs a package's tests and stops the server they shared, if one was
// started. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	shared.enabled.Store(true)
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// Database creates a fresh, empty database on the package's shared server
// (started on first use) and returns its URL; it skips t when there are no
// binaries (see Require). The package must run its tests through Main.
func Database(t testing.TB) string {
	t.Helper()
	if !shared.enabled.Load() {
		t.Fatal("pgtest.Database needs the package's TestMain to call pgtest.Main, which stops the shared server")
	}
	bin := Require(t)
	shared.once.Do(func() {
		shared.srv, shared.err = Launch(bin)
		if shared.err == nil {
			t.Logf("shared PostgreSQL in %s ready in %v", shared.srv.Dir, shared.srv.StartTime.Round(time.Millisecond))
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	name := dbName(t.Name(), shared.seq.Add(1))
	if err := CreateDatabase(shared.srv.URL(""), name); err != nil {
		t.Fatal(err)
	}
	return shared.srv.URL(name)
}

// NewDatabaseURL is the URL of a database that does not exist yet on the
// package's shared server, for a test of what creates it.
func NewDatabaseURL(t testing.TB) string {
	t.Helper()
	u := Database(t)
	// Database made and named one; name a sibling that is not made.
	return strings.Replace(u, "/t_", "/u_", 1)
}

var notIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// dbName makes a database name from a test name: lower case, only
// letters, digits and underscores, within PostgreSQL's 63 bytes, and made
// unique by seq.
func dbName(test string, seq int64) string {
	s := notIdent.ReplaceAllString(strings.ToLower(test), "_")
	suffix := fmt.Sprintf("_%d", seq)
	if len(s) > 63-len(suffix)-2 {
		s = s[:63-len(suffix)-2]
	}
	return "t_" + s + suffix
}

// CreateDatabase creates database name through the server at url.
func CreateDatabase(url, name string) error { return pgserver.CreateDatabase(url, name) }
