//go:build !windows

package main

import "os"

// enableVT reports whether f understands cursor sequences: every terminal
// outside Windows does.
func enableVT(*os.File) bool { return true }
