package conformance_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// TestSubAgentConformance: a scenario whose task tool is, to pi, a scripted
// tool (one partial result, then its answer), runs here with the task call
// answered by a real child AgentLoop workflow (whose model calls a tool,
// then answers), between two scripted tools of one parallel batch: the
// trace is pi's, event by event. The task results' details also name the
// child's workflow, run and usage, which pi's scripted tool cannot know:
// those three fields are left out of both traces.
func TestSubAgentConformance(t *testing.T) {
	c := testenv.Client(t)
	cases, err := conformance.Cases("testdata/subagent")
	require.NoError(t, err)
	for _, cs := range cases {
		t.Run(cs.Name, func(t *testing.T) {
			s := cs.Scenario
			in := conformance.Input(s)
			in.Tools = nil
			var kept []conformance.ToolSpec
			for _, ts := range s.Tools {
				if ts.Name == agent.SubAgentTool {
					continue
				}
				kept = append(kept, ts)
				in.Tools = append(in.Tools, ts.Name)
			}
			in.Tools = append(in.Tools, "look")
			in.SubAgents = []agent.SubAgent{{Name: "helper", Description: "looks things up",
				Model: &agent.ModelRef{Provider: conformance.ModelProvider, ID: "child"}, Tools: []string{"look"}}}

			scripted := llm.NewScriptedProvider()
			scripted.Add(in.Model.ID, llm.Script{Responses: s.Model})
			scripted.Add("child", llm.Script{Responses: []llm.ScriptedResponse{
				{Content: []agent.Content{agent.ToolCall("c1", "look", map[string]any{})}},
				{Content: []agent.Content{agent.Text("done: alpha")}},
			}})
			models := llm.NewRegistry()
			models.Register(conformance.ModelProvider, scripted)
			withoutTask := s
			withoutTask.Tools = kept
			ts := conformance.ToolRegistry(withoutTask)
			ts.Register(tools.FuncTool{Def: tools.Definition{Name: "look", Description: "looks"},
				Fn: func(context.Context, tools.Call) (agent.ToolResult, error) { return agent.TextResult("seen"), nil }})

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := conformance.RunWith(ctx, c, s, in, models, ts)
			require.NoError(t, err)
			got, err := conformance.Canonical(res.Trace)
			require.NoError(t, err)
			require.Equal(t, withoutChildFields(t, cs.Want), withoutChildFields(t, got), "trace of %s (workflow %s)", cs.Name, res.WorkflowID)
		})
	}
}

// withoutChildFields drops workflowId, runId and usage from the details
// of every task result in a trace.
func withoutChildFields(t *testing.T, lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		var v any
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		dropChildFields(v)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	return out
}

func dropChildFields(v any) {
	switch x := v.(type) {
	case map[string]any:
		if x["toolName"] == agent.SubAgentTool {
			for _, holder := range []any{x, x["result"]} {
				if m, ok := holder.(map[string]any); ok {
					if d, ok := m["details"].(map[string]any); ok {
						delete(d, "workflowId")
						delete(d, "runId")
						delete(d, "usage")
					}
				}
			}
		}
		for _, e := range x {
			dropChildFields(e)
		}
	case []any:
		for _, e := range x {
			dropChildFields(e)
		}
	}
}
