package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/compaction"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/tools"
)

// windowServer is an OpenAI-compatible Chat Completions server with a
// context window: a request over it gets the provider's 400
// context_length_exceeded error, as OpenAI sends it. Otherwise it answers a
// prompt with a dump call, the dump's result with "done: <prompt>", and a
// summarization request (pi's summarizer system prompt) with a summary,
// streaming each answer with its usage as the real API does.
type windowServer struct {
	window    int
	requests  atomic.Int32
	overflows atomic.Int32
	summaries atomic.Int32
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []any           `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

func (m chatMessage) text() string { return fakeprovider.ContentText(m.Content) }

func (w *windowServer) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.requests.Add(1)
	var req struct {
		Messages []chatMessage `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(rw, "bad request", http.StatusBadRequest)
		return
	}
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.text())
		for _, c := range m.ToolCalls {
			b, _ := json.Marshal(c)
			chars += len(b)
		}
	}
	tokens := chars / 4
	if tokens > w.window {
		w.overflows.Add(1)
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(rw, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, w.window, tokens)
		return
	}
	last := req.Messages[len(req.Messages)-1]
	var delta map[string]any
	finish := "stop"
	switch {
	case req.Messages[0].Role == "system" && req.Messages[0].text() == compaction.SummarizationSystemPrompt:
		n := w.summaries.Add(1)
		delta = map[string]any{"role": "assistant", "content": fmt.Sprintf("## Goal\nSummary %d of %d tokens.", n, tokens)}
	case last.Role == "user":
		delta = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
			"index": 0, "id": fmt.Sprintf("call_%d", w.requests.Load()), "type": "function",
			"function": map[string]any{"name": "dump", "arguments": "{}"}}}}
		finish = "tool_calls"
	default:
		prompt := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if m := req.Messages[i]; m.Role == "user" && !strings.HasPrefix(m.text(), compaction.SummaryPrefix) {
				prompt = m.text()
				break
			}
		}
		delta = map[string]any{"role": "assistant", "content": "done: " + prompt}
	}
	rw.Header().Set("Content-Type", "text/event-stream")
	chunk := func(v map[string]any) {
		v["id"], v["object"], v["created"], v["model"] = "chatcmpl-w", "chat.completion.chunk", 1741569952, "window-model"
		b, _ := json.Marshal(v)
		fmt.Fprintf(rw, "data: %s\n\n", b)
	}
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}})
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
	chunk(map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": tokens, "completion_tokens": 10, "total_tokens": tokens + 10}})
	fmt.Fprint(rw, "data: [DONE]\n\n")
}

// A session on a real provider SDK (OpenAI-compatible, Chat Completions)
// whose server enforces a 32K context window answers 200 prompts of about
// 1,000 tokens each, 6 times the window, without a failed turn: it
// compacts before the context reaches the window, and would recover from
// the provider's overflow error if its estimate fell short.
func TestSessionOnAWindowedModelNeverFails(t *testing.T) {
	if testing.Short() {
		t.Skip("200 prompts")
	}
	srv := &windowServer{window: 32000}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	dump := tools.FuncTool{Def: tools.Definition{Name: "dump", Description: "prints a thousand tokens"},
		Fn: func(context.Context, tools.Call) (agent.ToolResult, error) {
			return agent.TextResult(strings.Repeat("output line of the dump tool\n", 140)), nil
		}}
	r := newRig(t, map[string]string{"OPENAI_COMPATIBLE_BASE_URL": hs.URL + "/v1", "OPENAI_COMPATIBLE_API": "completions"}, dump)
	run, err := r.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "window-" + randomHex(6), TaskQueue: r.queue},
		agentapi.SessionWorkflow, agentapi.SessionInput{LoopConfig: agent.LoopConfig{
			Model: agent.ModelRef{Provider: "openai-compatible", ID: "window-model"}, Tools: []string{"dump"},
			Compaction: &agent.CompactionConfig{ContextWindow: 32000, ReserveTokens: 8192, KeepRecentTokens: 8000},
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.c.TerminateWorkflow(context.Background(), run.GetID(), "", "test over") })

	// About 40 s on an idle machine; minutes with three test suites on
	// two cores. Only a hang reaches the guard. (500 prompts, 15 times the
	// window and 30 compactions, took 100 s idle: too much of scripts/test
	// for what the next 300 prompts add.)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ended := make(chan agent.Event, 1)
	var mu sync.Mutex
	failed, compactions := 0, 0
	// A watch that ends early (an error) fails the test at once, with its
	// error, rather than leave it waiting for an agent_end that never
	// comes (seen once under CPU burners: 12 minutes without a word).
	watchEnded := make(chan error, 1)
	go func() {
		watchEnded <- agentclient.Watch(ctx, r.c, run.GetID(), "", agentclient.WatchOptions{Store: testenv.Store(t)}, func(e agent.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Type {
			case agent.EventMessageEnd:
				if e.Message.StopReason == agent.StopReasonError {
					failed++
				}
			case agent.EventCompactionEnd:
				if e.Compaction.Result != nil {
					compactions++
				}
			case agent.EventAgentEnd:
				ended <- e
			}
		})
	}()
	const prompts = 200
	for i := range prompts {
		p := fmt.Sprintf("prompt %d", i)
		require.NoError(t, agentclient.Update(ctx, r.c, run.GetID(), agentapi.UpdatePrompt, agentapi.PromptRequest{Text: p}, nil))
		select {
		case e := <-ended:
			last := e.Messages[len(e.Messages)-1]
			require.Equal(t, "done: "+p, agent.TextOf(last.Content), "prompt %d (%s)", i, last.ErrorMessage)
		case err := <-watchEnded:
			t.Fatalf("prompt %d: the watch ended: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("prompt %d not answered", i)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d prompts, %d model requests, %d compactions, %d summaries, %d overflows refused by the server",
		prompts, srv.requests.Load(), compactions, srv.summaries.Load(), srv.overflows.Load())
	require.Zero(t, failed, "no turn failed")
	require.Positive(t, compactions)
	require.Zero(t, srv.overflows.Load(), "the session compacted before the server had to refuse")
}
