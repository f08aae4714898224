package workflows

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// The fast layer's plain functions (unit_harness_test.go has the rest):
// table tests of the pure logic the workflows are made of.

// A failure reads as its innermost words: the provider's or tool's own
// message, a timeout said in words, never Temporal's wrapping.
func TestUnitFailureText(t *testing.T) {
	wrapped := fmt.Errorf("activity error (type: ExecuteToolCall): %w",
		temporal.NewNonRetryableApplicationError("permission denied", "ToolError", nil))
	cases := []struct {
		name      string
		err       error
		model     string // failureText: a model turn's error message
		toolError string // toolFailureText: a tool call's error result
	}{
		{"application error, wrapped", wrapped, "permission denied", "permission denied"},
		{"heartbeat timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil),
			"model call the worker running it stopped responding (heartbeat timeout)",
			"Tool execution failed: the worker running it stopped responding (heartbeat timeout)"},
		{"start-to-close timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil),
			"model call timed out (start-to-close timeout)", "Tool execution failed: timed out (start-to-close timeout)"},
		{"schedule-to-start timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil),
			"model call no worker picked it up in time (schedule-to-start timeout)",
			"Tool execution failed: no worker picked it up in time (schedule-to-start timeout)"},
		{"plain chain", fmt.Errorf("outer: %w", fmt.Errorf("middle: %w", errors.New("disk full"))), "disk full", "disk full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.model, failureText(tc.err))
			require.Equal(t, tc.toolError, toolFailureText(tc.err))
		})
	}
}

// A model failure's details: the partial answer and what earlier
// attempts were billed; a failure recorded before budgets has only the
// first, and one without details gives nothing.
func TestUnitFailureDetails(t *testing.T) {
	partial := agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("half")}}
	billed := agent.Usage{Input: 10, TotalTokens: 10}
	cases := []struct {
		name    string
		details []any
		partial agent.Message
		billed  agent.Usage
	}{
		{"both", []any{partial, billed}, partial, billed},
		{"before budgets", []any{partial}, partial, agent.Usage{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := temporal.NewNonRetryableApplicationError("cut", "ProviderError", nil, tc.details...)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr))
			p, b := failureDetails(appErr)
			require.Equal(t, tc.partial.Role, p.Role)
			require.Equal(t, agent.TextOf(tc.partial.Content), agent.TextOf(p.Content))
			require.Equal(t, tc.billed, b)
		})
	}
}

// The event log's pages: events after a sequence number, bounded by a
// count and by bytes, at least one event when there is one, numbered
// from the run's first sequence number (a continued run's is not 1).
func TestUnitEventLogPages(t *testing.T) {
	log := eventLog{first: 41}
	for range 5 {
		log.emit(agent.Event{Type: agent.EventTurnStart})
	}
	big := agent.UserText(strings.Repeat("x", maxEventsPageBytes/2), 0)
	for range 3 {
		log.emit(agent.Event{Type: agent.EventMessageEnd, Message: &big})
	}
	require.EqualValues(t, 48, log.last())
	seqs := func(evs []agent.Event) []int64 {
		out := []int64{}
		for _, e := range evs {
			out = append(out, e.Seq)
		}
		return out
	}
	cases := []struct {
		name string
		q    agentapi.EventsQuery
		want []int64
	}{
		{"from the start", agentapi.EventsQuery{Limit: 3}, []int64{41, 42, 43}},
		{"after a number", agentapi.EventsQuery{After: 43, Limit: 2}, []int64{44, 45}},
		{"a byte bound", agentapi.EventsQuery{After: 44}, []int64{45, 46}},
		{"one over the bound still comes", agentapi.EventsQuery{After: 46}, []int64{47}},
		{"the last", agentapi.EventsQuery{After: 47}, []int64{48}},
		{"none after the last", agentapi.EventsQuery{After: 48}, []int64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, seqs(log.page(tc.q)))
		})
	}
}

// pi's shouldTerminateToolBatch: a non-empty batch whose every result
// asks to terminate.
func TestUnitShouldTerminate(t *testing.T) {
	stop := finalized{result: agent.ToolResult{Terminate: true}}
	goOn := finalized{result: agent.ToolResult{}}
	cases := []struct {
		batch []finalized
		want  bool
	}{
		{nil, false},
		{[]finalized{stop}, true},
		{[]finalized{stop, stop}, true},
		{[]finalized{stop, goOn}, false},
		{[]finalized{goOn}, false},
	}
	for i, tc := range cases {
		require.Equal(t, tc.want, shouldTerminate(tc.batch), "case %d", i)
	}
}

// The ids more than one call of a message has: their events and
// approvals then carry positions.
func TestUnitSharedIDs(t *testing.T) {
	calls := func(ids ...string) []agent.Content {
		var out []agent.Content
		for _, id := range ids {
			out = append(out, agent.ToolCall(id, "t", nil))
		}
		return out
	}
	require.Empty(t, sharedIDs(calls("a", "b", "c")))
	require.Equal(t, map[string]bool{"a": true}, sharedIDs(calls("a", "b", "a", "a")))
	require.Equal(t, map[string]bool{"": true}, sharedIDs(calls("", "")), "servers that send no ids")
}
