package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
)

// Two calls of one message share an id; the first is retried after it
// queued a steering message. Its retry drops what its own first attempt
// queued, and only that: the other call's message, from its first (and
// only) attempt under the same id, stays. Calls are told apart by position
// (the conformance scenarios duplicate-tool-call-ids-* cover partial
// results and queued messages without retries).
func TestRetryDropsOnlyItsOwnCallsMessagesWhenIDsRepeat(t *testing.T) {
	var mu sync.Mutex
	attempts := 0
	queuer := tool("queuer", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		mu.Lock()
		attempts++
		n := attempts
		mu.Unlock()
		if n == 1 {
			if err := c.Run.Steer(ctx, agent.UserText("queuer attempt 1", 0)); err != nil {
				return agent.ToolResult{}, err
			}
			return agent.ToolResult{}, tools.Fault(errors.New("disk hiccup"))
		}
		if err := c.Run.Steer(ctx, agent.UserText("queuer attempt 2", 0)); err != nil {
			return agent.ToolResult{}, err
		}
		return agent.TextResult("queued"), nil
	})
	steady := tool("steady", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		if err := c.Run.Steer(ctx, agent.UserText("from steady", 0)); err != nil {
			return agent.ToolResult{}, err
		}
		// Outlasts the queuer's retry (1 s), so the batch still holds
		// this message when the retry queues its own.
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
		}
		return agent.TextResult("steady done"), nil
	})
	h := newHarness(t, []llmResponse{answer(call("dup", "queuer"), call("dup", "steady")), answer(text("steered"))}, queuer, steady)
	in := h.input("go", "queuer", "steady")
	in.ToolExecution = agent.ExecutionParallel
	in.EventOrderWindow = "1m"
	in.SteeringMode = agent.QueueAll
	res := h.result(h.start(in))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	var users []string
	for _, m := range res.Messages {
		if m.Role == agent.RoleUser {
			users = append(users, agent.TextOf(m.Content))
		}
	}
	require.Equal(t, "go", users[0])
	require.ElementsMatch(t, []string{"queuer attempt 2", "from steady"}, users[1:],
		"the retried call's first attempt's message is gone, the other call's stays")
}
