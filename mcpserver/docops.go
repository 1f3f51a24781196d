package mcpserver

import "sync/atomic"

// docOps counts the file system work outline and ask do for their
// documents, so that tests can show it is bounded by the files named, not
// by how often they are named.
type docOps struct {
	stats, walks, reads atomic.Int64
}
