package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// updateOnce sends an Update with a given ID through the client library.
func (h *harness) updateOnce(id, updateID, name string, arg, out any) {
	h.t.Helper()
	require.NoError(h.t, agentclient.UpdateWithOptions(context.Background(), h.c, id, name, arg, out,
		agentclient.UpdateOptions{ID: updateID}), "%s %s", name, updateID)
}

// waitSeam waits until the workflow id's latest run is not prev, and
// returns it.
func (h *harness) waitSeam(id, prev string) string {
	h.t.Helper()
	var now string
	require.Eventually(h.t, func() bool {
		d, err := h.c.DescribeWorkflow(context.Background(), id, "")
		if err != nil {
			return false
		}
		info := d.RawResponse.GetWorkflowExecutionInfo()
		now = info.GetExecution().GetRunId()
		return now != prev && info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}, settleTimeout, 20*time.Millisecond, "no continue-as-new after run %s", prev)
	return now
}

// waitLatest polls the state Query of the workflow id's latest run until
// ok accepts it.
func (h *harness) waitLatest(id string, ok func(agentapi.RunState) bool) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		resp, err := h.c.QueryWorkflow(context.Background(), id, "", agentapi.QueryState)
		var st agentapi.RunState
		return err == nil && resp.Get(&st) == nil && ok(st)
	}, settleTimeout, 20*time.Millisecond)
}

func (h *harness) latestRun(id string) string {
	h.t.Helper()
	d, err := h.c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(h.t, err)
	return d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}

// Every session Update sent twice with the same ID is applied once: within
// one workflow run (the server answers the repeat) and across
// continue-as-new (the session carries the IDs it applied). The session
// continues as new after every turn here, so each repeat crosses a seam.
// Its first prompt comes with its start (Update-with-Start), and repeating
// that request starts nothing and runs nothing.
func TestUpdatesAreAppliedOnceAcrossSeams(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(text("one")),
		answer(text("two")),
		answer(text("three")),
	})
	ctx := context.Background()
	in := agentapi.SessionInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}},
		ContinueAsNewAfterTurns: 1}
	id := "session-" + testenv.Suffix()
	t.Cleanup(func() { _ = h.c.TerminateWorkflow(ctx, id, "", "test over") })
	prompt := &agentapi.PromptRequest{Text: "first"}
	started, st, err := agentclient.StartSession(ctx, h.c, id, h.queue, in, prompt, agentclient.UpdateOptions{ID: "p1"})
	require.NoError(t, err)
	require.Equal(t, 1, st.Run)
	// The run the prompt started, not the latest: its one turn may be over
	// and the session continued as new before a Describe here would run.
	first := started.GetRunID()
	run := h.c.GetWorkflow(ctx, id, "")
	h.waitRunEnd(run, 1)
	b := h.waitSeam(id, first)

	// The start and its prompt again, after the seam: nothing new.
	_, again, err := agentclient.StartSession(ctx, h.c, id, h.queue, in, prompt, agentclient.UpdateOptions{ID: "p1"})
	require.NoError(t, err)
	require.Equal(t, st, again, "the repeat gets the first answer")
	require.Equal(t, int32(1), h.modelCalls.Load(), "the repeated prompt started no run")

	var q, q2 agentapi.QueueStatus
	h.updateOnce(id, "s1", agentapi.UpdateSteer, agent.UserText("steer", 0), &q)
	h.updateOnce(id, "s1", agentapi.UpdateSteer, agent.UserText("steer", 0), &q2)
	require.Equal(t, 1, q.Queued)
	require.Equal(t, q, q2, "a repeat within the run is the server's: the first answer")
	h.updateOnce(id, "f1", agentapi.UpdateFollowUp, agent.UserText("follow", 0), &q)
	require.Equal(t, 1, q.Queued)
	h.updateOnce(id, "t1", agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "high"}, nil)
	require.Equal(t, b, h.latestRun(id))

	var st2 agentapi.RunStatus
	h.updateOnce(id, "p2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "second"}, &st2)
	require.Equal(t, 2, st2.Run)
	h.waitRunEnd(run, 2)
	last := h.waitSeam(id, b)
	require.Eventually(t, func() bool { return h.sessionState(run).Status == "idle" }, 10*time.Second, 20*time.Millisecond)
	before := h.sessionState(run)
	require.Empty(t, before.Steering)
	require.Empty(t, before.FollowUps)
	calls := h.modelCalls.Load()
	require.Equal(t, int32(3), calls, "the second prompt's turn and its follow-up's")
	h.updateOnce(id, "t2", agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "low"}, nil)

	// Every Update again, each across at least one seam.
	require.NotEqual(t, b, h.latestRun(id))
	var rs agentapi.RunStatus
	h.updateOnce(id, "p1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "first"}, &rs)
	require.Equal(t, st, rs)
	h.updateOnce(id, "p2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "second"}, &rs)
	require.Equal(t, st2, rs)
	h.updateOnce(id, "s1", agentapi.UpdateSteer, agent.UserText("steer", 0), &q)
	require.Equal(t, 1, q.Queued, "the first answer")
	h.updateOnce(id, "f1", agentapi.UpdateFollowUp, agent.UserText("follow", 0), &q)
	require.Equal(t, 1, q.Queued)
	h.updateOnce(id, "t1", agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "high"}, nil)

	time.Sleep(300 * time.Millisecond)
	after := h.sessionState(run)
	require.Equal(t, "idle", after.Status, "no repeated prompt started a run")
	require.Equal(t, calls, h.modelCalls.Load())
	require.Equal(t, before.Messages, after.Messages)
	require.Empty(t, after.Steering, "the repeated steer was not queued again")
	require.Empty(t, after.FollowUps, "the repeated follow-up was not queued again")
	require.Equal(t, "low", after.ThinkingLevel, "the repeated setter did not undo the later one")
	require.Equal(t, last, h.latestRun(id), "repeats start no run and cause no seam")
}

