package agent_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// FuzzMessage decodes arbitrary Update payloads (a steering or follow-up
// message) as the Update validator does: json.Unmarshal, then Validate.
// Nothing panics, and a valid message marshals, reads back valid, and has
// a stable JSON form from then on.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		`{"content":"use tabs"}`,
		`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"timestamp":1}`,
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"s","redacted":true},
		  {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls","n":1e300}}],"stopReason":"toolUse",
		  "usage":{"input":1,"output":2,"cost":{"total":0.5}},"errorMessage":"e"}`,
		`{"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[],"details":{"a":[1,2]},"isError":true}`,
		`{"role":"toolResult","details":"x"}`,
		`{"role":"user","content":[{"type":"video"}]}`,
		`{"role":"user","content":[{}]}`,
		`{"content":null}`, `{"content":""}`, `{"content":7}`, `"x"`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m agent.Message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		_ = m.IsEmpty()
		if m.Validate() != nil {
			return
		}
		b1, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("a valid message does not marshal: %v", err)
		}
		var again agent.Message
		if err := json.Unmarshal(b1, &again); err != nil {
			t.Fatalf("a valid message does not read back: %v\n%s", err, b1)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("a valid message is invalid after a round trip: %v\n%s", err, b1)
		}
		b2, err := json.Marshal(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("JSON form not stable:\n%s\n%s", b1, b2)
		}
	})
}

// FuzzParseModelRef: a model name that parses prints back as itself.
func FuzzParseModelRef(f *testing.F) {
	for _, s := range []string{"anthropic/claude-sonnet-4-5", "openrouter/anthropic/claude-sonnet-4.5", "x", "/", "a/", "/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := agent.ParseModelRef(s)
		if err != nil {
			return
		}
		if ref.Provider == "" || ref.ID == "" || ref.String() != s {
			t.Fatalf("ParseModelRef(%q) = %+v", s, ref)
		}
	})
}
