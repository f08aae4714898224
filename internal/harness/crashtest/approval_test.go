package crashtest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// A worker killed while a session waits for a person: the wait is durable
// (a pending approval adds nothing to history and runs no activity), so a
// new worker picks the session up from history, takes the approve Update
// and runs the call. The command runs once, every event appears once and
// the sequence numbers have no gap. (The approve Update waits about 5 s:
// its workflow task first goes to the dead worker's sticky queue, and the
// server hands it to the normal queue after the sticky schedule-to-start
// timeout.)
func TestKillWorkerWhileSessionWaitsForApproval(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1")
	ctx := context.Background()
	id := "approval"
	_, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: e.queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: llm.ScriptedProviderName, ID: crashtest.ModelApproval},
			Tools:     []string{tools.BashToolName},
			Workspace: e.ws,
			Approval:  &agent.ApprovalPolicy{Tools: []string{tools.BashToolName}},
		}})
	require.NoError(t, err)
	var started agentapi.RunStatus
	require.NoError(t, agentclient.Update(ctx, e.c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, &started))

	// A Query is answered by a workflow task, which a loaded machine or a
	// dead worker delays past the Query's deadline: the waits retry it.
	status := func() string {
		st, err := agentclient.State(ctx, e.c, id)
		if err != nil {
			return ""
		}
		return st.Status
	}
	e.waitFor("the call to wait for approval", reachTimeout, func() bool { return status() == "waiting_approval" })
	st, err := agentclient.State(ctx, e.c, id)
	require.NoError(t, err)
	require.Len(t, st.PendingApprovals, 1)
	require.Equal(t, "call-approve", st.PendingApprovals[0].ToolCallID)

	e.killWorker(w1, "while the session waits for approval")
	e.startWorker("w2")
	var left agentapi.ApprovalStatus
	require.NoError(t, agentclient.Update(ctx, e.c, id, agentapi.UpdateApprove,
		agentapi.ApproveRequest{ToolCallID: "call-approve", Decision: agent.ApprovalAllow}, &left))
	require.Zero(t, left.Pending)
	e.waitFor("the run to end", runTimeout, func() bool { return status() == "idle" })

	require.Len(t, lines(e.path(crashtest.Marker), "approved"), 1, "the approved command ran once")
	events := e.events(id)
	for i, ev := range events {
		require.EqualValues(t, i+1, ev.Seq, "event sequence numbers are gap-free")
	}
	for _, typ := range []agent.EventType{agent.EventApprovalRequest, agent.EventApprovalDecision, agent.EventToolExecutionStart, agent.EventToolExecutionEnd} {
		require.Equal(t, 1, countEvents(events, typ, "call-approve"), "one %s", typ)
	}
	var end agent.Event
	for _, ev := range events {
		if ev.Type == agent.EventAgentEnd {
			end = ev
		}
	}
	require.Equal(t, agent.EventAgentEnd, end.Type, "the run ended")
	require.Contains(t, okText(t, end.Messages, "call-approve"), "approved-output")
	require.Len(t, end.Messages, 4, "prompt, tool call, its result, the answer: nothing lost or repeated")
	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1, "bash was scheduled once")
	require.Equal(t, int32(1), exec[0].Attempt)
}
