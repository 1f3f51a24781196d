//go:build unix

package mcpserver

import (
	"io/fs"
	"syscall"
)

// fileID is a file's identity: its device and inode where the system has
// them, so that a symlink, a hard link or a case-folded name to a file
// already taken is the same file.
type fileID struct {
	dev, ino uint64
	name     string
}

func identity(rel string, info fs.FileInfo) fileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: st.Ino}
	}
	return fileID{name: rel}
}
