package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// A model turn prepares its answer's calls with the worker's registry
// (activities/prepared.go) when the run has no before hooks. A registry
// tool of the same name as the run's remote tool or sub-agent tool is not
// that tool: the loop keeps the turn's verdict on such a call out
// (workflows/stages.go) and prepares it as the run declared it. Each test
// gives the registry tool a schema the call fails, so a verdict taken from
// it would end the call with its validation error.

// strictTool is a registry tool whose schema requires "zzz" and which
// must never run.
func strictTool(name string) tools.FuncTool {
	return tools.FuncTool{
		Def: tools.Definition{Name: name, Description: "a registry tool named " + name,
			Parameters: json.RawMessage(`{"type":"object","properties":{"zzz":{"type":"string"}},"required":["zzz"]}`)},
		Fn: func(context.Context, tools.Call) (agent.ToolResult, error) {
			return agent.ToolResult{}, errors.New("the registry's " + name + " ran")
		},
	}
}

// lateSource offers its tool only once on is set: an MCP server that adds
// a tool after the run started (ResolveRun refuses a remote tool named
// like a registry tool it finds then).
type lateSource struct {
	tool tools.Tool
	on   atomic.Bool
}

func (s *lateSource) Lookup(name string) (tools.Tool, bool) {
	if s.on.Load() && name == s.tool.Definition().Name {
		return s.tool, true
	}
	return nil, false
}

func (s *lateSource) List() []tools.Tool {
	if s.on.Load() {
		return []tools.Tool{s.tool}
	}
	return nil
}

func (s *lateSource) Unavailable(string) error { return nil }

func TestRegistryToolNamedLikeARemoteToolIsNotPreparedInTheTurn(t *testing.T) {
	src := &lateSource{tool: strictTool("fetch")}
	reg := tools.NewRegistry(okTool("meet"))
	reg.AddSource(src)
	c := testenv.Client(t)
	h := newHarnessRegistry(t, c, testenv.Store(t), []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "fetch", map[string]any{"n": 1})),
		answer(agent.ToolCall("c2", "fetch", map[string]any{"n": 2})),
		answer(text("done")),
	}, reg)
	queue := "remote-" + testenv.Suffix()
	w := worker.New(c, queue, worker.Options{})
	w.RegisterActivityWithOptions(func(_ context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
		// From the first call on, the worker's registry has a "fetch" of
		// its own; the next model turn runs after this result.
		src.on.Store(true)
		return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text("fetched " + in.ToolCallID)}}, nil
	}, activity.RegisterOptions{Name: "Fetch"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	in := h.input("go", "meet") // a registry tool: the turn prepares calls
	in.RemoteTools = []agent.RemoteTool{remoteTool("fetch", queue, "Fetch", agent.ReplayNever)}
	res := h.result(h.start(in))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.True(t, src.on.Load())
	var results []string
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			require.False(t, m.IsError, "%s: %s", m.ToolCallID, agent.TextOf(m.Content))
			results = append(results, agent.TextOf(m.Content))
		}
	}
	require.Equal(t, []string{"fetched c1", "fetched c2"}, results)
}

func TestRegistryToolNamedTaskIsNotPreparedInTheTurn(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "alpha")),
		answer(text("done")),
	}, strictTool(agent.SubAgentTool), okTool("meet"))
	h.scripted.Add("child", childScript(""))
	in := h.subAgentInput("go", nil)
	in.Tools = []string{"meet"} // a registry tool: the turn prepares calls
	res := h.result(h.start(in))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	m := res.Messages[len(res.Messages)-2]
	require.Equal(t, "t1", m.ToolCallID)
	require.False(t, m.IsError, agent.TextOf(m.Content))
	require.Equal(t, "done: alpha", agent.TextOf(m.Content))
}
