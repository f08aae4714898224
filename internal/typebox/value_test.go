package typebox

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidateValueNotAnObject holds pi-ai 0.73.1's validateToolArguments
// results for arguments that are not an object (printed by node from
// @mariozechner/pi-ai's own function): an object schema fails them with
// the value as received, a schema that takes anything keeps them, and a
// string schema coerces a number and null but not an array.
func TestValidateValueNotAnObject(t *testing.T) {
	object := json.RawMessage(`{"type":"object","properties":{}}`)
	required := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)
	str := json.RawMessage(`{"type":"string"}`)
	cases := []struct {
		schema json.RawMessage
		args   string
		want   string // the result as JSON, or the error's text
		err    bool
	}{
		{object, `[1,2]`, "Validation failed for tool \"t\":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]", true},
		{object, `"x"`, "Validation failed for tool \"t\":\n  - root: must be object\n\nReceived arguments:\n\"x\"", true},
		{object, `42`, "Validation failed for tool \"t\":\n  - root: must be object\n\nReceived arguments:\n42", true},
		{object, `null`, "Validation failed for tool \"t\":\n  - root: must be object\n\nReceived arguments:\nnull", true},
		{required, `[1,2]`, "Validation failed for tool \"t\":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]", true},
		{json.RawMessage(`{}`), `[1,2]`, `[1,2]`, false},
		{json.RawMessage(`{}`), `null`, `null`, false},
		{str, `[1,2]`, "Validation failed for tool \"t\":\n  - root: must be string\n\nReceived arguments:\n[\n  1,\n  2\n]", true},
		{str, `"x"`, `"x"`, false},
		{str, `42`, `"42"`, false},
		{str, `null`, `""`, false},
	}
	for _, tc := range cases {
		var v any
		require.NoError(t, json.Unmarshal([]byte(tc.args), &v))
		got, err := ValidateValue("t", tc.schema, v)
		if tc.err {
			require.EqualError(t, err, tc.want, "%s against %s", tc.args, tc.schema)
			continue
		}
		require.NoError(t, err, "%s against %s", tc.args, tc.schema)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(b), "%s against %s", tc.args, tc.schema)
	}
}
