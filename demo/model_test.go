package demo

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
)

// The demo model does what a prompt names with the tool for it, answers
// with what the tool returned, and answers a second prompt of a session.
func TestDemoModelAnswersWhatItIsAsked(t *testing.T) {
	var tools []llm.Tool
	for _, n := range Tools {
		tools = append(tools, llm.Tool{Name: n})
	}
	for prompt, want := range map[string]string{
		"list the files":       `ls {"path":"."}`,
		"what is in src":       `ls {"path":"src"}`,
		"read greet.sh":        `read {"path":"greet.sh"}`,
		"grep Helo":            `grep {"pattern":"Helo"}`,
		"search for 'Hello, '": `grep {"pattern":"Hello, "}`,
		"run ./test.sh":        `bash {"command":"./test.sh"}`,
		"run the tests":        `bash {"command":"./test.sh"}`,
		"find *.sh":            `find {"pattern":"*.sh"}`,
		"fix the failing test": `ls {"path":"."}`,
		"explain greet.sh":     `read {"path":"greet.sh"}`,
		"run `ls -la`":         `bash {"command":"ls -la"}`,
		"hello, who are you?":  "",
		"what can you do":      "",
	} {
		r := reply(llm.Request{Tools: tools, Messages: []agent.Message{agent.UserText(prompt, 0)}})
		calls := (&agent.Message{Content: r.Content}).ToolCalls()
		if want == "" {
			require.Empty(t, calls, prompt)
			require.Contains(t, r.Content[0].Text, "I can:", prompt)
			continue
		}
		require.NotEmpty(t, calls, prompt)
		require.Equal(t, want, calls[0].Name+" "+string(mustJSON(calls[0].Arguments)), prompt)
	}

	// The tool's result comes back: the answer shows it; then a second prompt.
	ms := []agent.Message{
		agent.UserText("list the files", 0),
		{Role: agent.RoleAssistant, Content: []agent.Content{agent.ToolCall("call_ls_1", "ls", map[string]any{"path": "."})}, StopReason: agent.StopReasonToolUse},
		{Role: agent.RoleToolResult, ToolCallID: "call_ls_1", ToolName: "ls", Content: []agent.Content{agent.Text("greet.sh\nREADME.md\ntest.sh")}},
	}
	r := reply(llm.Request{Tools: tools, Messages: ms})
	require.Equal(t, "ls returned:\n\n```\ngreet.sh\nREADME.md\ntest.sh\n```", r.Content[0].Text)
	ms = append(ms, agent.Message{Role: agent.RoleAssistant, Content: r.Content, StopReason: agent.StopReasonStop}, agent.UserText("read README.md", 0))
	r = reply(llm.Request{Tools: tools, Messages: ms})
	require.Equal(t, "read", (&agent.Message{Content: r.Content}).ToolCalls()[0].Name)

	// A tool the session lacks is named, not called.
	r = reply(llm.Request{Tools: []llm.Tool{{Name: "read"}}, Messages: []agent.Message{agent.UserText("run ./test.sh", 0)}})
	require.Contains(t, r.Content[0].Text, "does not have it")
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