// approve and abort sent again after a seam are applied once: a repeated
// approve is accepted though no call waits any more, and a repeated abort
// does not abort the run that is going on now.
func TestApproveAndAbortAppliedOnceAcrossASeam(t *testing.T) {
	g := newGate()
	ok := func(context.Context, tools.Call) (agent.ToolResult, error) { return agent.TextResult("ok"), nil }
	h := newHarness(t, []llm.ScriptedResponse{
		answer(call("c1", "quick")),
		answer(text("done")),
		answer(call("c2", "wait")),
		answer(text("never: the run was aborted, its last turn made no call")),
		answer(call("c3", "fast")),
		answer(call("c4", "wait")),
		answer(text("end")),
	}, tool("quick", ok), tool("fast", ok), g.tool("wait"))
	run := h.startSession(agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Tools: []string{"quick", "fast", "wait"},
			Approval: &agent.ApprovalPolicy{Tools: []string{"quick"}}},
		ContinueAsNewAfterTurns: 1,
	})
	id := run.GetID()
	first := run.GetRunID()
	h.updateOnce(id, "p1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 1 })
	var ap agentapi.ApprovalStatus
	h.updateOnce(id, "a1", agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"}, &ap)
	require.Equal(t, 0, ap.Pending)
	h.waitRunEnd(run, 1)
	h.waitSeam(id, first)

	var ap2 agentapi.ApprovalStatus
	h.updateOnce(id, "a1", agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"}, &ap2)
	require.Equal(t, ap, ap2, "a repeated approve is answered, not refused (no call waits)")

	h.updateOnce(id, "p2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "wait"}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	var ab agentapi.AbortStatus
	h.updateOnce(id, "ab1", agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "stop"}, &ab)
	require.False(t, ab.AlreadyAborted)
	h.waitRunEnd(run, 2)
	aborted := h.latestRun(id)

	// The next run's first turn calls fast, then it continues as new and
	// its second turn waits: the abort's repeat comes after a seam.
	h.updateOnce(id, "p3", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "wait again"}, nil)
	h.waitSeam(id, aborted)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 && s.PendingToolCalls[0] == "c4" })
	var ab2 agentapi.AbortStatus
	h.updateOnce(id, "ab1", agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "stop"}, &ab2)
	require.Equal(t, ab, ab2)
	require.False(t, h.sessionState(run).Aborted, "the repeated abort did not abort the run going on now")
	close(g.release)
	evs := h.waitRunEnd(run, 3)
	end := evs[len(evs)-1]
	require.Equal(t, "end", agent.TextOf(end.Messages[len(end.Messages)-1].Content))
}
