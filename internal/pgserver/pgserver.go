// Package pgserver starts a real PostgreSQL: a fresh cluster made by initdb
// in a temporary folder, a postgres that listens only on a unix socket in
// that folder (no TCP port, so that parallel runs never collide and nothing
// is reachable from outside), and a connection URL for it. It serves the
// tests (through internal/pgtest) and baton bench's distributed benchmark,
// so it needs no testing.T.
//
// The binaries (initdb and postgres) are taken from BATON_PG_BIN, else from
// PATH, else from the newest /usr/lib/postgresql/*/bin (where Debian's
// postgresql package puts them).
//
// PostgreSQL refuses to run as root, so when baton runs as root both
// initdb and postgres run as the postgres user, and the folder is given to
// that user. The process is started with SysProcAttr.Credential rather than
// through runuser or su: there is no extra process between baton and the
// server, so the stop signal reaches postgres itself.
package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// DebianRoot is where Debian's postgresql packages put each major version's
// binaries; a variable so that a test can reach the not-found path.
var DebianRoot = "/usr/lib/postgresql"

// ErrNotFound is returned by Find when no PostgreSQL binaries can be found.
var ErrNotFound = errors.New("no PostgreSQL binaries")

// exe is the file name of a binary on this system.
func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// hasBinaries reports whether dir holds both initdb and postgres.
func hasBinaries(dir string) bool {
	for _, n := range []string{"initdb", "postgres"} {
		info, err := os.Stat(filepath.Join(dir, exe(n)))
		if err != nil || info.IsDir() {
			return false
		}
	}
	return true
}

// Find returns the folder that holds initdb and postgres: BATON_PG_BIN, else
// the folder of initdb on PATH, else the newest /usr/lib/postgresql/*/bin.
// A BATON_PG_BIN that does not hold both is an error, not a fall-through:
// whoever set it meant that one.
func Find() (string, error) {
	if dir := os.Getenv("BATON_PG_BIN"); dir != "" {
		if !hasBinaries(dir) {
			return "", fmt.Errorf("BATON_PG_BIN=%s does not hold both initdb and postgres", dir)
		}
		return dir, nil
	}
	if p, err := exec.LookPath(exe("initdb")); err == nil {
		if dir := filepath.Dir(p); hasBinaries(dir) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(DebianRoot, "*", "bin"))
	// Newest major version first: compare the version folder as a number.
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if hasBinaries(dir) {
			return dir, nil
		}
	}
	why := os.Getenv("BATON_PG_UNAVAILABLE")
	if why == "" {
		why = "no initdb on PATH or in /usr/lib/postgresql/*/bin, and BATON_PG_BIN is not set (.ci/run installs Debian's postgresql and sets it)"
	}
	return "", fmt.Errorf("%w: %s", ErrNotFound, why)
}

// version is the major version in a /usr/lib/postgresql/N/bin path, 0 when
// there is none.
func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Server is one running PostgreSQL cluster.
type Server struct {
	// Dir is the cluster's folder: the socket, the log, and data/.
	Dir string
	// StartTime is how long initdb and the start until ready took.
	StartTime time.Duration

	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

// Launch makes a fresh cluster in a new temporary folder and starts
// PostgreSQL on it from the binaries in bin (see Find). The caller must
// call Stop.
func Launch(bin string) (s *Server, err error) {
	t0 := time.Now()
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := tempDir(cred.other())
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if err := cred.own(dir); err != nil {
		return nil, fmt.Errorf("postgres folder %s: %w", dir, err)
	}
	data := filepath.Join(dir, "data")
	var out bytes.Buffer
	initdb := exec.Command(filepath.Join(bin, exe("initdb")), "-D", data, "-E", "UTF8", "--locale=C",
		"-A", "trust", "-U", "postgres", "--no-sync", "--no-instructions")
	initdb.Stdout, initdb.Stderr = &out, &out
	initdb.Dir = dir // the test's own folder may be closed to the server's user
	cred.apply(initdb)
	if err := initdb.Run(); err != nil {
		return nil, fmt.Errorf("initdb %s: %w\n%s", data, err, tail(out.Bytes(), 2000))
	}
	s = &Server{Dir: dir, exited: make(chan struct{}), log: filepath.Join(dir, "postgres.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, fmt.Errorf("postgres log: %w", err)
	}
	defer logf.Close()
	// Only the unix socket in dir; fsync and full-page writes are off
	// because a test cluster is thrown away, never recovered after a
	// machine crash (a killed process loses nothing either way).
	s.cmd = exec.Command(filepath.Join(bin, exe("postgres")), "-D", data, "-k", dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Dir = dir
	cred.apply(s.cmd)
	if err := s.start(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := s.waitReady(data, 60*time.Second); err != nil {
		s.cmd.Process.Kill()
		<-s.exited
		return nil, err
	}
	s.StartTime = time.Since(t0)
	return s, nil
}

// start starts postgres from a goroutine that holds its OS thread until
// postgres exits: Linux sends the death signal when the thread that started
// the child ends, not when the process does, so the thread is kept for as
// long as the server runs.
func (s *Server) start() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := s.cmd.Start()
		started <- err
		if err == nil {
			s.cmd.Wait()
		}
		close(s.exited)
	}()
	return <-started
}

// tempDir makes the cluster's folder. A unix socket's path is at most about
// 100 bytes, so a long TMPDIR is passed over for /tmp; so is any TMPDIR when
// the server runs as another user, who may not be able to reach it (a
// folder under /root), where /tmp is open to all.
func tempDir(otherUser bool) (string, error) {
	base := os.TempDir()
	if runtime.GOOS != "windows" && (len(base) > 60 || otherUser) {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "baton-pg-")
	if err != nil {
		return "", fmt.Errorf("postgres folder: %w", err)
	}
	return dir, nil
}

// waitReady waits until postmaster.pid says the server accepts
// connections (its eighth line, as pg_ctl -w reads it), or the server exits.
func (s *Server) waitReady(data string, limit time.Duration) error {
	deadline := time.After(limit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited before it was ready (%v):\n%s", s.cmd.ProcessState, s.logTail())
		case <-deadline:
			return fmt.Errorf("postgres not ready after %v:\n%s", limit, s.logTail())
		case <-tick.C:
			b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
			if err != nil {
				continue
			}
			lines := strings.Split(string(b), "\n")
			if len(lines) >= 8 && strings.TrimSpace(lines[7]) == "ready" {
				return nil
			}
		}
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.log)
	return string(tail(b, 3000))
}

// URL is a connection URL for database name (postgres when empty) as the
// superuser postgres, over the unix socket.
func (s *Server) URL(name string) string {
	if name == "" {
		name = "postgres"
	}
	q := url.Values{"host": {s.Dir}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + url.PathEscape(name) + "?" + q.Encode()
}

// Stop shuts the server down (SIGINT, PostgreSQL's fast shutdown, then a
// kill after 30 seconds) and removes its folder. Stopping twice is harmless.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	defer func() { s.cmd = nil }()
	select {
	case <-s.exited:
	default:
		interrupt(s.cmd.Process)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
			return fmt.Errorf("postgres in %s did not stop within 30s of SIGINT and was killed:\n%s", s.Dir, s.logTail())
		}
	}
	return os.RemoveAll(s.Dir)
}

// Log returns what the server has logged so far, for a failing test.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// Exited is closed when the server process has ended.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// PID is the server process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// CreateDatabase creates database name through the server at url.
func CreateDatabase(url, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to create database %q: %w", name, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}
