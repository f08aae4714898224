package workflows_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

func approveAt(h *harness, run client.WorkflowRun, r agentapi.ApproveRequest) error {
	u, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), UpdateName: agentapi.UpdateApprove, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{r},
	})
	if err != nil {
		return err
	}
	return u.Get(context.Background(), nil)
}

// Calls of one message that share an id and both wait for a person are
// told apart by position: their events and the pending list carry it, an
// approval by id alone is refused while both wait and says why, one with
// the position decides that call only. A call whose id is unique is
// addressed, and shown, exactly as before: no position. Before, the second
// wait replaced the first under the one id, and both calls were decided
// by whichever answer came.
func TestApprovalsSharedIDs(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	write := tool("write", func(_ context.Context, c tools.Call) (agent.ToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, c.ID+":"+c.Args["path"].(string))
		return agent.TextResult("wrote"), nil
	})
	writeCall := func(id, path string) agent.Content {
		return agent.ToolCall(id, "write", map[string]any{"path": path})
	}
	h := newHarness(t, []llm.ScriptedResponse{
		answer(writeCall("c1", "a"), writeCall("c1", "b"), writeCall("c2", "c")),
		answer(text("done")),
	}, write)
	in := h.input("go", "write")
	in.Approval = &agent.ApprovalPolicy{Mutating: true}
	run := h.start(in)

	st := waitApprovals(h, run, 3)
	var pending []string
	for _, p := range st.PendingApprovals {
		pending = append(pending, p.ToolCallID+"@"+string(rune('0'+p.Position)))
	}
	require.Equal(t, []string{"c1@1", "c1@2", "c2@0"}, pending)
	require.ErrorContains(t, approveAt(h, run, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"}),
		`tool calls at positions [1 2] share the id "c1": say which with its position`)
	require.ErrorContains(t, approveAt(h, run, agentapi.ApproveRequest{ToolCallID: "c1", Position: 3, Decision: "allow"}),
		`tool call "c1" at position 3 is not waiting for approval; waiting: ["c1" at position 1 "c1" at position 2 "c2"]`)
	require.NoError(t, approveAt(h, run, agentapi.ApproveRequest{ToolCallID: "c1", Position: 2, Decision: "deny", Reason: "not b"}))
	waitApprovals(h, run, 2)
	// The one c1 left waiting is found by its id alone; c2 as always.
	require.NoError(t, approveAt(h, run, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"}))
	require.NoError(t, approveAt(h, run, agentapi.ApproveRequest{ToolCallID: "c2", Decision: "allow"}))
	res := h.result(run)

	require.ElementsMatch(t, []string{"c1:a", "c2:c"}, ran, "b was denied, a and c allowed")
	require.False(t, res.Messages[2].IsError)
	require.True(t, res.Messages[3].IsError)
	require.Equal(t, "not b", agent.TextOf(res.Messages[3].Content))
	require.False(t, res.Messages[4].IsError)
	var kinds []string
	for _, e := range h.events(run) {
		if e.Type == agent.EventApprovalRequest || e.Type == agent.EventApprovalDecision {
			kinds = append(kinds, string(e.Type)+":"+e.ToolCallID+"@"+string(rune('0'+e.Approval.Position))+":"+e.Approval.Decision)
		}
	}
	require.Equal(t, []string{
		"approval_request:c1@1:", "approval_request:c1@2:", "approval_request:c2@0:",
		"approval_decision:c1@1:allow", "approval_decision:c1@2:deny", "approval_decision:c2@0:allow",
	}, kinds)
}
