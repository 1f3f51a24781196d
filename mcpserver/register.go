package mcpserver

// addLedgerTools registers the tools of the context-budget discipline:
// budget_check and the ledger's.
func (s *Server) addLedgerTools() {
	s.addBudgetTools()
	s.addLedgerFileTools()
}
