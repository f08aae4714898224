package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// Parallel executions overlap; their result messages land in call order.
func TestParallelBatchRunsConcurrently(t *testing.T) {
	var mu sync.Mutex
	running, maxRunning := 0, 0
	work := func(d time.Duration) func(context.Context, tools.Call) (agent.ToolResult, error) {
		return func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
			mu.Lock()
			running++
			maxRunning = max(maxRunning, running)
			mu.Unlock()
			time.Sleep(d)
			mu.Lock()
			running--
			mu.Unlock()
			return agent.TextResult(c.ID), nil
		}
	}
	h := newHarness(t, []llm.ScriptedResponse{
		answer(call("c1", "slow"), call("c2", "fast"), call("c3", "slow")),
		answer(text("done")),
	}, tool("slow", work(300*time.Millisecond)), tool("fast", work(10*time.Millisecond)))
	res := h.result(h.start(h.input("go", "slow", "fast")))
	require.Equal(t, 3, maxRunning, "all three executions overlapped")
	ids := []string{}
	for _, m := range res.Messages[2:5] {
		ids = append(ids, m.ToolCallID)
	}
	require.Equal(t, []string{"c1", "c2", "c3"}, ids)
}

// A tool that panics or fails gives the model an error result; a fault is
// retried by Temporal under the tool's policy and then becomes one.
func TestToolFailuresBecomeErrorResults(t *testing.T) {
	var attempts atomic.Int32
	h := newHarness(t, []llm.ScriptedResponse{
		answer(call("c1", "panics"), call("c2", "faulty"), call("c3", "fails")),
		answer(text("done")),
	},
		tool("panics", func(context.Context, tools.Call) (agent.ToolResult, error) { panic("boom") }),
		tools.FuncTool{Def: tools.Definition{Name: "faulty", Durability: tools.Durability{MaxAttempts: 2}},
			Fn: func(context.Context, tools.Call) (agent.ToolResult, error) {
				attempts.Add(1)
				return agent.ToolResult{}, tools.Fault(errors.New("disk unavailable"))
			}},
		tool("fails", func(context.Context, tools.Call) (agent.ToolResult, error) {
			return agent.ToolResult{}, errors.New("file not found")
		}))
	run := h.start(h.input("go", "panics", "faulty", "fails"))
	res := h.result(run)
	require.Equal(t, "panic: boom", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, "disk unavailable", agent.TextOf(res.Messages[3].Content))
	require.Equal(t, "file not found", agent.TextOf(res.Messages[4].Content))
	for _, m := range res.Messages[2:5] {
		require.True(t, m.IsError)
	}
	require.EqualValues(t, 2, attempts.Load())
	requireNoFailedTasks(t, h.c, run)
}

// A tool result over the payload budget is cut with a notice instead of
// failing the run on Temporal's payload limit.
func TestOversizedToolResultIsCapped(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	h := newHarness(t, []llm.ScriptedResponse{answer(call("c1", "huge")), answer(text("done"))},
		tool("huge", func(context.Context, tools.Call) (agent.ToolResult, error) { return agent.TextResult(big), nil }))
	run := h.start(h.input("go", "huge"))
	res := h.result(run)
	out := res.Messages[2]
	b, _ := json.Marshal(out)
	require.Less(t, len(b), activities.MaxResultBytes+4096)
	require.Contains(t, agent.TextOf(out.Content), "[Output truncated:")
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	requireNoFailedTasks(t, h.c, run)
}

// A model turn on a worker without the run's context in its cache reads
// the prefix with the context Query, verified by hash, and the model sees
// the whole transcript.
func TestModelTurnReadsContextByQueryOnCacheMiss(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(text("one"), call("c1", "echo")),
		answer(text("two"), call("c2", "echo")),
		answer(text("three")),
	}, tool("echo", func(_ context.Context, c tools.Call) (agent.ToolResult, error) {
		return agent.TextResult("echo " + c.ID), nil
	}))
	h.acts.NoContextCache = true
	in := h.input("go", "echo")
	in.SystemPrompt = "be brief"
	in.Messages = []agent.Message{agent.UserText("earlier", 1), {Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("ok")}, StopReason: agent.StopReasonStop}}
	res := h.result(h.start(in))
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Len(t, h.requests, 2)
	texts := func(req llm.Request) []string {
		var out []string
		for _, m := range req.Messages {
			out = append(out, m.Role+":"+agent.TextOf(m.Content))
		}
		return out
	}
	require.Equal(t, "be brief", h.requests[1].SystemPrompt)
	require.Equal(t, []string{"user:earlier", "assistant:ok", "user:go"}, texts(h.requests[0]))
	require.Equal(t, []string{"user:earlier", "assistant:ok", "user:go", "assistant:two", "toolResult:echo c2"}, texts(h.requests[1]))
}
