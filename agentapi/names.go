package agentapi

import "go.temporal.io/sdk/temporal"

// Names that clients (the starter, the Temporal CLI, the Web UI) and the
// workflow agree on.
const (
	// TaskQueue is the default task queue of workers and runs.
	TaskQueue = "agent-loop"
	// HostQueueInfix joins a task queue and a host name into the host's
	// own queue (HostQueue): workers serve it for their host alone.
	HostQueueInfix = "-host-"
	// AgentLoopWorkflow is the workflow type of one agent run.
	AgentLoopWorkflow = "AgentLoop"
	// SessionWorkflow is the workflow type of a session (pi's Agent): one
	// transcript, a run per prompt, idle in between.
	SessionWorkflow = "AgentSession"

	// Session Updates: prompt and continue start a run (refused while one
	// is active, with pi's texts), reset clears the transcript, the setters
	// change what the next run uses (queue modes at once).
	UpdatePrompt           = "prompt"
	UpdateContinue         = "continue"
	UpdateReset            = "reset"
	UpdateSetModel         = "setModel"
	UpdateSetThinkingLevel = "setThinkingLevel"
	UpdateSetSteeringMode  = "setSteeringMode"
	UpdateSetFollowUpMode  = "setFollowUpMode"
	UpdateSetToolExecution = "setToolExecution"
	// UpdateSetRemoteTools replaces the session's remote tools
	// (RemoteToolsRequest) for its next run.
	UpdateSetRemoteTools = "setRemoteTools"
	// UpdateSetHooks replaces the session's beforeToolCall and
	// afterToolCall hooks (HooksRequest) for its next run.
	UpdateSetHooks = "setHooks"
	// UpdateCompact compacts the session's context between runs, with
	// optional custom instructions for the summary.
	UpdateCompact = "compact"
	// SignalPrompt is the prompt Update's Signal twin; while a run is
	// active the prompt waits as a follow-up instead of being refused.
	SignalPrompt = "prompt"

	// UpdateSteer queues a steering message; it is injected after the
	// current turn (pi's agent.steer). Its Signal twin is SignalSteer.
	UpdateSteer = "steer"
	// UpdateFollowUp queues a follow-up message; it is injected when the
	// agent would otherwise stop (pi's agent.followUp).
	UpdateFollowUp = "followUp"
	// UpdateAbort aborts the run (pi's agent.abort): in-flight activities
	// are cancelled and the next model turn ends as aborted.
	UpdateAbort = "abort"

	// UpdateSetBudget replaces the budget of a run or session (an empty
	// one removes it), for the run in progress and the runs after it.
	UpdateSetBudget = "setBudget"

	// UpdateApprove answers a tool call waiting for a person (see the
	// approval policy): allow, deny with a reason, or always.
	UpdateApprove = "approve"

	// SignalSteer, SignalFollowUp, SignalAbort and SignalApprove are the
	// Signal twins of the Updates, for clients that cannot wait for an
	// Update's result. An invalid one is logged and dropped.
	SignalSteer    = "steer"
	SignalFollowUp = "followUp"
	SignalAbort    = "abort"
	SignalApprove  = "approve"
	// SignalToolUpdate carries a running tool's partial results from the
	// ExecuteToolCall activity (ToolUpdate), and SignalToolQueue the
	// steering and follow-up messages a running tool queues (ToolQueue).
	SignalToolUpdate = "toolUpdate"
	SignalToolQueue  = "toolQueue"

	// QueryEvents returns the durable event log from a sequence number.
	QueryEvents = "events"
	// QueryState returns the run's status, turn, pending tool calls and
	// queued messages.
	QueryState = "state"
	// QueryContext returns a page of the run's context (ContextPage) for
	// clients; no activity reads its own workflow's state: the model turn
	// reads its context from the content store by reference (ContextRef in
	// package activities).
	QueryContext = "context"
)

// HostQueue is the task queue a worker serves for its host alone, where runs
// send the tools that touch their workspace: <taskQueue>-host-<host id>.
func HostQueue(taskQueue, host string) string { return taskQueue + HostQueueInfix + host }

// Error types: the ApplicationError types of a failed run or a refused
// Update that a client tells apart (package activities has those of the
// worker's stages).
const (
	// ErrInvalidInput is the type of a run whose input cannot be served;
	// such a run fails at once and is not retried. A refused Update's
	// argument is refused by its validator instead.
	ErrInvalidInput = "InvalidInput"
	// ErrBudgetExhausted is the type of a session's refusal of a prompt or
	// a continue when its budget is spent, so that a client can tell it
	// from other refused input (the starter exits with its budget code).
	ErrBudgetExhausted = "BudgetExhausted"
)

// Run statuses, as QueryState, the AgentStatus search attribute and the
// Web UI's current details show them.
const (
	StatusStarting        = "starting"
	StatusRunning         = "running"
	StatusWaitingApproval = "waiting_approval"
	StatusIdle            = "idle"
	StatusEnded           = "ended"
	StatusFailed          = "failed"
	StatusContinued       = "continued"
)

// Search attributes the runs keep up to date, so that
// `temporal workflow list --query "AgentStatus='waiting_approval'"` finds
// sessions waiting for a person. The dev server start commands register
// them; the worker checks that the namespace has them before runs upsert.
var (
	AgentStatus = temporal.NewSearchAttributeKeyKeyword("AgentStatus")
	AgentModel  = temporal.NewSearchAttributeKeyKeyword("AgentModel")
	AgentTurns  = temporal.NewSearchAttributeKeyInt64("AgentTurns")
	AgentCost   = temporal.NewSearchAttributeKeyFloat64("AgentCost")
)

// SearchAttributes maps each search attribute to its type as the Temporal
// CLI names it (`temporal operator search-attribute create --type`).
var SearchAttributes = map[string]string{
	AgentStatus.GetName(): "Keyword",
	AgentModel.GetName():  "Keyword",
	AgentTurns.GetName():  "Int",
	AgentCost.GetName():   "Double",
}

// What `starter session list` shows of a session beyond the search
// attributes: its title (the first prompt, Title) and when it last did
// something, kept in the memo, which every list result carries and which
// needs no registration in the namespace.
const (
	MemoTitle        = "title"
	MemoLastActivity = "lastActivity"
)

// MemoLogExcerpt is the memo field of a memo upsert that carries the
// event log to a watcher where a run rests (waits for a person's approval,
// or a session's prompt ended) and someone watched its last model turn: a
// LogExcerpt of the events since the log was last carried. The workflow
// upserts it and removes it again in the same workflow task (a session's
// prompt end removes it in the upsert of MemoLastActivity), so the memo
// (which every list result carries) never keeps it; the watcher reads it
// from the upsert's event in the history it long-polls.
const MemoLogExcerpt = "logExcerpt"

// MemoLogGrew is the memo field of a memo upsert that tells a watcher the
// event log grew after a MemoLogExcerpt in the same workflow task: those
// events came with no excerpt, and the watcher reads them with the events
// Query. It is upserted with no value (a removal), so the memo never
// holds it.
const MemoLogGrew = "logGrew"

// MaxQueuedMessageBytes bounds one steering or follow-up message: it enters
// history as an Update or Signal payload and again in a model turn's input.
const MaxQueuedMessageBytes = 1 << 20

// MaxQueuedBytes bounds what waits in a run's queues in all: steering,
// follow-ups and a session's prompt waiting to start, counted as they sit
// in the workflow once their large content is stored (a stub of about 200
// bytes for each block over store.InlineLimit). A model turn's input and a
// carry hold what the queues held.
const MaxQueuedBytes = 1 << 20
