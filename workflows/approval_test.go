package workflows_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// recorder is a set of tools that note which calls ran.
type recorder struct {
	mu  sync.Mutex
	ran []string
}

func (r *recorder) tool(name string, readOnly bool) tools.FuncTool {
	t := tool(name, func(_ context.Context, c tools.Call) (agent.ToolResult, error) {
		r.mu.Lock()
		r.ran = append(r.ran, c.ID)
		r.mu.Unlock()
		return agent.TextResult(name + " ran"), nil
	})
	t.Def.ReadOnly = readOnly
	return t
}

func bashCall(id, command string) agent.Content {
	return agent.ToolCall(id, "bash", map[string]any{"command": command})
}

func approve(t *testing.T, h *harness, run client.WorkflowRun, id, decision, reason string) error {
	t.Helper()
	u, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), UpdateName: agentapi.UpdateApprove, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{agentapi.ApproveRequest{ToolCallID: id, Decision: decision, Reason: reason}},
	})
	if err != nil {
		return err
	}
	return u.Get(context.Background(), nil)
}

// requireFoundWaiting waits until what `temporal workflow list --query
// "AgentStatus='waiting_approval'"` runs finds the run.
func requireFoundWaiting(t *testing.T, c client.Client, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("AgentStatus='waiting_approval' AND WorkflowId='%s'", id),
		})
		return err == nil && len(resp.GetExecutions()) == 1
	}, 10*time.Second, 100*time.Millisecond, "the run is found by its AgentStatus")
}

func waitApprovals(h *harness, run client.WorkflowRun, n int) agentapi.RunState {
	return h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == n })
}

// In parallel mode every call that needs a person asks during preparation,
// decisions come in any order, and execution starts once all are decided;
// result messages stay in call order.
func TestApprovalsParallel(t *testing.T) {
	r := &recorder{}
	h := newHarness(t, []llm.ScriptedResponse{
		answer(call("c1", "write"), call("c2", "read"), call("c3", "write"), call("c4", "write")),
		answer(text("done")),
	}, r.tool("write", false), r.tool("read", true))
	in := h.input("go", "write", "read")
	in.Approval = &agent.ApprovalPolicy{Mutating: true}
	require.NoError(t, agentclient.CheckSearchAttributes(context.Background(), h.c, "default"))
	h.acts.SearchAttributes = true
	run := h.start(in)

	st := waitApprovals(h, run, 3)
	requireFoundWaiting(t, h.c, run.GetID())
	// The Web UI shows the current details through the metadata query.
	resp, err := h.c.QueryWorkflow(context.Background(), run.GetID(), "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var meta sdkpb.WorkflowMetadata
	require.NoError(t, resp.Get(&meta))
	require.Contains(t, meta.GetCurrentDetails(), "waiting for approval: `write`")
	require.Equal(t, []string{"c1", "c3", "c4"}, []string{st.PendingApprovals[0].ToolCallID, st.PendingApprovals[1].ToolCallID, st.PendingApprovals[2].ToolCallID})
	require.Empty(t, r.ran, "nothing runs while approvals are pending, not even the read")
	require.NoError(t, approve(t, h, run, "c4", "allow", ""))
	require.NoError(t, approve(t, h, run, "c3", "deny", ""))
	require.NoError(t, approve(t, h, run, "c1", "allow", ""))
	res := h.result(run)

	require.ElementsMatch(t, []string{"c1", "c2", "c4"}, r.ran)
	var ids []string
	for _, m := range res.Messages[2:6] {
		ids = append(ids, m.ToolCallID)
	}
	require.Equal(t, []string{"c1", "c2", "c3", "c4"}, ids)
	require.Equal(t, "Tool execution was denied by a person", agent.TextOf(res.Messages[4].Content))
}
