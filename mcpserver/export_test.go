package mcpserver

// DocumentOps is how many stats, folder walks and file reads the document
// tools have made.
func (s *Server) DocumentOps() (stats, walks, reads int64) {
	return s.docOps.stats.Load(), s.docOps.walks.Load(), s.docOps.reads.Load()
}

// ListLen is the length boundLists counts for a JSON value.
func ListLen(data []byte) int {
	var n listLen
	n.UnmarshalJSON(data)
	return int(n)
}
