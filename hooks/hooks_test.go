package hooks

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// Apply is pi's finalizeExecutedToolCall merge: a nil field keeps the
// original, content and details are replaced whole.
func TestApplyOverridesFieldByField(t *testing.T) {
	orig := agent.ToolResult{Content: []agent.Content{agent.Text("a")}, Details: json.RawMessage(`{"k":1}`), Terminate: true}
	yes, no := true, false

	r, isErr := Apply(orig, false, nil)
	require.Equal(t, orig, r)
	require.False(t, isErr)

	r, isErr = Apply(orig, false, &AfterResult{})
	require.Equal(t, orig, r, "an empty override keeps everything")
	require.False(t, isErr)

	r, isErr = Apply(orig, false, &AfterResult{Content: []agent.Content{agent.Text("b")}, IsError: &yes, Terminate: &no, Details: json.RawMessage("null")})
	require.Equal(t, "b", agent.TextOf(r.Content))
	require.JSONEq(t, `{"k":1}`, string(r.Details), "details null keeps the original")
	require.False(t, r.Terminate)
	require.True(t, isErr)
}

func TestRegistryCheck(t *testing.T) {
	r := NewRegistry()
	r.RegisterBefore("policy", nil)
	require.NoError(t, r.Check([]string{"policy"}, nil))
	require.ErrorContains(t, r.Check([]string{"nope"}, []string{"after"}), `unknown hooks ["beforeToolCall nope" "afterToolCall after"]`)
}
