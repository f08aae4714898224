package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The JSON of messages, blocks, results and events is pi's, field for field.
func TestJSONShapesArePis(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"empty text block keeps text", Text(""), `{"type":"text","text":""}`},
		{"thinking with signature", Content{Type: ContentThinking, Thinking: "hm", ThinkingSignature: "sig"},
			`{"type":"thinking","thinking":"hm","thinkingSignature":"sig"}`},
		{"image", Image("AAA", "image/png"), `{"type":"image","data":"AAA","mimeType":"image/png"}`},
		{"tool call without arguments", ToolCall("c1", "ls", nil), `{"type":"toolCall","id":"c1","name":"ls","arguments":{}}`},
		{"user", UserText("hi", 5), `{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":5}`},
		{"assistant", Message{Role: RoleAssistant, API: "a", Provider: "p", Model: "m", StopReason: StopReasonStop, Timestamp: 1},
			`{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}`},
		{"tool result", ToolResultMessage(ToolCall("c1", "ls", nil), ErrorResult("boom"), true, 2),
			`{"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"boom"}],"details":{},"isError":true,"timestamp":2}`},
		{"tool result value", ToolResult{Content: []Content{Text("x")}, Terminate: true}, `{"content":[{"type":"text","text":"x"}],"details":{},"terminate":true}`},
		{"tool_execution_end", Event{Seq: 3, Type: EventToolExecutionEnd, ToolCallID: "c1", ToolName: "ls", Result: &ToolResult{}, IsError: false},
			`{"isError":false,"result":{"content":[],"details":{}},"seq":3,"toolCallId":"c1","toolName":"ls","type":"tool_execution_end"}`},
		{"tool_execution_start", Event{Type: EventToolExecutionStart, ToolCallID: "c1", ToolName: "ls"},
			`{"args":{},"toolCallId":"c1","toolName":"ls","type":"tool_execution_start"}`},
		{"turn_end", Event{Type: EventTurnEnd, Message: &Message{Role: RoleUser}}, `{"message":{"role":"user","content":[],"timestamp":0},"toolResults":[],"type":"turn_end"}`},
		{"agent_end", Event{Type: EventAgentEnd}, `{"messages":[],"type":"agent_end"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
		})
	}
}

// A hand-written message may give user content as a string, as pi allows.
func TestUserContentMayBeAString(t *testing.T) {
	var m Message
	require.NoError(t, json.Unmarshal([]byte(`{"role":"user","content":"use tabs"}`), &m))
	require.Equal(t, []Content{Text("use tabs")}, m.Content)
	require.NoError(t, m.Validate())
	require.ErrorContains(t, Message{Role: "system"}.Validate(), `unknown message role "system"`)
	require.ErrorContains(t, Message{Role: RoleUser, Content: []Content{{Type: "video"}}}.Validate(), `unknown content block type "video"`)
	require.ErrorContains(t, Message{Role: RoleToolResult}.Validate(), "toolCallId")
}

func TestTranscriptHashChain(t *testing.T) {
	a, b := NewTranscript("sys"), NewTranscript("sys")
	a.Append(UserText("one", 1), UserText("two", 2))
	b.Append(UserText("one", 1))
	require.Equal(t, a.HashAt(1), b.HashAt(1), "equal prefixes hash equal")
	b.Append(UserText("two!", 2))
	require.NotEqual(t, a.HashAt(2), b.HashAt(2))
	require.NotEqual(t, NewTranscript("other").HashAt(0), a.HashAt(0), "the system prompt is part of the chain")
	p := a.Prefix(1)
	require.Equal(t, 1, p.Len())
	require.Equal(t, a.HashAt(1), p.HashAt(1))
	p.Append(UserText("x", 3))
	require.Equal(t, 2, a.Len(), "a prefix is a copy")
}

func TestSegmentsHash(t *testing.T) {
	seg := func(sha string, n int) Segment {
		return Segment{Ref: BlobRef{SHA256: sha, Size: 10, Scope: "run"}, Count: n}
	}
	a := []Segment{seg("aa", 2), seg("bb", 1)}
	require.Equal(t, SegmentsHash(a), SegmentsHash([]Segment{seg("aa", 2), seg("bb", 1)}), "same stored bytes, same hash")
	b := []Segment{seg("aa", 2), seg("bb", 1)}
	b[1].Ref.Scope = "other"
	require.Equal(t, SegmentsHash(a), SegmentsHash(b), "the scope names where, not what")
	require.NotEqual(t, SegmentsHash(a), SegmentsHash([]Segment{seg("aa", 2), seg("cc", 1)}))
	require.NotEqual(t, SegmentsHash(a), SegmentsHash([]Segment{seg("aa", 3)}))
	require.NotEqual(t, SegmentsHash(a), SegmentsHash([]Segment{seg("bb", 1), seg("aa", 2)}), "order counts")
}

func TestApprovalPolicy(t *testing.T) {
	p := &ApprovalPolicy{Rules: []ApprovalRule{{Tool: "bash", Arg: "command", Pattern: `^git push`}}, Mutating: true}
	require.NoError(t, p.Check())
	require.Contains(t, p.Needs(ToolCall("c", "bash", map[string]any{"command": "git push origin"}), false), "can change things")
	require.Empty(t, p.Needs(ToolCall("c", "read", nil), true), "read-only tools pass a mutating policy")
	p.Mutating = false
	require.Contains(t, p.Needs(ToolCall("c", "bash", map[string]any{"command": "git push"}), false), `matches "^git push"`)
	require.Empty(t, p.Needs(ToolCall("c", "bash", map[string]any{"command": "git status"}), false))
	require.Error(t, (&ApprovalPolicy{Rules: []ApprovalRule{{Tool: "bash", Arg: "command", Pattern: "("}}}).Check())
	require.Error(t, (&ApprovalPolicy{Timeout: "soon"}).Check())
}
