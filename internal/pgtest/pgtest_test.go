package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/pgserver"
)

func TestStartServesOnItsSocketOnlyAndStopRemovesIt(t *testing.T) {
	s := Start(t)
	sock := filepath.Join(s.Dir, ".s.PGSQL.5432")
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("no socket at %s: %v", sock, err)
	}
	log := s.Log()
	if !strings.Contains(log, "ready to accept connections") {
		t.Fatalf("log does not say ready:\n%s", log)
	}
	// listen_addresses is empty: no TCP listener at all.
	if strings.Contains(log, "listening on IPv4") || strings.Contains(log, "listening on IPv6") {
		t.Fatalf("postgres listens on TCP:\n%s", log)
	}
	if want := "host=" + strings.ReplaceAll(s.Dir, "/", "%2F"); !strings.Contains(s.URL(""), want) {
		t.Errorf("URL %q does not name the socket folder (%s)", s.URL(""), want)
	}
	if psql := psqlFor(t); psql != "" {
		out, err := exec.Command(psql, "-XAt", "-d", s.URL(""), "-c", "select current_user, pg_encoding_to_char(encoding), datcollate from pg_database where datname = current_database()").CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "postgres|UTF8|C" {
			t.Errorf("psql says %q, want postgres|UTF8|C", got)
		}
	}
	pid := s.PID()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(time.Second):
		t.Fatalf("postgres %d still running after Stop", pid)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder %s still there after Stop: %v", s.Dir, err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// psqlFor is psql beside the initdb Find returns, after symlinks (Debian's
// /usr/local/bin links name only some of the binaries), or "" when there is
// none.
func psqlFor(t *testing.T) string {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	bin, err := Find()
	if err != nil {
		return ""
	}
	initdb, err := filepath.EvalSymlinks(filepath.Join(bin, "initdb"+exe))
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(initdb), "psql"+exe)
	if _, err := os.Stat(p); err != nil {
		t.Logf("no psql beside %s; the query check is left out", initdb)
		return ""
	}
	return p
}

func TestTwoServersAtOnce(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Dir == b.Dir || a.URL("") == b.URL("") {
		t.Fatalf("two servers share %s", a.Dir)
	}
	t.Logf("start times: %v, %v", a.StartTime, b.StartTime)
}

func TestFindHonoursBatonPGBin(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("BATON_PG_BIN", empty)
	_, err := Find()
	if err == nil || !strings.Contains(err.Error(), "BATON_PG_BIN="+empty) {
		t.Fatalf("Find with an empty BATON_PG_BIN folder: %v", err)
	}
	if errors.Is(err, ErrNotFound) {
		t.Errorf("a broken BATON_PG_BIN is reported as not found, which would skip: %v", err)
	}
	ft := &fakeTB{TB: t}
	func() {
		defer func() { recover() }()
		Require(ft)
	}()
	if !ft.failed || ft.skipped {
		t.Errorf("Require with a broken BATON_PG_BIN: failed=%v skipped=%v, want a failure", ft.failed, ft.skipped)
	}
}

// Without binaries Require skips loudly, and under CI=true fails: CI
// installs PostgreSQL, so a skip there would hide a suite that never ran.
func TestRequireWithoutBinaries(t *testing.T) {
	t.Setenv("BATON_PG_BIN", "")
	t.Setenv("PATH", t.TempDir())
	t.Setenv("BATON_PG_UNAVAILABLE", "")
	old := pgserver.DebianRoot
	pgserver.DebianRoot = t.TempDir()
	t.Cleanup(func() { pgserver.DebianRoot = old })
	if _, err := Find(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Find with no binaries anywhere: %v, want ErrNotFound", err)
	}
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		ft := &fakeTB{TB: t}
		func() {
			defer func() { recover() }()
			Require(ft)
		}()
		if ci == "" && (!ft.skipped || ft.failed || !strings.Contains(ft.msg, "SKIPPED, NO POSTGRESQL")) {
			t.Errorf("Require without binaries: skipped=%v failed=%v %q", ft.skipped, ft.failed, ft.msg)
		}
		if ci == "true" && (ft.skipped || !ft.failed || !strings.Contains(ft.msg, "PostgreSQL is missing")) {
			t.Errorf("Require without binaries under CI=true: skipped=%v failed=%v %q", ft.skipped, ft.failed, ft.msg)
		}
	}
}

// fakeTB records what Require does instead of ending the test: Fatal and
// Skip end the calling function with a panic the caller recovers.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatal(args ...any) {
	f.failed, f.msg = true, fmt.Sprint(args...)
	panic("fatal")
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	panic("fatal")
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped, f.msg = true, fmt.Sprintf(format, args...)
	panic("skip")
}

// Defect: as root, a TMPDIR the postgres user cannot reach (one under
// /root) made initdb fail with "Permission denied".
func TestStartAsRootWithAClosedTMPDIR(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root runs the server as another user")
	}
	closed, err := os.MkdirTemp("", "closed-") // 0700, root's
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(closed) })
	t.Setenv("TMPDIR", closed)
	s := Start(t)
	if strings.HasPrefix(s.Dir, closed) {
		t.Errorf("the cluster is in %s, which the postgres user cannot reach", s.Dir)
	}
}
