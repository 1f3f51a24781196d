package mcpserver

// addLedgerTools registers the tools of the context-budget discipline:
// budget_check, the ledger's and state.yaml's.
func (s *Server) addLedgerTools() {
	s.addBudgetTools()
	s.addLedgerFileTools()
	s.addStateTools()
}
