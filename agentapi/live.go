package agentapi

import (
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// StreamInterval is the shortest time between two heartbeats of a watched
// streaming model turn (4 a second), and so the longest a delta waits for
// one: the activities heartbeat at it, and a watcher reads each heartbeat
// just after it is due (agentclient's beatClock). One constant here, in
// the contract both import, so the two cannot drift apart.
const StreamInterval = 250 * time.Millisecond

// What the activities send their workflow and its watchers while they run:
// the payloads of the toolUpdate and toolQueue Signals, and the heartbeat
// details of a streaming model turn and of a running tool, which clients
// read with DescribeWorkflowExecution and which never enter history.

// ToolUpdate carries partial results of one running call, in order. Dropped
// counts updates coalesced away because they came faster than they could be
// sent; each partial result replaces the previous one, so only the latest
// matters.
type ToolUpdate struct {
	ToolCallID string `json:"toolCallId"`
	// Position is the call's activities.ExecuteInput.Position.
	Position int                `json:"position,omitempty"`
	Attempt  int32              `json:"attempt"`
	Results  []agent.ToolResult `json:"results"`
	// Offsets[i] is when Results[i] was emitted, from the tool's start.
	Offsets []time.Duration `json:"offsets,omitempty"`
	Dropped int             `json:"dropped,omitempty"`
}

// ToolQueue is a steering (or, with FollowUp, follow-up) message queued by
// a running tool. Unlike a person's, it may be empty, as in pi.
type ToolQueue struct {
	Message  agent.Message `json:"message"`
	FollowUp bool          `json:"followUp,omitempty"`
	// ToolCallID is the call that queued it, and Offset when, from the
	// call's start: a parallel batch queues its calls' messages in pi's
	// order (instant, then call order), not in the order they arrive.
	ToolCallID string        `json:"toolCallId,omitempty"`
	Offset     time.Duration `json:"offset,omitempty"`
	// Position is the call's activities.ExecuteInput.Position.
	Position int `json:"position,omitempty"`
	// Attempt is the execute activity's attempt that queued it: a call's
	// messages are those of one attempt, its latest (workflows/attempts.go).
	// Zero (signals recorded before it existed) keeps every message.
	Attempt int32 `json:"attempt,omitempty"`
}

// LiveProgress is the heartbeat detail of a model turn while it streams.
// Clients read it with DescribeWorkflowExecution (pending activities) to
// show text as it arrives; it never enters history. The server keeps only
// the latest heartbeat, and each carries only what is new (see activities/stream.go):
// Events are the stream events since the previous heartbeat, numbered on
// from the last one it carried. A client that finds a gap (it missed a
// heartbeat, or came in mid-turn) waits for a checkpoint: Partial, the
// whole message as it stood after event PartialSeq. While nobody watches,
// heartbeats carry neither; Seq is the newest event's number.
type LiveProgress struct {
	Attempt    int32          `json:"attempt"`
	Turn       int            `json:"turn"`
	Seq        int64          `json:"seq"`
	Events     []LiveEvent    `json:"events,omitempty"`
	Partial    *agent.Message `json:"partial,omitempty"`
	PartialSeq int64          `json:"partialSeq,omitempty"`
	// Billed is what the provider billed the turn's failed attempts so
	// far, for the next attempt (activities/billed.go).
	Billed *agent.Usage `json:"billed,omitempty"`
}

// LiveEvent is one stream event of a model turn, numbered from 1, with the
// time the worker saw it (Unix milliseconds), for latency measurements.
type LiveEvent struct {
	Seq   int64             `json:"seq"`
	At    int64             `json:"at"`
	Event agent.StreamEvent `json:"event"`
}

// ToolProgress is the heartbeat detail of a running tool: its latest
// partial result, numbered from 1 (Seq), with the time the worker saw it
// (At, Unix milliseconds). Attempt grows when Temporal retries the tool,
// so that a client drops the partial results of the failed attempt. It
// never enters history; the durable share of the partial results arrives
// as tool_execution_update events.
type ToolProgress struct {
	Attempt    int32             `json:"attempt"`
	ToolCallID string            `json:"toolCallId"`
	Seq        int64             `json:"seq"`
	At         int64             `json:"at"`
	Partial    *agent.ToolResult `json:"partial,omitempty"`
}
