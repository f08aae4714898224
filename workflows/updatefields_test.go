package workflows_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/workflows"
)

// Every Update a session (and so a run: steer, follow-up, abort, approve,
// setBudget) accepts refuses a field its argument does not have, naming
// it and the fields it has, and the refusals leave nothing in history.
// Reproduced before: {"promt": "hi"} was refused as "prompt is empty"
// without naming the field, {"maxTurn": 3} was accepted as an empty budget
// (removing the session's), {"reson": "x"} aborted, and the other
// misspelt fields of steers, follow-ups and setters were dropped silently.
func TestUpdatesRefuseUnknownFields(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(text("hello"))})
	run := h.startSession(agentapi.SessionInput{})
	for _, c := range []struct {
		name string
		arg  map[string]any
		want string
	}{
		{agentapi.UpdatePrompt, map[string]any{"promt": "hi"}, `unknown field "promt": a prompt has text, images or messages`},
		{agentapi.UpdateSteer, map[string]any{"role": "user", "content": "x", "contnet": "y"}, `unknown field "contnet": a message has role, content, api,`},
		{agentapi.UpdateFollowUp, map[string]any{"role": "user", "content": "x", "timestmap": 1}, `unknown field "timestmap": a message has role`},
		{agentapi.UpdateApprove, map[string]any{"toolCallId": "c1", "decison": "allow"}, `unknown field "decison": an approval has toolCallId, position, decision, reason or workflowId`},
		{agentapi.UpdateSetBudget, map[string]any{"maxTurn": 3}, `unknown field "maxTurn": a budget has maxCostUSD, maxTokens, maxTurns or maxToolCalls`},
		{agentapi.UpdateAbort, map[string]any{"reson": "x"}, `unknown field "reson": an abort has reason`},
		{agentapi.UpdateSetThinkingLevel, map[string]any{"levle": "high"}, `unknown field "levle": a setting has model, level or mode`},
		{agentapi.UpdateSetModel, map[string]any{"modle": map[string]any{"provider": "test", "id": "script"}}, `unknown field "modle": a setting has`},
		{agentapi.UpdateSetSteeringMode, map[string]any{"mode": "all", "moed": "all"}, `unknown field "moed"`},
		{agentapi.UpdateSetFollowUpMode, map[string]any{"mdoe": "all"}, `unknown field "mdoe"`},
		{agentapi.UpdateSetToolExecution, map[string]any{"mode": "parallel", "x": 1}, `unknown field "x"`},
		{agentapi.UpdateCompact, map[string]any{"instruction": "short"}, `unknown field "instruction": a compact request has instructions`},
		{agentapi.UpdateSetHooks, map[string]any{"beforeToolCal": []any{}}, `unknown field "beforeToolCal": the request has beforeToolCall and afterToolCall`},
	} {
		err := h.sessionUpdate(run, c.name, c.arg, nil)
		require.ErrorContains(t, err, c.want, c.name)
	}
	st := h.sessionState(run)
	require.Equal(t, "idle", st.Status, "no abort, no run")

	hist, err := testenv.History(context.Background(), h.c, run.GetID(), "")
	require.NoError(t, err)
	for _, e := range hist.GetEvents() {
		require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, e.GetEventType(), "a refusal left %v", e)
	}

	// Fields as encoding/json matches them (case-insensitively) are the
	// argument's own: the prompt runs.
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, map[string]any{"Text": "hi"}, nil))
	evs := h.waitRunEnd(run, 1)
	end := evs[len(evs)-1]
	require.Equal(t, "hello", agent.TextOf(end.Messages[len(end.Messages)-1].Content))
}

// Updates with fields their arguments lack that the code before the field
// check accepted (a setter, setBudget, prompts, an abort, a follow-up,
// recorded with that code into
// testdata/histories/session-updates-with-unknown-fields.1.json) replay
// against this code: validators do not run on replay, and the handlers
// ignore the field as they did (TestReplayRecordedHistories replays it;
// this checks it holds what it should).
func TestReplayOfUpdatesAcceptedWithUnknownFields(t *testing.T) {
	text := readFile(t, "../testdata/histories/session-updates-with-unknown-fields.1.json")
	require.Equal(t, 6, strings.Count(text, `"workflowExecutionUpdateAcceptedEventAttributes"`))
	r := worker.NewWorkflowReplayer()
	workflows.RegisterWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(testenv.Quiet(), "../testdata/histories/session-updates-with-unknown-fields.1.json"))
}
