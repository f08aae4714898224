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

func waitApprovals(h *harness, run client.WorkflowRun, n int) agentapi.RunState {
	return h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == n })
}

// Sequential calls wait one at a time; allow runs the call, deny blocks it
// with the reason as pi's beforeToolCall block does, always lets the tool
// through for the rest of the run.
func TestApprovalsSequential(t *testing.T) {
	r := &recorder{}
	h := newHarness(t, []llm.ScriptedResponse{
		answer(bashCall("c1", "ls"), bashCall("c2", "rm -rf build"), bashCall("c3", "git push"), bashCall("c4", "rm x")),
		answer(text("done")),
	}, r.tool("bash", false))
	in := h.input("go", "bash")
	in.ToolExecution = agent.ExecutionSequential
	in.Approval = &agent.ApprovalPolicy{Rules: []agent.ApprovalRule{{Tool: "bash", Arg: "command", Pattern: `^(rm|git push)\b`}}}
	run := h.start(in)

	st := waitApprovals(h, run, 1)
	require.Equal(t, "waiting_approval", st.Status)
	require.Equal(t, "c2", st.PendingApprovals[0].ToolCallID)
	require.Contains(t, st.PendingApprovals[0].Reason, `bash command matches`)
	require.ErrorContains(t, approve(t, h, run, "c9", "allow", ""), `tool call "c9" is not waiting for approval`)
	require.ErrorContains(t, approve(t, h, run, "c2", "maybe", ""), "want allow, deny or always")
	require.NoError(t, approve(t, h, run, "c2", "deny", "not on my machine"))
	waitApprovals(h, run, 1)
	require.NoError(t, approve(t, h, run, "c3", "always", ""))
	res := h.result(run)

	require.Equal(t, []string{"c1", "c3", "c4"}, r.ran, "c4 ran without asking: bash was allowed for the rest of the run")
	require.Equal(t, "not on my machine", agent.TextOf(res.Messages[3].Content))
	require.True(t, res.Messages[3].IsError)
	events := h.events(run)
	var kinds []string
	for _, e := range events {
		if e.Type == agent.EventApprovalRequest || e.Type == agent.EventApprovalDecision {
			kinds = append(kinds, string(e.Type)+":"+e.ToolCallID+":"+e.Approval.Decision)
		}
	}
	require.Equal(t, []string{"approval_request:c2:", "approval_decision:c2:deny", "approval_request:c3:", "approval_decision:c3:always"}, kinds)
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
	// What `temporal workflow list --query "AgentStatus='waiting_approval'"` runs.
	require.Eventually(t, func() bool {
		resp, err := h.c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("AgentStatus='waiting_approval' AND WorkflowId='%s'", run.GetID()),
		})
		return err == nil && len(resp.GetExecutions()) == 1
	}, 10*time.Second, 100*time.Millisecond, "the run is found by its AgentStatus")
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

// Silence past the deadline blocks the call with a clear reason. The test
// reads the wait from the run's events, not its state: the call is pending
// for only its 1 s, which a poll of a loaded machine's Query can miss.
func TestApprovalTimeout(t *testing.T) {
	r := &recorder{}
	h := newHarness(t, []llm.ScriptedResponse{answer(call("c1", "write")), answer(text("blocked"))}, r.tool("write", false))
	in := h.input("go", "write")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"write"}, Timeout: "1s"}
	run := h.start(in)
	res := h.result(run)
	require.Empty(t, r.ran)
	require.Equal(t, "No approval within 1s: the tool call was blocked", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	var request, decision *agent.Event
	for _, e := range h.events(run) {
		switch e.Type {
		case agent.EventApprovalRequest:
			request = &e
		case agent.EventApprovalDecision:
			decision = &e
		}
	}
	require.NotNil(t, request)
	require.NotZero(t, request.Approval.Deadline, "the request carries its deadline")
	require.NotNil(t, decision)
	require.Equal(t, agent.ApprovalDeny, decision.Approval.Decision)
	require.Equal(t, "No approval within 1s: the tool call was blocked", decision.Approval.Reason)
}

// An abort during the wait blocks the call and ends the run as aborted.
func TestApprovalAbort(t *testing.T) {
	r := &recorder{}
	h := newHarness(t, []llm.ScriptedResponse{answer(call("c1", "write")), answer(text("never"))}, r.tool("write", false))
	in := h.input("go", "write")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"write"}}
	run := h.start(in)
	st := waitApprovals(h, run, 1)
	require.Zero(t, st.PendingApprovals[0].Deadline, "no timeout, no deadline")
	_, err := update(t, h.c, run, agentapi.UpdateAbort, map[string]any{})
	require.NoError(t, err)
	res := h.result(run)
	require.Empty(t, r.ran)
	require.Equal(t, "Run aborted while the tool call waited for approval", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
}
