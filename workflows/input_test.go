package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// Bad input fails the run at once, with a non-retryable error that says what
// is wrong, and never leaves a workflow task retrying.
func TestBadInputFailsAtOnce(t *testing.T) {
	h := newHarness(t, nil, tool("ls", nil))
	cases := []struct {
		name  string
		input any
		want  string
		kind  string
	}{
		{"malformed JSON shape", json.RawMessage(`{"model":{"provider":"test","id":"script"},"tools":"ls"}`),
			"invalid input: tools: got a JSON string, want a JSON array of strings", agentapi.ErrInvalidInput},
		{"not an object", json.RawMessage(`"hello"`), "invalid input: the input must be a JSON object, not a JSON string", agentapi.ErrInvalidInput},
		{"no model", json.RawMessage(`{"prompt":"hi"}`), `model: want {"provider": "...", "id": "..."}`, agentapi.ErrInvalidInput},
		{"bad mode", json.RawMessage(`{"model":{"provider":"test","id":"script"},"prompt":"hi","toolExecution":"fast"}`),
			`toolExecution "fast": want parallel or sequential`, agentapi.ErrInvalidInput},
		{"nothing to continue", json.RawMessage(`{"model":{"provider":"test","id":"script"}}`),
			"Cannot continue: no messages in context", agentapi.ErrInvalidInput},
		{"assistant tail", json.RawMessage(`{"model":{"provider":"test","id":"script"},"messages":[{"role":"assistant","content":[]}]}`),
			"Cannot continue from message role: assistant", agentapi.ErrInvalidInput},
		{"bad block", json.RawMessage(`{"model":{"provider":"test","id":"script"},"prompts":[{"role":"user","content":[{"type":"video"}]}]}`),
			`unknown content block type "video"`, agentapi.ErrInvalidInput},
		{"unknown provider", h.input("hi"), `unknown model provider "nope"`, activities.ErrUnknownModelProvider},
		{"unknown model", h.input("hi"), `scripted model "nope" is not registered`, activities.ErrUnknownModel},
		{"unknown tool", h.input("hi", "ls", "teleport"), `unknown tools ["teleport"]`, activities.ErrUnknownTool},
		// Hooks are registered in code: a worker without one may be of an
		// older build, so the run waits for another (drift_test.go).
		{"unknown hook", h.input("hi"), `lacks hooks ["beforeToolCall policy"]`, activities.ErrConfigDrift},
		// A misspelt field would start a run without what it names.
		{"misspelt field", json.RawMessage(`{"model":{"provider":"test","id":"script"},"promt":"hi"}`),
			`invalid input: unknown field "promt"`, agentapi.ErrInvalidInput},
	}
	cases[7].input = withModel(cases[7].input.(agentapi.AgentLoopInput), "nope", "script")
	cases[8].input = withModel(cases[8].input.(agentapi.AgentLoopInput), "test", "nope")
	in := cases[10].input.(agentapi.AgentLoopInput)
	in.BeforeToolCall = agent.HookNames("policy")
	in.ConfigDriftTimeout = "1s"
	cases[10].input = in

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := h.start(tc.input)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := run.Get(ctx, nil)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			if tc.kind != "" {
				var appErr *temporal.ApplicationError
				require.True(t, errors.As(err, &appErr), "%v", err)
				require.Equal(t, tc.kind, appErr.Type())
				require.True(t, appErr.NonRetryable())
			}
			requireNoFailedTasks(t, h.c, run)
		})
	}
}

func withModel(in agentapi.AgentLoopInput, provider, id string) agentapi.AgentLoopInput {
	in.Model = agent.ModelRef{Provider: provider, ID: id}
	return in
}

// requireNoFailedTasks checks that the run closed without a workflow task
// failing along the way (a panic or a stuck task would show one).
func requireNoFailedTasks(t *testing.T, c client.Client, run client.WorkflowRun) {
	t.Helper()
	h, err := testenv.History(context.Background(), c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	for _, e := range h.Events {
		require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, e.GetEventType(), "workflow task failed: %v", e)
	}
	last := h.Events[len(h.Events)-1].GetEventType()
	require.Contains(t, []enumspb.EventType{
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
	}, last)
}
