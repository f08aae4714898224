package workflows_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

func (h *harness) startSession(in agentapi.SessionInput) client.WorkflowRun {
	h.t.Helper()
	if in.Model.Provider == "" {
		in.Model = agent.ModelRef{Provider: "test", ID: "script"}
	}
	run, err := h.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: "session-" + testenv.Suffix(), TaskQueue: h.queue,
	}, agentapi.SessionWorkflow, in)
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = h.c.TerminateWorkflow(context.Background(), run.GetID(), "", "test over") })
	return run
}

// sessionUpdate sends a session Update and decodes its answer into out.
func (h *harness) sessionUpdate(run client.WorkflowRun, name string, arg any, out any) error {
	var args []any
	if arg != nil {
		args = []any{arg}
	}
	u, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), UpdateName: name, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return u.Get(context.Background(), out)
}

// waitRunEnd follows the session's events until its n-th agent_end.
func (h *harness) waitRunEnd(run client.WorkflowRun, n int) []agent.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var all []agent.Event
	ends := 0
	err := agentclient.Watch(ctx, h.c, run.GetID(), "", agentclient.WatchOptions{}, func(e agent.Event) {
		all = append(all, e)
		if e.Type == agent.EventAgentEnd {
			ends++
			if ends == n {
				cancel()
			}
		}
	})
	require.ErrorIs(h.t, err, context.Canceled, "run %d did not end", n)
	return all
}

// sessionState is the state of the session's latest run.
func (h *harness) sessionState(run client.WorkflowRun) agentapi.RunState {
	h.t.Helper()
	resp, err := h.c.QueryWorkflow(context.Background(), run.GetID(), "", agentapi.QueryState)
	require.NoError(h.t, err)
	var st agentapi.RunState
	require.NoError(h.t, resp.Get(&st))
	return st
}

func TestSessionRunsPromptAfterPrompt(t *testing.T) {
	g := newGate()
	h := newHarness(t, []llm.ScriptedResponse{
		answer(text("first"), call("c1", "wait")),
		answer(text("done one")),
		answer(text("second")),
	}, g.tool("wait"))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"wait"}, SystemPrompt: "sys"}})

	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateContinue, nil, nil), "No messages to continue from")
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{}, nil), "prompt is empty")
	var st agentapi.RunStatus
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "one"}, &st))
	require.Equal(t, 1, st.Run)
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	err := h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "too soon"}, nil)
	require.ErrorContains(t, err, "Agent is already processing a prompt. Use /steer or /followup (starter steer, starter follow-up) to queue messages, or wait for completion.")
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateContinue, nil, nil), "Agent is already processing. Wait for completion before continuing.")
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateReset, nil, nil), "abort it")
	close(g.release)
	h.waitRunEnd(run, 1)
	require.Equal(t, "idle", h.sessionState(run).Status)
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateContinue, nil, nil), "Cannot continue from message role: assistant")

	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "two"}, &st))
	require.Equal(t, 2, st.Run)
	events := h.waitRunEnd(run, 2)
	last := events[len(events)-1]
	require.Equal(t, []string{"user:two", "assistant:second"}, roles(last.Messages), "agent_end carries the run's new messages")
	req := h.requests[2]
	require.Equal(t, "sys", req.SystemPrompt)
	require.Equal(t, []string{"user:one", "assistant:first", "toolResult:released", "assistant:done one", "user:two"}, roles(req.Messages),
		"the second run's model sees the whole transcript")

	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateReset, nil, nil))
	require.Zero(t, h.sessionState(run).Messages)
}

func roles(ms []agent.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role+":"+agent.TextOf(m.Content))
	}
	return out
}

