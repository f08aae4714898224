package workflows

import "github.com/durable-agents/agentloop/activities"

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
	SignalSteer    = activities.SignalSteer
	SignalFollowUp = activities.SignalFollowUp
	SignalAbort    = activities.SignalAbort
	SignalApprove  = "approve"
	// SignalToolUpdate carries a running tool's partial results from the
	// ExecuteToolCall activity.
	SignalToolUpdate = activities.SignalToolUpdate

	// QueryEvents returns the durable event log from a sequence number.
	QueryEvents = "events"
	// QueryState returns the run's status, turn, pending tool calls and
	// queued messages.
	QueryState = "state"
	// QueryContext returns a page of the run's context; the model-turn
	// activity uses it when its cache misses.
	QueryContext = activities.QueryContext
)

// HostQueue is the task queue a worker serves for its host alone, where runs
// send the tools that touch their workspace: <taskQueue>-host-<host id>.
func HostQueue(taskQueue, host string) string { return taskQueue + HostQueueInfix + host }
