package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
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

// chatToolCallStop is a Chat Completions tool call whose arguments arrive
// in the given fragments and that ends with the given finish_reason.
func chatToolCallStop(id, name, finish string, fragments ...string) string {
	const model = "gpt-5-2025-08-07"
	var b strings.Builder
	b.WriteString(chatChunk(model, map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": ""}}}}, nil, nil))
	for _, frag := range fragments {
		b.WriteString(chatChunk(model, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": frag}}}}, nil, nil))
	}
	b.WriteString(chatChunk(model, map[string]any{}, finish, nil))
	b.WriteString(chatChunk(model, nil, nil, chatUsage(50, 0, 10)))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// saveTool records the length of the content it is given.
func saveTool(rec *calls) tools.FuncTool {
	return tools.FuncTool{
		Def: tools.Definition{
			Name: "save", Description: "Save a file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
		},
		Fn: func(_ context.Context, call tools.Call) (agent.ToolResult, error) {
			rec.add("save", call.Args)
			content, _ := call.Args["content"].(string)
			return agent.TextResult(fmt.Sprintf("saved %d bytes to %v", len(content), call.Args["path"])), nil
		},
	}
}

// bigArguments is a save call's arguments holding content, in fragments
// of 16 KB.
func bigArguments(t *testing.T, content string) []string {
	raw, err := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	require.NoError(t, err)
	var frags []string
	for len(raw) > 0 {
		n := min(len(raw), 16<<10)
		frags = append(frags, string(raw[:n]))
		raw = raw[n:]
	}
	return frags
}

// TestWorkflowUntrustedToolArguments plays tool calls whose arguments no
// conformance scenario can express (the reference runner's faux model
// takes arguments already parsed), through the Chat Completions wire
// format.
func TestWorkflowUntrustedToolArguments(t *testing.T) {
	t.Parallel()
	t.Run("1 MB of arguments", func(t *testing.T) {
		t.Parallel()
		// 1 MiB of content: the call runs with all of it, and the durable
		// log and the transcript sent back to the model hold it whole.
		content := strings.Repeat("0123456789abcdef", 1<<16)
		f := newFakeServer(t,
			step{Body: chatToolCallStop("call_big", "save", "tool_calls", bigArguments(t, content)...)},
			step{Body: chatText("gpt-5-2025-08-07", 80, 0, 6, "Saved.")})
		rec := &calls{}
		r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"}, saveTool(rec))
		run := r.start(input("openai/gpt-5", "save a big file", "save"))
		res := r.result(run)
		// The result leaves out the prompt and the 1 MB call to stay
		// under the payload limit; the event log has them.
		require.Equal(t, 2, res.OmittedMessages)
		require.Len(t, res.Messages, 2)
		require.Len(t, rec.of("save"), 1)
		require.Equal(t, content, rec.of("save")[0]["content"])
		require.Equal(t, "saved 1048576 bytes to big.txt", agent.TextOf(res.Messages[0].Content))
		require.Equal(t, agent.StopReasonStop, res.StopReason)
		events, err := agentclient.Events(context.Background(), r.c, run.GetID(), run.GetRunID())
		require.NoError(t, err)
		events, err = agentclient.ResolveEvents(context.Background(), testenv.Store(t), events)
		require.NoError(t, err)
		logged := 0
		for _, e := range events {
			if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleAssistant && len(e.Message.ToolCalls()) == 1 {
				require.Equal(t, content, e.Message.ToolCalls()[0].Arguments["content"], "the durable log")
				logged++
			}
		}
		require.Equal(t, 1, logged)
		sent := find(f.Requests()[1].Body["messages"], has("role", "assistant"))
		require.NotNil(t, sent)
		var args map[string]any
		fn := sent["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
		require.NoError(t, json.Unmarshal([]byte(fn["arguments"].(string)), &args))
		require.Equal(t, content, args["content"], "the next model request")
		h, err := testenv.History(context.Background(), r.c, run.GetID(), run.GetRunID())
		require.NoError(t, err)
		for _, e := range h.Events {
			require.NotContains(t, e.GetEventType().String(), "WorkflowTaskFailed")
		}
		t.Logf("history of the run: %d events, %d bytes", len(h.Events), proto.Size(h))
	})
	t.Run("3 MB of arguments", func(t *testing.T) {
		t.Parallel()
		// Past what one payload may carry (2 MB): the model turn ends in
		// error, saying why, and the run with it; nothing retries. pi has
		// no such limit and would run the call.
		content := strings.Repeat("0123456789abcdef", 3<<16)
		f := newFakeServer(t, step{Body: chatToolCallStop("call_big", "save", "tool_calls", bigArguments(t, content)...)})
		rec := &calls{}
		r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"}, saveTool(rec))
		res := r.result(r.start(input("openai/gpt-5", "save a bigger file", "save")))
		require.Equal(t, agent.StopReasonError, res.StopReason)
		require.Len(t, res.Messages, 2)
		last := lastMessage(res)
		require.Equal(t, agent.StopReasonError, last.StopReason)
		require.Equal(t, res.ErrorMessage, last.ErrorMessage)
		require.Equal(t, "The model's answer is too large: 3.0MB of it (tool calls' arguments) must stay in history, over the 1.5MB a model turn may return", last.ErrorMessage)
		require.Equal(t, int64(10), last.Usage.Output, "the answer's usage is kept")
		require.Empty(t, rec.of("save"))
		require.Len(t, f.Requests(), 1, "not asked again")
	})
	t.Run("length stop in the middle of a call", func(t *testing.T) {
		t.Parallel()
		// pi: stopReason length, the arguments partial-json makes of the
		// fragment (a string cut short kept as far as it came), and the
		// call runs: the loop runs the tool calls of any message that is
		// not an error or aborted (conformance: model-length-with-tool-calls).
		f := newFakeServer(t,
			step{Body: chatToolCallStop("call_cut", "save", "length", `{"path": "notes.txt", "content": "first line\nsecond li`)},
			step{Body: chatText("gpt-5-2025-08-07", 80, 0, 6, "Cut.")})
		rec := &calls{}
		r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"}, saveTool(rec))
		res := r.result(r.start(input("openai/gpt-5", "save notes", "save")))
		require.Len(t, res.Messages, 4)
		require.Equal(t, agent.StopReasonLength, res.Messages[1].StopReason)
		want := map[string]any{"path": "notes.txt", "content": "first line\nsecond li"}
		require.Equal(t, want, res.Messages[1].ToolCalls()[0].Arguments)
		require.Equal(t, []map[string]any{want}, rec.of("save"))
		require.Equal(t, "saved 20 bytes to notes.txt", agent.TextOf(res.Messages[2].Content))
	})
}
