package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNonObjectArgumentsRoundTrip: arguments that are valid JSON but not
// an object are written as pi writes them and read back as they were; a
// normal call's JSON is unchanged.
func TestNonObjectArgumentsRoundTrip(t *testing.T) {
	for _, raw := range []string{`[1,2]`, `"x"`, `42`, `null`} {
		c := Content{Type: ContentToolCall, ID: "c1", Name: "echo", RawArguments: json.RawMessage(raw)}
		b, err := json.Marshal(c)
		require.NoError(t, err)
		require.JSONEq(t, `{"type":"toolCall","id":"c1","name":"echo","arguments":`+raw+`}`, string(b))
		var back Content
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, c, back)
		require.Equal(t, json.RawMessage(raw), back.ArgumentsValue())

		e := Event{Type: EventToolExecutionStart, ToolCallID: "c1", ToolName: "echo", RawArgs: json.RawMessage(raw)}
		b, err = json.Marshal(e)
		require.NoError(t, err)
		require.JSONEq(t, `{"type":"tool_execution_start","toolCallId":"c1","toolName":"echo","args":`+raw+`}`, string(b))
		var ev Event
		require.NoError(t, json.Unmarshal(b, &ev))
		require.Equal(t, e, ev)
	}
	c := ToolCall("c1", "echo", map[string]any{"a": 1.0})
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"toolCall","id":"c1","name":"echo","arguments":{"a":1}}`, string(b))
	var back Content
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, c, back)
	require.Nil(t, back.RawArguments)
}
