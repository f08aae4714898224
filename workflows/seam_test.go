package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// latestState queries the state of a workflow id's latest run.
func latestState(t *testing.T, h *harness, id string, ok func(agentapi.RunState) bool) agentapi.RunState {
	t.Helper()
	var st agentapi.RunState
	require.Eventually(t, func() bool {
		resp, err := h.c.QueryWorkflow(context.Background(), id, "", agentapi.QueryState)
		if err != nil || resp.Get(&st) != nil {
			return false
		}
		return ok(st)
	}, settleTimeout, 20*time.Millisecond)
	return st
}

// Everything a session acknowledged before a continue-as-new in the middle
// of a run is still in force after it: each setter, steering and follow-up
// messages, a tool a person allowed for the session, the usage and the
// event sequence. The paused run goes on with the configuration it
// started with, as pi's running loop does; the settings apply from the next
// prompt on.
func TestSessionSettingsSurviveAMidRunSeam(t *testing.T) {
	gate := make(chan struct{})
	script := []llm.ScriptedResponse{
		answer(call("g", "gate")),
		answer(call("m1", "mut")),
		answer(call("m2", "mut")), // after the seam: allowed without asking
		answer(text("done")),
		answer(text("after follow-up")),
	}
	rec := &recorder{}
	h := newHarness(t, script,
		tool("gate", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
			select {
			case <-gate:
				return agent.TextResult("open"), nil
			case <-ctx.Done():
				return agent.ToolResult{}, ctx.Err()
			}
		}),
		rec.tool("mut", false))
	// A scripted model answers by the number of assistant messages in its
	// context: the sixth answer is the one after the five of the first run.
	h.scripted.Add("script2", llm.Script{Responses: append(make([]llm.ScriptedResponse, 5), answer(text("second prompt")))})
	run := h.startSession(agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Tools: []string{"gate", "mut"}, Approval: &agent.ApprovalPolicy{Tools: []string{"mut"}}},
		// Turns 1 and 2 in the first run, then a seam before turn 3.
		ContinueAsNewAfterTurns: 2,
	})
	id := run.GetID()
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil))
	latestState(t, h, id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })

	// While the gate holds turn 1: every setter, two steering messages
	// (both injected at once in "all" mode) and a follow-up.
	update := func(name string, arg any) {
		t.Helper()
		require.NoError(t, agentclient.Update(context.Background(), h.c, id, name, arg, nil), name)
	}
	update(agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "high"})
	update(agentapi.UpdateSetSteeringMode, agentapi.SettingRequest{Mode: "all"})
	update(agentapi.UpdateSetFollowUpMode, agentapi.SettingRequest{Mode: "all"})
	update(agentapi.UpdateSetToolExecution, agentapi.SettingRequest{Mode: "sequential"})
	update(agentapi.UpdateSetModel, agentapi.SettingRequest{Model: &agent.ModelRef{Provider: "test", ID: "script2"}})
	update(agentapi.UpdateSteer, agent.UserText("s1", 0))
	update(agentapi.UpdateSteer, agent.UserText("s2", 0))
	update(agentapi.UpdateFollowUp, agent.UserText("f1", 0))
	close(gate)

	// Turn 2 asks for mut; "always" allows it for the rest of the session.
	latestState(t, h, id, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 1 })
	update(agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "m1", Decision: "always"})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var events []agent.Event
	err := agentclient.Watch(ctx, h.c, id, run.GetRunID(), agentclient.WatchOptions{Store: testenv.Store(t)}, func(e agent.Event) {
		events = append(events, e)
		if e.Type == agent.EventAgentEnd {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	for i, e := range events {
		require.EqualValues(t, i+1, e.Seq, "gap-free across the seam")
	}
	end := events[len(events)-1]
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:open", "user:s1", "user:s2", "assistant:", "toolResult:mut ran",
		"assistant:", "toolResult:mut ran", "assistant:done", "user:f1", "assistant:after follow-up"}, roles(end.Messages),
		"steering injected together (all mode set mid-run), the follow-up carried across the seam")
	require.Equal(t, []string{"m1", "m2"}, rec.ran)
	for _, e := range events {
		if e.Type == agent.EventApprovalRequest {
			require.Equal(t, "m1", e.ToolCallID, "m2 ran without asking: 'always' survived the seam")
		}
	}

	st := latestState(t, h, id, func(s agentapi.RunState) bool { return s.Status == "idle" })
	require.Equal(t, "high", st.ThinkingLevel)
	require.Equal(t, agent.QueueAll, st.SteeringMode)
	require.Equal(t, agent.QueueAll, st.FollowUpMode)
	require.Equal(t, agent.ExecutionSequential, st.ToolExecution)
	require.Equal(t, agent.ModelRef{Provider: "test", ID: "script2"}, st.Model)
	require.Equal(t, []string{"mut"}, st.AllowedTools)
	require.Equal(t, 5, st.Turn)
	desc, err := h.c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	require.NotEqual(t, run.GetRunID(), desc.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the session continued as new")

	// The paused run kept its own configuration; the next prompt takes the
	// settings.
	for i, req := range h.requests {
		require.Empty(t, req.Options.Reasoning, "turn %d of the paused run", i+1)
	}
	var rs agentapi.RunStatus
	require.NoError(t, agentclient.Update(context.Background(), h.c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, &rs))
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var answer string
	werr := agentclient.Watch(ctx, h.c, id, "", agentclient.WatchOptions{After: rs.After}, func(e agent.Event) {
		if e.Type == agent.EventAgentEnd {
			answer = agent.TextOf(e.Messages[len(e.Messages)-1].Content)
			cancel()
		}
	})
	require.Equal(t, "second prompt", answer, "watch: %v", werr)
	require.Equal(t, "second prompt", answer, "the next prompt uses the model set mid-run")
	last := h.requests[len(h.requests)-1]
	require.Equal(t, "high", last.Options.Reasoning, "and the thinking level set mid-run")
}