func TestSessionSetters(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(text("a"))})
	run := h.startSession(agentapi.SessionInput{})
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "max"}, nil), "want off, minimal")
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "high"}, nil))
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateSetModel, agentapi.SettingRequest{Model: &agent.ModelRef{Provider: "nope", ID: "x"}}, nil),
		`unknown model provider "nope"`)
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateSetSteeringMode, agentapi.SettingRequest{Mode: "some"}, nil), "one-at-a-time or all")
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateSetSteeringMode, agentapi.SettingRequest{Mode: "all"}, nil))
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateSetFollowUpMode, agentapi.SettingRequest{Mode: "later"}, nil), "one-at-a-time or all")
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateSetFollowUpMode, agentapi.SettingRequest{Mode: "all"}, nil))
	require.ErrorContains(t, h.sessionUpdate(run, agentapi.UpdateSetToolExecution, agentapi.SettingRequest{Mode: "fast"}, nil), "parallel or sequential")
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateSetToolExecution, agentapi.SettingRequest{Mode: "sequential"}, nil))
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateSetModel, agentapi.SettingRequest{Model: &agent.ModelRef{Provider: "test", ID: "script"}}, nil))
	st := h.sessionState(run)
	require.Equal(t, "high", st.ThinkingLevel)
	require.Equal(t, agent.QueueAll, st.SteeringMode)
	require.Equal(t, agent.ExecutionSequential, st.ToolExecution)
	require.Equal(t, agent.QueueAll, st.FollowUpMode)
	require.Equal(t, agent.ModelRef{Provider: "test", ID: "script"}, st.Model)
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil))
	h.waitRunEnd(run, 1)
	require.Equal(t, "high", h.requests[0].Options.Reasoning, "the run uses the thinking level set before it")
}

// A session with a 500-turn run continues as new every 100 turns, between
// turns, and a client following its events sees one gap-free stream.
func TestSessionContinuesAsNewWithoutAGap(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	if testing.Short() {
		t.Skip("500 turns")
	}
	const turns = 500
	var script []llm.ScriptedResponse
	for i := 0; i < turns; i++ {
		script = append(script, answer(text("step"), call("c", "tick")))
	}
	script = append(script, answer(text("finished")), answer(text("followed up")))
	var ticks atomic.Int32
	h := newHarness(t, script, tool("tick", func(context.Context, tools.Call) (agent.ToolResult, error) {
		ticks.Add(1)
		return agent.TextResult("tock"), nil
	}))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"tick"}}, ContinueAsNewAfterTurns: 100})
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil))
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdateFollowUp, agent.UserText("queued across the seams", 0), nil))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var seqs []int64
	var end agent.Event
	ends := 0
	err := agentclient.Watch(ctx, h.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Store: testenv.Store(t)}, func(e agent.Event) {
		seqs = append(seqs, e.Seq)
		if e.Type == agent.EventAgentEnd {
			ends++
			end = e
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	for i, s := range seqs {
		require.EqualValues(t, i+1, s, "event sequence numbers are gap-free across continue-as-new")
	}
	require.Equal(t, 1, ends)
	require.EqualValues(t, turns, ticks.Load(), "no tool call ran twice or was lost at a seam")
	// prompt, 500 x (assistant, tool result), the answer, the follow-up
	// (injected when the agent would stop) and its answer
	require.Equal(t, 1+2*turns+3, len(end.Messages))
	require.Equal(t, "queued across the seams", agent.TextOf(end.Messages[2+2*turns].Content))
	require.Equal(t, "followed up", agent.TextOf(end.Messages[3+2*turns].Content))

	st := h.sessionState(run)
	require.Equal(t, "idle", st.Status)
	require.Equal(t, turns+2, st.Turn)
	desc, err := h.c.DescribeWorkflow(context.Background(), run.GetID(), "")
	require.NoError(t, err)
	require.NotEqual(t, run.GetRunID(), desc.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the session continued as new")
	require.Less(t, desc.RawResponse.GetWorkflowExecutionInfo().GetHistoryLength(), int64(2000), "the current run's history stays short")

	// Every run of the chain, from visibility: far below the server's
	// limits (warning at 10,240 events and 10 MB, termination at 51,200
	// events and 50 MB).
	var runs []*workflowpb.WorkflowExecutionInfo
	require.Eventually(t, func() bool {
		resp, err := h.c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s'", run.GetID()),
		})
		require.NoError(t, err)
		runs = resp.GetExecutions()
		return len(runs) >= turns/100+1
	}, 10*time.Second, 100*time.Millisecond, "visibility lists every run of the session")
	for _, r := range runs {
		t.Logf("run %s: %s, %d events, %d bytes", r.GetExecution().GetRunId(), r.GetStatus(), r.GetHistoryLength(), r.GetHistorySizeBytes())
		if r.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			continue // visibility has no size for a run still open
		}
		require.Less(t, r.GetHistoryLength(), int64(2000), "each run's history stays short")
		require.Less(t, r.GetHistorySizeBytes(), int64(2<<20), "each run's history stays small")
	}
}
