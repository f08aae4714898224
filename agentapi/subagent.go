package agentapi

import (
	"encoding/json"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// SubAgentDetails are the details of a task tool call's result (a
// sub-agent's answer): which profile answered, its child workflow, how it
// ended and what it spent, which the parent's usage counts.
type SubAgentDetails struct {
	Agent      string           `json:"agent"`
	WorkflowID string           `json:"workflowId"`
	RunID      string           `json:"runId,omitempty"`
	StopReason agent.StopReason `json:"stopReason,omitempty"`
	Turns      int              `json:"turns,omitempty"`
	Usage      *agent.Usage     `json:"usage,omitempty"`
}

// JSON is the details as a tool result carries them.
func (d SubAgentDetails) JSON() json.RawMessage {
	b, _ := json.Marshal(d)
	return b
}

// SignalSubAgent carries a child's news to its parent (SubAgentSignal):
// what it has spent, its progress, its approval requests and decisions.
const SignalSubAgent = "subAgent"

// ParentCall is what a sub-agent's run knows of the task call it answers;
// the parent sets it in the child's input, and the child carries it
// across continue-as-new.
type ParentCall struct {
	WorkflowID string `json:"workflowId"`
	ToolCallID string `json:"toolCallId"`
	Position   int    `json:"position"`
	Agent      string `json:"agent"`
	// Start is when the parent started the call, Unix ms: progress is
	// offset from it, as a tool's partial results from the tool's start.
	Start int64 `json:"start"`
	// Allowed are the tools the parent's person allowed "always": the
	// child asks no one for them.
	Allowed []string `json:"allowed,omitempty"`
	// Sent counts the progress signals the child has sent
	// (MaxSubAgentProgress bounds them).
	Sent int `json:"sent,omitempty"`
	// SendsResult asks the child to send its result as a subAgent Signal
	// when it ends (SubAgentSignal.Result): its parent started it with
	// the abandon close policy and may continue as new before it ends.
	SendsResult bool `json:"sendsResult,omitempty"`
}

// MaxSubAgentProgress bounds the progress signals one child sends its
// parent, so a child of a thousand turns adds a bounded number of events
// to its parent's history; its spending still arrives with its result.
const MaxSubAgentProgress = 100

// SubAgentSignal is one piece of a child's news for the task call it
// answers (ToolCallID and Position are the parent's call's).
type SubAgentSignal struct {
	ToolCallID string `json:"toolCallId"`
	Position   int    `json:"position,omitempty"`
	// Usage is what the child (with its own children) has spent so far.
	Usage *agent.Usage `json:"usage,omitempty"`
	// Progress is a partial result of the call: what the child just did;
	// Offset is when, from the call's start.
	Progress *agent.ToolResult `json:"progress,omitempty"`
	Offset   time.Duration     `json:"offset,omitempty"`
	// Approval is a request of the child (or of one of its children) for
	// a person, or, with Decision set, its decision.
	Approval *SubAgentApproval `json:"approval,omitempty"`
	// Result is how the child ended, its last signal (ParentCall.SendsResult).
	Result *SubAgentResult `json:"result,omitempty"`
}

// SubAgentApproval is a sub-agent's tool call waiting for a person, as its
// parent's watchers see it.
type SubAgentApproval struct {
	// Agent and WorkflowID name the sub-agent whose call waits; the
	// parent forwards a decision there.
	Agent      string         `json:"agent"`
	WorkflowID string         `json:"workflowId"`
	ToolCallID string         `json:"toolCallId"`
	Position   int            `json:"position,omitempty"`
	ToolName   string         `json:"toolName"`
	Args       map[string]any `json:"args,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Deadline   int64          `json:"deadline,omitempty"`
	Decision   string         `json:"decision,omitempty"`
}

// SubAgentResult is how a child ended, sent to its parent's workflow id
// (no run id) as the last subAgent Signal when ParentCall.SendsResult: the
// parent may have continued as new since it started the child, and its
// new run holds no future of it (workflows/subagent_carry.go). Answer is
// the final assistant message's text blocks alone, stored ones as stubs,
// so the signal stays small whatever the child did. Ended is when the
// child ended, from the call's start by the child's clock: the parent
// orders the call's end by it, as it orders a tool's end by the duration
// the tool reports, and not by when it saw the end (much later when the
// parent had no worker meanwhile). Zero from children that predate it.
type SubAgentResult struct {
	RunID        string           `json:"runId,omitempty"`
	StopReason   agent.StopReason `json:"stopReason"`
	ErrorMessage string           `json:"errorMessage,omitempty"`
	Turns        int              `json:"turns"`
	Usage        agent.Usage      `json:"usage"`
	Answer       agent.Message    `json:"answer"`
	Ended        time.Duration    `json:"ended,omitempty"`
}

// PausedBatch is a parallel tool batch handed over to the next workflow
// run while only sub-agents run in it: the assistant message is the
// carry's LastAssistant, and every event of the batch so far has been
// emitted (none is held back).
type PausedBatch struct {
	// Start is when the batch started, Unix ms: the order window counts
	// from it.
	Start int64 `json:"start"`
	// Done holds, per tool call of the message, the finalized result of
	// the calls that have ended (their tool_execution_end is out), nil for
	// those still running.
	Done []*DoneCall `json:"done"`
	// Children are the sub-agents still running, in call order.
	Children []CarriedChild `json:"children"`
	// Aborted is the reason of an abort that came while the run handed
	// over: the next run is aborted too.
	Aborted string `json:"aborted,omitempty"`
	// Tidy says the batch's children were started at version 2 of the
	// subagent-continue-mid-batch marker, whose runs ask each child to
	// stop once over the whole batch and leave their timers to the
	// continue-as-new; batches recorded before it did neither, and their
	// resumed runs keep to that.
	Tidy bool `json:"tidy,omitempty"`
}

// DoneCall is an ended call's finalized result.
type DoneCall struct {
	Result  agent.ToolResult `json:"result"`
	IsError bool             `json:"isError,omitempty"`
}

// CarriedChild is a running sub-agent of a paused batch.
type CarriedChild struct {
	// Index is its call's place in the message, from 0; Args its prepared
	// arguments (the after hooks see them); Progress the latest offset
	// (ms) of a partial result of it already emitted.
	Index      int            `json:"index"`
	Args       map[string]any `json:"args,omitempty"`
	Progress   int64          `json:"progress,omitempty"`
	Agent      string         `json:"agent"`
	WorkflowID string         `json:"workflowId"`
	RunID      string         `json:"runId,omitempty"`
	// Start is when the call's execute started, Unix ms (its duration).
	Start int64 `json:"start"`
	// Counted is the child's usage counted so far; Stopped why the parent
	// stopped it ("" when it did not).
	Counted agent.Usage `json:"counted"`
	Stopped string      `json:"stopped,omitempty"`
	// Cancelled says a run of the parent has asked it to stop (an abort
	// or the budget): no later run asks again (PausedBatch.Tidy).
	Cancelled bool `json:"cancelled,omitempty"`
	// Result is the child's result when it arrived as the run handed over.
	Result *SubAgentResult `json:"result,omitempty"`
	// Approvals are the child's calls waiting for a person.
	Approvals []SubAgentApproval `json:"approvals,omitempty"`
}
