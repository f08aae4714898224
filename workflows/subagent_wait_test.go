package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
)

// TestSubAgentWaitShowsOnTheParent: while a sub-agent's call waits for a
// person, its parent's status is waiting_approval: in the state Query
// (its pending approval naming the sub-agent), in AgentStatus and in the
// Web UI's details; once the call is decided through the parent it is
// running again, and the run ends as usual.
func TestSubAgentWaitShowsOnTheParent(t *testing.T) {
	recordSubAgentWaiting(t)
}

// recordSubAgentWaiting records (and checks) a parent whose one sub-agent's
// call waits for approval, approved through the parent: the
// subagent-approval-status change's path.
func recordSubAgentWaiting(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "one")),
		answer(text("done")),
	}, okTool("risky"))
	require.NoError(t, agentclient.CheckSearchAttributes(context.Background(), h.c, "default"))
	h.scripted.Add("child", childScript("risky"))
	in := h.subAgentInput("go", nil, agent.SubAgent{Name: "helper", Description: "risks",
		Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"risky"}})
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"risky"}}
	run := h.start(in)
	child := run.GetID() + "/task-1-1-t1"

	st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 1 })
	require.Equal(t, agentapi.StatusWaitingApproval, st.Status)
	p := st.PendingApprovals[0]
	require.Equal(t, "c1", p.ToolCallID)
	require.Equal(t, &agent.SubAgentRef{Agent: "helper", WorkflowID: child}, p.SubAgent)
	requireFoundWaiting(t, h.c, run.GetID())
	details := currentDetails(t, h.c, run.GetID())
	require.Contains(t, details, "**waiting_approval**")
	require.Contains(t, details, "waiting for approval: `risky` risky (c1) in sub-agent helper ("+child+")")

	h.updateOnce(run.GetID(), "approve-1", agentapi.UpdateApprove,
		agentapi.ApproveRequest{ToolCallID: "c1", WorkflowID: child, Decision: agent.ApprovalAllow}, nil)
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.False(t, res.Messages[len(res.Messages)-2].IsError, res.Messages[len(res.Messages)-2].Content)

	// The AgentStatus upserts of the parent's history, in order.
	hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	var statuses []string
	for _, e := range hist.GetEvents() {
		// GetVersion's upsert of TemporalChangeVersion has no AgentStatus.
		if p := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()["AgentStatus"]; p != nil {
			statuses = append(statuses, payloadString(t, p))
		}
	}
	require.Equal(t, []string{agentapi.StatusRunning, agentapi.StatusWaitingApproval, agentapi.StatusRunning, agentapi.StatusEnded}, statuses)
	require.Equal(t, 1, markers(hist, "subagent-approval-status"))
	return h.c, run.GetID()
}

func payloadString(t *testing.T, p *commonpb.Payload) string {
	t.Helper()
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &s))
	return s
}
