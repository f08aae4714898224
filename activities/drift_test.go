package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// ResolveRun tells what this worker lacks (retryable ConfigDrift) from what
// no worker of this build could serve (non-retryable, at a first start).
func TestResolveRunTellsDriftFromBadInput(t *testing.T) {
	models := llm.NewRegistry()
	scripted := llm.NewScriptedProvider()
	scripted.Add("script", llm.Script{})
	models.Register("test", scripted)
	ts := tools.NewRegistry(tools.FuncTool{Def: tools.Definition{Name: "fs__read"}})
	a := New(nil, nil, models, ts, hooks.NewRegistry())
	test := agent.ModelRef{Provider: "test", ID: "script"}
	cases := []struct {
		name string
		in   ResolveRunInput
		kind string // "" resolves
	}{
		{"all here", ResolveRunInput{Model: test, Tools: []string{"fs__read", "fs__*"}}, ""},
		{"known provider not configured", ResolveRunInput{Model: agent.ModelRef{Provider: "anthropic", ID: "claude"}}, ErrConfigDrift},
		{"provider no build knows", ResolveRunInput{Model: agent.ModelRef{Provider: "antropic", ID: "claude"}}, ErrUnknownModelProvider},
		{"provider no build knows, resolved before", ResolveRunInput{Model: agent.ModelRef{Provider: "custom", ID: "m"}, Resolved: true}, ErrConfigDrift},
		{"model refused", ResolveRunInput{Model: agent.ModelRef{Provider: "test", ID: "nope"}}, ErrUnknownModel},
		{"model refused, resolved before", ResolveRunInput{Model: agent.ModelRef{Provider: "test", ID: "nope"}, Resolved: true}, ErrConfigDrift},
		{"built-in tool not here", ResolveRunInput{Model: test, Tools: []string{"bash"}}, ErrConfigDrift},
		{"MCP server not here", ResolveRunInput{Model: test, Tools: []string{"github__create_issue", "github__*"}}, ErrConfigDrift},
		{"tool of a server that is here", ResolveRunInput{Model: test, Tools: []string{"fs__write"}}, ErrUnknownTool},
		{"tool no build knows", ResolveRunInput{Model: test, Tools: []string{"teleport"}}, ErrUnknownTool},
		{"malformed MCP name", ResolveRunInput{Model: test, Tools: []string{"__x"}}, ErrUnknownTool},
		{"tool no build knows, resolved before", ResolveRunInput{Model: test, Tools: []string{"teleport"}, Resolved: true}, ErrConfigDrift},
		{"bad input wins over drift", ResolveRunInput{Model: agent.ModelRef{Provider: "anthropic", ID: "claude"}, Tools: []string{"teleport"}}, ErrUnknownTool},
		{"hook not here", ResolveRunInput{Model: test, AfterToolCall: []string{"audit"}}, ErrConfigDrift},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.ResolveRun(context.Background(), tc.in)
			if tc.kind == "" {
				require.NoError(t, err)
				return
			}
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, tc.kind, appErr.Type(), appErr.Message())
			require.Equal(t, tc.kind != ErrConfigDrift, appErr.NonRetryable())
			if tc.kind == ErrConfigDrift {
				require.Contains(t, appErr.Message(), "worker ")
				require.Contains(t, appErr.Message(), " lacks ")
			}
		})
	}
}

// The tool names a worker of this build could have are the built-ins'.
func TestBuiltinNamesAreTheBuiltins(t *testing.T) {
	var names []string
	for _, tool := range tools.Builtins(tools.BuiltinOptions{}) {
		names = append(names, tool.Definition().Name)
	}
	require.ElementsMatch(t, tools.BuiltinNames, names)
}
