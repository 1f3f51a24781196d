package orchestrate

// The single-call baseline is what a user would do instead of running baton:
// send the task and the whole context to the run's model in one request
// (`llm -f doc`, `claude -p`). It is counted with the same counter as every
// other figure of the record, and the record says whether that request
// would fit the model's window, since a single call that does not fit is no
// alternative at all.

// singleCallInstruction follows the context block in the single call's one
// message. It starts with a letter, so the message counts as the block's
// count plus its own (see subagentUser).
func singleCallInstruction(task string) string {
	return "Task: " + task + "\n"
}

// singleCall fills the single-call side of the accounting. The whole context
// is counted once per run (naiveBlockTokens), shared with the naive
// baseline.
func (r *run) singleCall() {
	n := r.naiveBlockTokens() + r.count(singleCallInstruction(r.cfg.Task))
	r.acct.SingleCallInputTokens = n
	w := r.window(r.cfg.ModelName)
	fits := fitsWindow(n, r.cfg.SynthesisMax, w.Tokens)
	r.acct.SingleCallFits = &fits
	r.acct.SingleCallWindow = w.Tokens
}
