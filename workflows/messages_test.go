package workflows_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// gate is a tool that runs until released or cancelled, and says which.
type gate struct {
	release chan struct{}
	sawDone atomic.Bool
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

func (g *gate) tool(name string) tools.FuncTool {
	return tool(name, func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		select {
		case <-g.release:
			return agent.TextResult("released"), nil
		case <-ctx.Done():
			g.sawDone.Store(true)
			return agent.ToolResult{}, errors.New("tool saw the abort")
		}
	})
}

func update(t *testing.T, c client.Client, run client.WorkflowRun, name string, arg any) (agentapi.QueueStatus, error) {
	t.Helper()
	h, err := c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), RunID: run.GetRunID(), UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return agentapi.QueueStatus{}, err
	}
	var st agentapi.QueueStatus
	return st, h.Get(context.Background(), &st)
}

func TestSteerAndFollowUpUpdates(t *testing.T) {
	g := newGate()
	h := newHarness(t, []llmResponse{
		answer(text("working"), call("c1", "wait")),
		answer(text("after steering")),
		answer(text("after follow-up")),
	}, g.tool("wait"))
	run := h.start(h.input("go", "wait"))
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })

	rejected := append(badQueuedMessages(), badQueuedMessage{"just a string", "cannot unmarshal"})
	for _, r := range rejected {
		_, err := update(t, h.c, run, agentapi.UpdateSteer, r.arg)
		require.Error(t, err)
		require.Contains(t, err.Error(), r.want)
	}
	st, err := update(t, h.c, run, agentapi.UpdateSteer, map[string]any{"content": "steer me"})
	require.NoError(t, err)
	require.Equal(t, 1, st.Queued)
	st, err = update(t, h.c, run, agentapi.UpdateFollowUp, agent.UserText("and then this", 0))
	require.NoError(t, err)
	require.Equal(t, 1, st.Queued)
	state := h.waitState(run, func(agentapi.RunState) bool { return true })
	require.Len(t, state.Steering, 1)
	require.Len(t, state.FollowUps, 1)
	close(g.release)

	res := h.result(run)
	roles := []string{}
	for _, m := range res.Messages {
		roles = append(roles, m.Role+":"+agent.TextOf(m.Content))
	}
	require.Equal(t, []string{"user:go", "assistant:working", "toolResult:released", "user:steer me",
		"assistant:after steering", "user:and then this", "assistant:after follow-up"}, roles)

	_, err = update(t, h.c, run, agentapi.UpdateSteer, agent.UserText("too late", 0))
	require.Error(t, err, "a run that has ended refuses messages")
}

func TestSignalTwins(t *testing.T) {
	g := newGate()
	h := newHarness(t, []llmResponse{answer(call("c1", "wait")), answer(text("steered")), answer(text("followed"))}, g.tool("wait"))
	run := h.start(h.input("go", "wait"))
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	ctx := context.Background()
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.SignalSteer, map[string]any{"content": ""}))
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.SignalSteer, "not a message"))
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.SignalSteer, map[string]any{"content": "by signal"}))
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.SignalFollowUp, map[string]any{"content": "later"}))
	close(g.release)
	res := h.result(run)
	require.Len(t, res.Messages, 7)
	require.Equal(t, "by signal", agent.TextOf(res.Messages[3].Content), "the invalid signals were dropped")
	require.Equal(t, "later", agent.TextOf(res.Messages[5].Content))
	requireNoFailedTasks(t, h.c, run)
}

