package mcpserver

// addLedgerTools registers the tools of the context-budget discipline.
func (s *Server) addLedgerTools() {
	s.addBudgetTools()
}
