package workflows

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// The fields an Update argument's JSON may have are the ones
// encoding/json would fill: tag names, else field names, matched
// case-insensitively, embedded structs' included, "-" and unexported ones
// not. Anything else is the first unknown key in sorted order.
func TestUnknownKeyMatchesEncodingJSON(t *testing.T) {
	type inner struct {
		Deep string `json:"deep"`
	}
	type arg struct {
		inner
		Tagged  string `json:"tagged,omitempty"`
		Plain   string
		Skipped string `json:"-"`
		hidden  string
	}
	typ := reflect.TypeFor[arg]()
	for b, want := range map[string]string{
		`{"tagged": "x", "Plain": "y", "deep": "z"}`: "",
		`{"TAGGED": "x", "plain": "y", "Deep": "z"}`: "",
		`{"Skipped": "x"}`:                           "Skipped",
		`{"hidden": "x"}`:                            "hidden",
		`{"zeta": 1, "alpha": 2, "tagged": "x"}`:     "alpha",
		`"not an object"`:                            "",
		`null`:                                       "",
	} {
		require.Equal(t, want, unknownKey([]byte(b), typ), b)
	}
	_ = arg{}.hidden
}

// The argument types decode as before (their handlers see what they saw)
// and remember the field they lack.
func TestUpdateArgumentsDecodeAsBefore(t *testing.T) {
	var p PromptRequest
	require.NoError(t, json.Unmarshal([]byte(`{"text": "hi", "promt": "x"}`), &p))
	require.Equal(t, "hi", p.Text)
	require.EqualError(t, p.unknownField(), `unknown field "promt": a prompt has text, images or messages`)

	var m messageArg
	require.NoError(t, json.Unmarshal([]byte(`{"role": "user", "content": "steer"}`), &m))
	require.Equal(t, "steer", agent.TextOf(m.Content))
	require.NoError(t, m.unknownField())

	var b budgetArg
	require.NoError(t, json.Unmarshal([]byte(`{"maxTurns": 3}`), &b))
	require.Equal(t, 3, b.MaxTurns)
	require.NoError(t, b.unknownField())

	var s SettingRequest
	require.Error(t, json.Unmarshal([]byte(`{"level": 3}`), &s), "a wrong type still fails decoding, as before")
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
