//go:build !unix

package mcpserver

import "io/fs"

// fileID is a file's identity: here its cleaned path under the root, the
// system giving no inode through fs.FileInfo.
type fileID struct{ name string }

func identity(rel string, _ fs.FileInfo) fileID { return fileID{name: rel} }
