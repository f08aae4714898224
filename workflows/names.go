// Package workflows holds the agent loop as a Temporal workflow: pi's two
// nested loops, the tool-batch scheduler, the durable event log and the
// message handlers. Every name a client needs is an exported constant here.
package workflows

import "github.com/durable-agents/agentloop/activities"

// Names that clients (the starter, the Temporal CLI, the Web UI) and the
// workflow agree on.
const (
	// TaskQueue is the default task queue of workers and runs.
	TaskQueue = "agent-loop"
	// AgentLoopWorkflow is the workflow type of one agent run.
	AgentLoopWorkflow = "AgentLoop"

	// UpdateSteer queues a steering message; it is injected after the
	// current turn (pi's agent.steer). Its Signal twin is SignalSteer.
	UpdateSteer = "steer"
	// UpdateFollowUp queues a follow-up message; it is injected when the
	// agent would otherwise stop (pi's agent.followUp).
	UpdateFollowUp = "followUp"
	// UpdateAbort aborts the run (pi's agent.abort): in-flight activities
	// are cancelled and the next model turn ends as aborted.
	UpdateAbort = "abort"

	// SignalSteer, SignalFollowUp and SignalAbort are the Signal twins of
	// the Updates, for clients that cannot wait for an Update's result.
	SignalSteer    = activities.SignalSteer
	SignalFollowUp = activities.SignalFollowUp
	SignalAbort    = activities.SignalAbort
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
