package workflows_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// abortAware is a tool that answers "<name> done", or, when its context
// is cancelled from the start (after an abort), an error result saying
// it saw the abort, as the built-in tools do.
func abortAware(name string) func(activities.ExecuteInput) (activities.ExecuteOutput, error) {
	return func(in activities.ExecuteInput) (activities.ExecuteOutput, error) {
		if in.Aborted {
			return activities.ExecuteOutput{Result: agent.ErrorResult(name + " saw the abort"), IsError: true}, nil
		}
		return activities.ExecuteOutput{Result: agent.TextResult(name + " done")}, nil
	}
}

// An abort cancels the running tool, which pi then still runs with an
// aborted signal, as it runs the calls after it; the next model turn
// ends as aborted without calling the model.
func TestUnitAbortCancelsToolsAndEndsWithoutCallingTheModel(t *testing.T) {
	r := newUnitRun(t, calls(1, "wait", "later"), says("never")).toolFunc("wait", abortAware("wait")).toolFunc("later", abortAware("later"))
	r.took("wait-1-0", time.Hour, time.Hour)
	in := r.input("go", "wait", "later")
	in.ToolExecution = agent.ExecutionSequential
	r.at(time.Minute, func() {
		updateResultOf(r, agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "stop"},
			func(s agentapi.AbortStatus) { require.False(t, s.AlreadyAborted) })
		updateResultOf(r, agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "again"},
			func(s agentapi.AbortStatus) { require.True(t, s.AlreadyAborted) })
	})
	res, _ := r.run(in)
	var aborted []bool
	for _, e := range r.executed {
		aborted = append(aborted, e.Aborted)
	}
	// The first attempt was cancelled (the test environment answers a
	// cancelled activity at once, as a tool that honours its context does);
	// the call ran again with the abort, and the next call with it.
	r.env.AssertActivityNumberOfCalls(t, "ExecuteToolCall", 3)
	require.Equal(t, []string{"wait-1-0", "later-1-1"}, r.executedIDs())
	require.Equal(t, []bool{true, true}, aborted)
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	last := lastMessage(res)
	require.Equal(t, agent.AbortedErrorMessage, last.ErrorMessage)
	require.Empty(t, last.Content)
	require.Len(t, r.modelTurns, 1, "the aborted turn does not call the model")
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:wait saw the abort", "toolResult:later saw the abort",
		"assistant:"}, transcript(res))
	st := r.state()
	require.True(t, st.Aborted)
	require.Equal(t, "stop", st.AbortReason)
}

// A workflow cancelled from the CLI or the Web UI ends as an abort does,
// and reports Canceled with the result as its details.
func TestUnitWorkflowCancelEndsLikeAbort(t *testing.T) {
	r := newUnitRun(t, calls(1, "wait"), says("never")).toolFunc("wait", abortAware("wait"))
	r.took("wait-1-0", time.Hour, time.Hour)
	r.at(time.Minute, func() { r.env.CancelWorkflow() })
	r.mockTools()
	r.env.ExecuteWorkflow(agentapi.AgentLoopWorkflow, r.input("go", "wait"))
	var cancelled *temporal.CanceledError
	require.True(t, errors.As(r.env.GetWorkflowError(), &cancelled), "%v", r.env.GetWorkflowError())
	var res agentapi.AgentLoopResult
	require.NoError(t, cancelled.Details(&res))
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	require.Equal(t, "wait saw the abort", agent.TextOf(res.Messages[2].Content))
	evs := r.events()
	require.Equal(t, agent.EventAgentEnd, evs[len(evs)-1].Type)
	require.Equal(t, "workflow cancelled", r.state().AbortReason)
}
