package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// A model turn that fails for good ends the run as pi ends a failed call:
// an assistant message with stopReason error and the provider's words,
// keeping the partial answer the activity passed along, and counting
// what the provider billed.
func TestUnitModelFailureEndsTheTurnWithTheProvidersError(t *testing.T) {
	r := newUnitRun(t)
	partial := agent.Message{Role: agent.RoleAssistant, API: "anthropic-messages", Content: []agent.Content{agent.Text("half an ans")},
		Usage: &agent.Usage{Input: 1000, TotalTokens: 1000, Cost: agent.Cost{Input: 0.05, Total: 0.05}}}
	billed := agent.Usage{Input: 500, TotalTokens: 500, Cost: agent.Cost{Input: 0.02, Total: 0.02}}
	r.failModel = temporal.NewNonRetryableApplicationError("401 authentication_error: invalid x-api-key", "ProviderError", nil,
		partial, billed)
	res, evs := r.run(r.input("go"))
	require.Equal(t, agent.StopReasonError, res.StopReason)
	require.Equal(t, "401 authentication_error: invalid x-api-key", res.ErrorMessage)
	last := lastMessage(res)
	require.Equal(t, "half an ans", agent.TextOf(last.Content))
	require.Equal(t, "anthropic-messages", last.API)
	require.Equal(t, res.ErrorMessage, last.ErrorMessage)
	require.InDelta(t, 0.07, res.Usage.Cost.Total, 1e-9, "the partial answer's usage and the earlier attempts' both count")
	require.Equal(t, []agent.EventType{agent.EventAgentStart, agent.EventTurnStart, agent.EventMessageStart, agent.EventMessageEnd,
		agent.EventMessageStart, agent.EventMessageEnd, agent.EventTurnEnd, agent.EventAgentEnd}, eventTypes(evs))
}

// Tool failures become error results the model sees, never a failed
// run: a tool's own error, a call past its timeouts (in words), a tool the
// run does not have, and a call a beforeToolCall hook blocked.
func TestUnitToolFailuresBecomeErrorResults(t *testing.T) {
	r := newUnitRun(t, append(calls(1, "fails", "hangs", "teleport"), agent.ToolCall("c4", "blocked", nil)), says("done"))
	r.toolFunc("fails", func(activities.ExecuteInput) (activities.ExecuteOutput, error) {
		return activities.ExecuteOutput{}, temporal.NewNonRetryableApplicationError("file not found", "ToolError", nil)
	})
	r.toolFunc("hangs", func(activities.ExecuteInput) (activities.ExecuteOutput, error) {
		return activities.ExecuteOutput{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
	})
	r.tool("blocked")
	r.block = func(c agent.Content) string {
		if c.Name == "blocked" {
			return "blocked by policy"
		}
		return ""
	}
	in := r.input("go", "fails", "hangs", "blocked")
	in.BeforeToolCall = agent.HookNames("policy")
	res, _ := r.run(in)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, []string{"user:go", "assistant:",
		"toolResult:file not found",
		"toolResult:Tool execution failed: the worker running it stopped responding (heartbeat timeout)",
		"toolResult:Tool teleport not found",
		"toolResult:blocked by policy",
		"assistant:done"}, transcript(res))
	for _, m := range res.Messages[2:6] {
		require.True(t, m.IsError, m.ToolCallID)
	}
	r.env.AssertActivityNumberOfCalls(t, "ExecuteToolCall", 1+3) // a heartbeat timeout is retried: 3 attempts
}
