package agentapi

import (
	"encoding/json"

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
