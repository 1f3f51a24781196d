package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// enableVT turns on the console's handling of the cursor sequences the
// live progress line uses. A console that refuses (before Windows 10) gets
// plain lines instead of escape codes printed as text.
func enableVT(f *os.File) bool {
	h := windows.Handle(f.Fd())
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return false
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
