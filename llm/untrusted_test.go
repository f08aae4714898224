package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/testenv"
	"github.com/durable-agents/agentloop/tools"
)

// TestWorkflowBinaryToolOutput runs the real bash tool printing bytes that
// are not UTF-8 and NUL bytes, through the workflow and an OpenAI-compatible
// server speaking the Chat Completions wire format (the conformance
// reference runner has no bash and cannot express raw bytes): the tool's
// text is what pi's bash tool gives (one U+FFFD per ill-formed
// subsequence, NUL kept; tools.TestBashBinaryOutput has the byte-level
// cases), and the same text is in the durable event log, in the run's
// result and in the next model request.
func TestWorkflowBinaryToolOutput(t *testing.T) {
	t.Parallel()
	args, err := json.Marshal(map[string]string{"command": `printf 'a\377\376b\0c\n'`})
	require.NoError(t, err)
	// A 10 MB line ending in bytes that are not UTF-8: its tail of 50 KB
	// goes to the model, and to the content store from history.
	long, err := json.Marshal(map[string]string{"command": `head -c 10485760 /dev/zero | tr '\0' x; printf '\0\377END'`})
	require.NoError(t, err)
	f := newFakeServer(t,
		step{Body: chatToolCall("gpt-5-2025-08-07", "call_bin", "bash", chatUsage(50, 0, 10), string(args))},
		step{Body: chatToolCall("gpt-5-2025-08-07", "call_long", "bash", chatUsage(50, 0, 10), string(long))},
		step{Body: chatText("gpt-5-2025-08-07", 80, 0, 6, "Binary.")})
	bash := tools.NewBashTool(tools.BashOptions{OutputDir: t.TempDir()})
	r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"}, bash)
	run := r.start(input("openai/gpt-5", "print binary", "bash"))
	res := r.result(run)

	const want = "a\uFFFD\uFFFDb\x00c\n"
	require.Len(t, res.Messages, 6)
	result := res.Messages[2]
	require.Equal(t, "call_bin", result.ToolCallID)
	require.False(t, result.IsError)
	require.Equal(t, want, agent.TextOf(result.Content))
	longText := agent.TextOf(res.Messages[4].Content)
	require.Contains(t, longText, "xxx\x00\uFFFDEND\n\n[Showing last 50.0KB of line 1 (line is 10.0MB). Full output: ")

	events, err := agentclient.Events(context.Background(), r.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	// The 50 KB tail is in the content store; history holds its stub.
	events, err = agentclient.ResolveEvents(context.Background(), testenv.Store(t), events)
	require.NoError(t, err)
	var logged []string
	for _, e := range events {
		if e.Type == agent.EventToolExecutionEnd {
			logged = append(logged, agent.TextOf(e.Result.Content))
		}
		if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleToolResult {
			logged = append(logged, agent.TextOf(e.Message.Content))
		}
	}
	require.Equal(t, []string{want, want, longText, longText}, logged, "tool_execution_end and the result's message_end in the durable log")

	for i, c := range []struct{ id, text string }{{"call_bin", want}, {"call_long", longText}} {
		sent := find(f.Requests()[i+1].Body["messages"], has("role", "tool", "tool_call_id", c.id))
		require.NotNil(t, sent)
		require.Equal(t, c.text, sent["content"], "the next model request after %s", c.id)
	}
}
