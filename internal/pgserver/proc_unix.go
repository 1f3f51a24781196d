//go:build unix

package pgserver

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// runAs is the user initdb and postgres run as: nil for the current user.
type runAs struct {
	cred *syscall.Credential
}

// serverUser is the postgres user when running as root (PostgreSQL refuses
// root), else the current user.
func serverUser() (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runAs{}, fmt.Errorf("running as root, and PostgreSQL will not run as root: no postgres user to run it as (%w); Debian's postgresql package creates one", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return runAs{}, fmt.Errorf("postgres user: uid %q gid %q are not numbers", u.Uid, u.Gid)
	}
	return runAs{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}}, nil
}

// other reports whether the server runs as another user than the test.
func (r runAs) other() bool { return r.cred != nil }

// own gives dir to the server's user, readable by it alone: initdb makes
// data/ inside it and postgres puts its socket there.
func (r runAs) own(dir string) error {
	if r.cred == nil {
		return nil
	}
	if err := os.Chown(dir, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

func (r runAs) apply(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = r.cred
	deathSignal(cmd.SysProcAttr)
}

// interrupt asks postgres for a fast shutdown.
func interrupt(p *os.Process) { p.Signal(syscall.SIGINT) }
