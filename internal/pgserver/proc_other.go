//go:build !unix

package pgserver

import (
	"os"
	"os/exec"
)

// runAs is a no-op where PostgreSQL may run as the current user.
type runAs struct{}

func serverUser() (runAs, error) { return runAs{}, nil }
func (runAs) own(string) error   { return nil }
func (runAs) apply(*exec.Cmd)    {}
func (runAs) other() bool        { return false }
func interrupt(p *os.Process)    { p.Kill() }
