package llm

import (
	"testing"
)

func TestParseStreamingJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `{}`},
		{"   ", `{}`},
		{`{"a":1}`, `{"a":1}`},
		{`{"a": "hel`, `{"a":"hel"}`},
		{`{"a": "x\`, `{"a":"x"}`},
		{`{"a": "x\u00`, `{"a":"x"}`},
		{`{"a": "x\\`, `{"a":"x\\"}`},
		{`{"a": 1, "b`, `{"a":1}`},
		{`{"a": 1, "b":`, `{"a":1}`},
		{`{"a": 1, "b": `, `{"a":1}`},
		{`{"a": [1, 2, {"c": tr`, `{"a":[1,2,{"c":true}]}`},
		{`{"a": nul`, `{"a":null}`},
		{`{"a": -`, `{}`},
		// partial-json (pi-ai's) keeps what precedes a truncated number's
		// last "e" when it is a number, and drops the member otherwise.
		{`{"a": 1.`, `{}`},
		{`{"b": 2, "a": 1.`, `{"b":2}`},
		{`{"b": {"a": 1.`, `{"b":{}}`},
		{`{"a": [1.`, `{"a":[]}`},
		{`{"a": 1e`, `{"a":1}`},
		{`{"a": 1E+`, `{}`},
		{`{"a": -0.`, `{}`},
		{`{"a": 1.5e-`, `{"a":1.5}`},
		{`{"a": -1`, `{"a":-1}`},
		{`{"a": {"b": [`, `{"a":{"b":[]}}`},
		{`{"path": "C:\dir\sub"}`, `{"path":"C:\\dir\\sub"}`},
		{"{\"text\": \"line1\nline2\"}", `{"text":"line1\nline2"}`},
		{"{\"text\": \"tab\there", `{"text":"tab\there"}`},
		{`[1,2]`, `{}`},
		{`"just a string"`, `{}`},
		{`{"a":1}}`, `{"a":1}`},
		{`not json`, `{}`},
		{`{"a" 1}`, `{}`},
		{`{"a": 1 "b": 2}`, `{}`},
		{`{"a": "é😀"}`, `{"a":"é😀"}`},
	}
	for _, tc := range cases {
		if got := mustJSONValue(parseStreamingJSON(tc.in)); got != tc.want {
			t.Errorf("parseStreamingJSON(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRepairJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{"{\"a\":\"b\nc\"}", `{"a":"b\nc"}`},
		{"{\"a\":\"\x01\"}", `{"a":"\u0001"}`},
		{`{"a":"\q"}`, `{"a":"\\q"}`},
		{`{"a":"\u12"}`, `{"a":"\\u12"}`},
		{`{"a":"\u1234"}`, `{"a":"\u1234"}`},
		{"{\"a\":\n1}", "{\"a\":\n1}"},
	}
	for _, tc := range cases {
		if got := repairJSON(tc.in); got != tc.want {
			t.Errorf("repairJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestToolArgumentsNotAnObject: a complete document that is not an object
// is kept as pi-ai's parseStreamingJson keeps it (null too), so that the
// call fails validation with it; only a truncated one that parses to
// nothing counts as no arguments.
func TestToolArgumentsNotAnObject(t *testing.T) {
	cases := []struct{ in, args, raw string }{
		{`{"a":1}`, `{"a":1}`, ``},
		{``, `{}`, ``},
		{`[1,2]`, `null`, `[1,2]`},
		{` [1, 2] `, `null`, `[1,2]`},
		{`"x"`, `null`, `"x"`},
		{`42`, `null`, `42`},
		{`null`, `null`, `null`},
		{`true`, `null`, `true`},
		{`[1, 2`, `null`, `[1,2]`},
		{`nul`, `{}`, ``},
		{`not json`, `{}`, ``},
	}
	for _, tc := range cases {
		args, raw := toolArguments(tc.in)
		if got := mustJSONValue(args); got != tc.args || string(raw) != tc.raw {
			t.Errorf("toolArguments(%q) = %s, %s; want %s, %s", tc.in, got, raw, tc.args, tc.raw)
		}
	}
}
