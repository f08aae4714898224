package workflows

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// The Update arguments that are not types of their own decode as before
// (their handlers see what they saw) and remember the field they lack;
// agentapi/fields_test.go has the argument types.
func TestUpdateArgumentsDecodeAsBefore(t *testing.T) {
	var m messageArg
	require.NoError(t, json.Unmarshal([]byte(`{"role": "user", "content": "steer"}`), &m))
	require.Equal(t, "steer", agent.TextOf(m.Content))
	require.NoError(t, m.FieldError())

	var b budgetArg
	require.NoError(t, json.Unmarshal([]byte(`{"maxTurns": 3}`), &b))
	require.Equal(t, 3, b.MaxTurns)
	require.NoError(t, b.FieldError())
}

// What the field check costs a steer's decoding: go test ./workflows -run
// NONE -bench UpdateArgumentDecode.
func BenchmarkUpdateArgumentDecode(b *testing.B) {
	msg, err := json.Marshal(agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text(strings.Repeat("word ", 200))}, Timestamp: 1})
	require.NoError(b, err)
	b.Run("agent.Message", func(b *testing.B) {
		for b.Loop() {
			var m agent.Message
			_ = json.Unmarshal(msg, &m)
		}
	})
	b.Run("messageArg", func(b *testing.B) {
		for b.Loop() {
			var m messageArg
			_ = json.Unmarshal(msg, &m)
		}
	})
}
