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
