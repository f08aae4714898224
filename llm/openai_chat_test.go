package llm

import (
	"context"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

const testOpenAIKey = "sk-test-openai-secret-456"

func openAIModelFor(t *testing.T, f *fakeProvider, cfg OpenAIConfig, id string) Model {
	t.Helper()
	cfg.BaseURL = f.URL
	m, err := NewOpenAIProvider(cfg).Model(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var openAIChatConfig = OpenAIConfig{Name: OpenAIProviderName, APIKey: testOpenAIKey, API: APIOpenAICompletions, Catalog: true}

// chatSelf is an earlier turn of the model under test, with reasoning that
// came in reasoning_content and OpenRouter-style encrypted reasoning on a
// tool call.
var chatSelf = []agent.Content{
	{Type: agent.ContentThinking, Thinking: "Need weather.", ThinkingSignature: "reasoning_content"},
	agent.Text("I'll check both."),
	{Type: agent.ContentToolCall, ID: "call_1", Name: "get_weather", Arguments: map[string]any{"city": "Paris"},
		ThoughtSignature: `{"type":"reasoning.encrypted","id":"call_1","data":"enc"}`},
	agent.ToolCall("call_2", "screenshot", nil),
	agent.ToolCall("call_3", "get_weather", map[string]any{"city": "<Lyon>"}),
}

func TestOpenAIChatStreamsToolCalls(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "openai_chat_tools.sse"})
	m := openAIModelFor(t, f, openAIChatConfig, "gpt-5")
	msgs := testTranscript(OpenAIProviderName, APIOpenAICompletions, "gpt-5", chatSelf)
	got, _ := streamGolden(t, f, m, testRequest(msgs, "medium"), "openai_chat_tools",
		"start text_start text_delta text_delta toolcall_start toolcall_delta toolcall_delta toolcall_delta "+
			"toolcall_start toolcall_delta text_end toolcall_end toolcall_end done")
	if auth := f.header(0).Get("Authorization"); auth != "Bearer "+testOpenAIKey {
		t.Errorf("Authorization %q", auth)
	}
	if f.Requests()[0].Path != "/chat/completions" {
		t.Errorf("path %s", f.Requests()[0].Path)
	}
	u := got.Usage
	if u.Input != 400 || u.CacheRead != 600 || u.Output != 50 || u.TotalTokens != 1050 {
		t.Errorf("usage %+v", *u)
	}
}

func TestOllamaStreamsReasoningWithoutKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-must-not-be-sent")
	f := newFakeProvider(t, reply{Fixture: "openai_chat_reasoning.sse"})
	m := openAIModelFor(t, f, OpenAIConfig{Name: OllamaProviderName}, "qwen3:8b")
	rec := &recorder{}
	got, err := m.Stream(context.Background(), Request{Messages: []agent.Message{agent.UserText("hi", 0)}}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.header(0).Get("Authorization"); h != "" {
		t.Errorf("a keyless provider sent Authorization %q", h)
	}
	want := "start thinking_start thinking_delta thinking_delta text_start text_delta text_delta thinking_end text_end done"
	if rec.types() != want {
		t.Errorf("events:\n got %s\nwant %s", rec.types(), want)
	}
	th := got.Content[0]
	if th.Thinking != "Let me think about it." || th.ThinkingSignature != "reasoning_content" || agent.TextOf(got.Content) != "Hello there!" {
		t.Errorf("content %+v", got.Content)
	}
	if got.Provider != "ollama" || got.API != "openai-completions" || got.ResponseModel != "" || got.Usage.Cost.Total != 0 {
		t.Errorf("got %+v usage %+v", got, got.Usage)
	}
	body := f.request(0)
	if _, ok := body["max_completion_tokens"]; ok {
		t.Error("no output limit is sent for a model the table does not know")
	}
	if _, ok := body["reasoning_effort"]; ok {
		t.Error("no reasoning is sent when none was asked for")
	}
	// The thinking goes back in the field it came from.
	msgs := []agent.Message{agent.UserText("hi", 0), got, agent.UserText("more", 0)}
	f.Add(reply{Fixture: "openai_chat_reasoning.sse"})
	if _, err := m.Stream(context.Background(), Request{Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	assistant := f.request(1)["messages"].([]any)[1].(map[string]any)
	if assistant["reasoning_content"] != "Let me think about it." || assistant["content"] != "Hello there!" {
		t.Errorf("assistant message sent back: %v", assistant)
	}
}

func TestOpenRouterReasoningAndEncryptedDetails(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "openai_chat_openrouter.sse"}, reply{Fixture: "openai_chat_openrouter.sse"})
	cfg := OpenAIConfig{Name: OpenRouterProviderName, APIKey: "or-key", Catalog: true}
	m := openAIModelFor(t, f, cfg, "anthropic/claude-sonnet-4.5")
	msgs := testTranscript(OpenRouterProviderName, APIOpenAICompletions, "anthropic/claude-sonnet-4.5", chatSelf)
	got, err := m.Stream(context.Background(), testRequest(msgs, "high"), nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai_chat_openrouter.want.json", got)
	// Claude behind OpenRouter gets cache breakpoints on the system
	// prompt, the last tool and the last text.
	golden(t, "openai_chat_openrouter.request.json", f.request(0))
	if r := f.request(0)["reasoning"]; mustJSONValue(r) != `{"effort":"high"}` {
		t.Errorf("reasoning %v", r)
	}
	if _, err := m.Stream(context.Background(), Request{Messages: []agent.Message{agent.UserText("weather?", 0)}}, nil); err != nil {
		t.Fatal(err)
	}
	if r := f.request(1)["reasoning"]; mustJSONValue(r) != `{"effort":"none"}` {
		t.Errorf("reasoning off: %v", r)
	}
}

func TestOpenAIChatErrors(t *testing.T) {
	cases := []errorCase{
		{"429 retry-after-ms", reply{Status: 429, Fixture: "openai_error_429.json", Header: map[string]string{"retry-after-ms": "2400", "retry-after": "3"}},
			ErrRateLimited, 429, 2400 * time.Millisecond, "Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s."},
		{"429 retry-after HTTP date", reply{Status: 429, Fixture: "openai_error_429.json", Header: map[string]string{"retry-after": time.Now().Add(90 * time.Second).UTC().Format(http1123)}},
			ErrRateLimited, 429, -1, ""},
		{"500", reply{Status: 500, Fixture: "openai_error_500.json"}, ErrUnavailable, 500, 0, "The server had an error while processing your request. Sorry about that!"},
		{"503 plain text", reply{Status: 503, Body: "upstream connect error"}, ErrUnavailable, 503, 0, "upstream connect error"},
		{"401", reply{Status: 401, Fixture: "openai_error_401.json"}, ErrAuth, 401, 0,
			"Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"400 context overflow", reply{Status: 400, Fixture: "openai_error_400_overflow.json"}, ErrContextOverflow, 400, 0,
			"Your input exceeds the context window of this model. Please adjust your input and try again."},
		{"400", reply{Status: 400, Fixture: "openai_error_400.json"}, ErrBadRequest, 400, 0, ""},
		{"404 Ollama", reply{Status: 404, Fixture: "ollama_error_404.json"}, ErrNotFound, 404, 0, `model "llama9" not found, try pulling it first`},
		{"404 with a string error", reply{Status: 404, Fixture: "server_error_string_404.json"}, ErrNotFound, 404, 0, "model 'llama9' not found"},
		{"error object mid-stream", reply{Fixture: "openai_chat_midstream_error.sse"}, ErrUnavailable, 502, 0, "Provider returned error\nupstream overloaded"},
		{"stream without finish_reason", reply{Fixture: "openai_chat_no_finish.sse"}, ErrUnavailable, 0, 0, errStreamCut.Error()},
		{"connection cut mid-stream", reply{Fixture: "openai_chat_tools.sse", CutAfter: 700}, ErrUnavailable, 0, 0, "connection error: unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProvider(t, tc.reply)
			e, _ := streamError(t, openAIModelFor(t, f, openAIChatConfig, "gpt-5"), testOpenAIKey)
			if e.Kind != tc.kind || e.Status != tc.status {
				t.Errorf("got kind %s status %d, want %s %d", e.Kind, e.Status, tc.kind, tc.status)
			}
			if tc.retry >= 0 && e.RetryAfter != tc.retry {
				t.Errorf("retry after %v, want %v", e.RetryAfter, tc.retry)
			}
			if tc.retry < 0 && (e.RetryAfter < 80*time.Second || e.RetryAfter > 91*time.Second) {
				t.Errorf("retry after %v, want about 90s", e.RetryAfter)
			}
			if tc.message != "" && e.Message != tc.message {
				t.Errorf("message %q, want %q", e.Message, tc.message)
			}
		})
	}
}

// http1123 is the HTTP date format of Retry-After.
const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

func TestOpenAIChatContentFilterIsAnErrorMessage(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "openai_chat_content_filter.sse"})
	rec := &recorder{}
	got, err := openAIModelFor(t, f, openAIChatConfig, "gpt-5").Stream(context.Background(), Request{Messages: []agent.Message{agent.UserText("x", 0)}}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != agent.StopReasonError || got.ErrorMessage != "Provider finish_reason: content_filter" {
		t.Errorf("got %+v", got)
	}
	if rec.types() != "start text_start text_delta text_end error" {
		t.Errorf("events %s", rec.types())
	}
}

func TestOpenAIChatAbort(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "openai_chat_no_finish.sse", Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onEvent: func(ev agent.StreamEvent) {
		if ev.Type == agent.StreamTextDelta && ev.Delta == " text" {
			cancel()
		}
	}}
	got, err := openAIModelFor(t, f, openAIChatConfig, "gpt-5").Stream(ctx, Request{Messages: []agent.Message{agent.UserText("x", 0)}}, rec.emit)
	if err != nil {
		t.Fatalf("abort is not an error: %v", err)
	}
	if got.StopReason != agent.StopReasonAborted || got.ErrorMessage != agent.AbortedErrorMessage || agent.TextOf(got.Content) != "Some text" {
		t.Errorf("got %+v", got)
	}
}
