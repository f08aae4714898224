package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// The chat's queue keeps two waiting calls of one message that share an id
// apart by position: both are asked, and a decision made elsewhere takes
// away only the call it names. Before, the second request was taken for
// the first (the queue knew calls by id) and never asked.
func TestApprovalQueueSharedIDs(t *testing.T) {
	request := func(pos int, path string) agent.Event {
		return agent.Event{Type: agent.EventApprovalRequest, ToolCallID: "c1", ToolName: "write",
			Args: map[string]any{"path": path}, Approval: &agent.ApprovalInfo{Reason: "mutating", Position: pos}}
	}
	var out bytes.Buffer
	e := &env{out: &out}
	q := &approvals{}
	e.approvalEvent(q, request(1, "a"))
	e.approvalEvent(q, request(2, "b"))
	e.approvalEvent(q, request(2, "b")) // seen again on a resumed watch
	require.Len(t, q.waiting, 2)
	require.Equal(t, []int{1, 2}, []int{q.waiting[0].Position, q.waiting[1].Position})

	e.approvalEvent(q, agent.Event{Type: agent.EventApprovalDecision, ToolCallID: "c1", ToolName: "write",
		Approval: &agent.ApprovalInfo{Decision: agent.ApprovalDeny, Position: 2}})
	require.Len(t, q.waiting, 1)
	require.Equal(t, map[string]any{"path": "a"}, q.waiting[0].Args)
	require.Equal(t, "c1 1", callWithPosition("c1", 1))
	require.Equal(t, "c1", callWithPosition("c1", 0))
}
