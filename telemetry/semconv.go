package telemetry

// Attribute keys and values of the OpenTelemetry semantic conventions for
// generative AI, as of semantic conventions v1.40.0 (the gen_ai.* group is
// in development). They are written out here rather than imported: after
// v1.41.0 the gen_ai keys left the core semconv package of the Go SDK for an
// unstable one, and baton does not depend on an unstable package for a
// dozen strings.
const (
	AttrOperationName       = "gen_ai.operation.name"
	AttrProviderName        = "gen_ai.provider.name"
	AttrRequestModel        = "gen_ai.request.model"
	AttrRequestMaxTokens    = "gen_ai.request.max_tokens"
	AttrRequestTemperature  = "gen_ai.request.temperature"
	AttrResponseModel       = "gen_ai.response.model"
	AttrResponseID          = "gen_ai.response.id"
	AttrResponseFinish      = "gen_ai.response.finish_reasons"
	AttrInputTokens         = "gen_ai.usage.input_tokens"
	AttrOutputTokens        = "gen_ai.usage.output_tokens"
	AttrCacheReadTokens     = "gen_ai.usage.cache_read.input_tokens"
	AttrCacheCreationTokens = "gen_ai.usage.cache_creation.input_tokens"
	AttrAgentName           = "gen_ai.agent.name"
	AttrWorkflowName        = "gen_ai.workflow.name"
	AttrInputMessages       = "gen_ai.input.messages"
	AttrOutputMessages      = "gen_ai.output.messages"
	AttrSystemInstructions  = "gen_ai.system_instructions"
	AttrErrorType           = "error.type"
	AttrToolName            = "gen_ai.tool.name"
	AttrToolCallID          = "gen_ai.tool.call.id"
	AttrToolType            = "gen_ai.tool.type"
	AttrToolCallArguments   = "gen_ai.tool.call.arguments"
	AttrToolCallResult      = "gen_ai.tool.call.result"

	OpChat           = "chat"
	OpInvokeAgent    = "invoke_agent"
	OpInvokeWorkflow = "invoke_workflow"
	OpExecuteTool    = "execute_tool"
)

// baton's own attributes, for what the conventions have no word for.
const (
	AttrSubtaskIndex          = "baton.subtask.index"
	AttrSliceTokens           = "baton.slice.tokens"
	AttrPromptTokens          = "baton.prompt.tokens"
	AttrContextTokens         = "baton.context.tokens"
	AttrNaiveInputTokens      = "baton.naive.input_tokens"
	AttrOrchestratedTokens    = "baton.orchestrated.input_tokens"
	AttrSingleCallInputTokens = "baton.single_call.input_tokens"
	AttrSubtasks              = "baton.subtasks"
	AttrPlanner               = "baton.planner"
	AttrRunID                 = "baton.run.id"
	AttrAttempts              = "baton.attempts"

	// baton run's: where a step stands, what a resume did not pay again,
	// and the budget's reset decisions.
	AttrStepID          = "baton.step.id"
	AttrPhase           = "baton.phase"
	AttrNextPhase       = "baton.next_phase"
	AttrNextSkill       = "baton.next_skill"
	AttrResume          = "baton.resume"
	AttrSteps           = "baton.steps"
	AttrResets          = "baton.resets"
	AttrTurns           = "baton.turns"
	AttrCalls           = "baton.calls"
	AttrSubagentIndex   = "baton.subagent.index"
	AttrSubagents       = "baton.subagents"
	AttrSubagentGoal    = "baton.subagent.goal"
	AttrReplayed        = "baton.replayed"
	AttrReplayedCalls   = "baton.replayed.calls"
	AttrReplayedTools   = "baton.replayed.tools"
	AttrResetReason     = "baton.reset.reason"
	AttrBoundaryOutcome = "baton.boundary.decision"
	AttrThresholdTokens = "baton.threshold.tokens"
	AttrWindowTokens    = "baton.window.tokens"
	AttrProjectedTokens = "baton.projected.tokens"
	AttrContextFraction = "baton.context.fraction"
	AttrLedgerTime      = "baton.ledger.time"
	AttrMisses          = "baton.ledger.misses"

	// EventRetry is the event added to a chat span for each failed attempt
	// the retry policy sends again.
	EventRetry = "baton.retry"
	// Events of baton run, on the span of the part they happen in (the
	// workflow's at a phase boundary, a step's mid-step).
	EventReset        = "baton.reset"
	EventBoundary     = "baton.boundary"
	EventThreshold    = "baton.threshold"
	EventLedgerMiss   = "baton.ledger.miss"
	EventResume       = "baton.resume"
	EventReplayedCall = "baton.call.replayed"
)