func TestAbortCancelsToolsAndEndsWithoutCallingTheModel(t *testing.T) {
	g := newGate()
	later := atomic.Bool{}
	h := newHarness(t, []llmResponse{answer(call("c1", "wait"), call("c2", "later")), answer(text("never"))},
		g.tool("wait"),
		tool("later", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
			later.Store(ctx.Err() != nil)
			return agent.TextResult("later ran"), nil
		}))
	in := h.input("go", "wait", "later")
	in.ToolExecution = agent.ExecutionSequential
	run := h.start(in)
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })

	h2, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), UpdateName: agentapi.UpdateAbort, Args: []any{agentapi.AbortRequest{Reason: "stop"}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	var st agentapi.AbortStatus
	require.NoError(t, h2.Get(context.Background(), &st))
	require.False(t, st.AlreadyAborted)

	res := h.result(run)
	require.True(t, g.sawDone.Load(), "the running tool saw a cancelled context")
	require.True(t, later.Load(), "a tool started after the abort runs with a cancelled context, as in pi")
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	last := lastMessage(res)
	require.Equal(t, agent.AbortedErrorMessage, last.ErrorMessage)
	require.Empty(t, last.Content)
	require.EqualValues(t, 1, h.modelCalls.Load(), "the aborted turn does not call the model")
	require.Equal(t, "tool saw the abort", agent.TextOf(res.Messages[2].Content))
	require.True(t, res.Messages[2].IsError)
}

func TestWorkflowCancelEndsLikeAbort(t *testing.T) {
	g := newGate()
	h := newHarness(t, []llmResponse{answer(call("c1", "wait")), answer(text("never"))}, g.tool("wait"))
	run := h.start(h.input("go", "wait"))
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	require.NoError(t, h.c.CancelWorkflow(context.Background(), run.GetID(), run.GetRunID()))

	err := run.Get(context.Background(), nil)
	var cancelled *temporal.CanceledError
	require.True(t, errors.As(err, &cancelled), "%v", err)
	var res agentapi.AgentLoopResult
	require.NoError(t, cancelled.Details(&res))
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	require.True(t, g.sawDone.Load())
	events := h.events(run)
	require.Equal(t, agent.EventAgentEnd, events[len(events)-1].Type)
	requireNoFailedTasks(t, h.c, run)
}

func TestEventsAndStateQueries(t *testing.T) {
	g := newGate()
	h := newHarness(t, []llmResponse{answer(text("a"), call("c1", "wait")), answer(text("b"))}, g.tool("wait"))
	run := h.start(h.input("go", "wait"))
	st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	require.Equal(t, "running", st.Status)
	require.Equal(t, 1, st.Turn)
	require.Equal(t, []string{"c1"}, st.PendingToolCalls)
	close(g.release)
	h.result(run)

	all := h.events(run)
	for i, e := range all {
		require.EqualValues(t, i+1, e.Seq)
	}
	resp, err := h.c.QueryWorkflow(context.Background(), run.GetID(), run.GetRunID(), agentapi.QueryEvents, agentapi.EventsQuery{After: 5, Limit: 3})
	require.NoError(t, err)
	var page agentapi.EventsPage
	require.NoError(t, resp.Get(&page))
	require.Len(t, page.Events, 3)
	require.EqualValues(t, 6, page.Events[0].Seq)
	require.Equal(t, all[5].Type, page.Events[0].Type)
	require.EqualValues(t, len(all), page.Last)
	require.True(t, page.Done)
}

type llmResponse = llm.ScriptedResponse

// badQueuedMessage is a steer or follow-up Update's argument the validator
// refuses, and what its reason says.
type badQueuedMessage struct {
	arg  any
	want string
}

// badQueuedMessages are the messages a queue refuses whatever the layer:
// empty, not the user's, of an unknown block type, over the size limit.
func badQueuedMessages() []badQueuedMessage {
	return []badQueuedMessage{
		{agent.Message{Role: agent.RoleUser}, "message is empty"},
		{agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text("")}}, "message is empty"},
		{agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("hi")}}, `role user, not "assistant"`},
		{agent.Message{Content: []agent.Content{{Type: "video"}}}, `unknown content block type "video"`},
		{agent.UserText(strings.Repeat("x", agentapi.MaxQueuedMessageBytes), 0), "the limit is"},
	}
}
