package llm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

const testAnthropicKey = "sk-ant-test-secret-key-123"

func anthropicModelFor(t *testing.T, f *fakeProvider, id string) Model {
	t.Helper()
	p := NewAnthropicProvider(AnthropicConfig{APIKey: testAnthropicKey, BaseURL: f.URL})
	m, err := p.Model(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// anthropicSelf is an earlier turn of the model under test: signed
// thinking, redacted thinking, text and three tool calls.
var anthropicSelf = []agent.Content{
	{Type: agent.ContentThinking, Thinking: "Need weather and a screenshot.", ThinkingSignature: "sig-abc"},
	{Type: agent.ContentThinking, Thinking: "[Reasoning redacted]", ThinkingSignature: "redacted-data", Redacted: true},
	{Type: agent.ContentThinking, Thinking: "Unsigned, from a cut stream."},
	agent.Text("I'll check both."),
	agent.ToolCall("toolu_1", "get_weather", map[string]any{"city": "Paris"}),
	agent.ToolCall("toolu_2", "screenshot", nil),
	agent.ToolCall("toolu_3", "get_weather", map[string]any{"city": "Lyon"}),
}

func TestAnthropicStreamsToolUseWithThinking(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "anthropic_tool_use.sse"})
	m := anthropicModelFor(t, f, "claude-sonnet-4-5")
	msgs := testTranscript(AnthropicProviderName, APIAnthropicMessages, "claude-sonnet-4-5", anthropicSelf)
	got, rec := streamGolden(t, f, m, testRequest(msgs, "medium"), "anthropic_tool_use",
		"start thinking_start thinking_delta thinking_delta thinking_end thinking_start thinking_end "+
			"text_start text_delta text_delta text_end toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_end done")
	if h := f.header(0); h.Get("Anthropic-Beta") != interleavedThinkingBeta || h.Get("Anthropic-Version") == "" {
		t.Errorf("headers: beta %q version %q", h.Get("Anthropic-Beta"), h.Get("Anthropic-Version"))
	}
	if !strings.Contains(f.header(0).Get("Authorization")+f.header(0).Get("X-Api-Key"), testAnthropicKey) {
		t.Error("the API key was not sent")
	}
	u := got.Usage
	if u.Input != 1200 || u.Output != 89 || u.CacheRead != 800 || u.CacheWrite != 100 || u.TotalTokens != 2189 {
		t.Errorf("usage %+v", *u)
	}
	wantCost := (3*1200 + 15*89 + 0.3*800 + 3.75*100) / 1e6
	if d := u.Cost.Total - wantCost; d > 1e-12 || d < -1e-12 {
		t.Errorf("cost %v, want %v", u.Cost.Total, wantCost)
	}
	// The deltas' partials show the arguments as they grow.
	var partialArgs []any
	for _, ev := range rec.events {
		if ev.Type == agent.StreamToolCallDelta {
			partialArgs = append(partialArgs, ev.Partial.Content[ev.ContentIndex].Arguments["city"])
		}
	}
	if len(partialArgs) != 3 || partialArgs[0] != nil || partialArgs[1] != "San Fra" || partialArgs[2] != "San Francisco" {
		t.Errorf("partial arguments %q", partialArgs)
	}
}

func TestAnthropicAdaptiveThinkingAndNoReasoning(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "anthropic_tool_use.sse"}, reply{Fixture: "anthropic_tool_use.sse"}, reply{Fixture: "anthropic_tool_use.sse"})
	msgs := []agent.Message{agent.UserText("hi", 0)}
	ctx := context.Background()
	if _, err := anthropicModelFor(t, f, "claude-opus-4-6").Stream(ctx, Request{Messages: msgs, Options: agent.ModelOptions{Reasoning: "xhigh"}}, nil); err != nil {
		t.Fatal(err)
	}
	temp := 0.5
	if _, err := anthropicModelFor(t, f, "claude-haiku-4-5").Stream(ctx, Request{Messages: msgs, Options: agent.ModelOptions{Temperature: &temp, MaxTokens: 100}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := anthropicModelFor(t, f, "claude-sonnet-4-5").Stream(ctx, Request{Messages: msgs, Options: agent.ModelOptions{Reasoning: "high", MaxTokens: 4000}}, nil); err != nil {
		t.Fatal(err)
	}
	adaptive, plain, budget := f.request(0), f.request(1), f.request(2)
	if th := adaptive["thinking"].(map[string]any); th["type"] != "adaptive" || adaptive["output_config"].(map[string]any)["effort"] != "max" {
		t.Errorf("opus 4.6 xhigh: thinking %v output_config %v", adaptive["thinking"], adaptive["output_config"])
	}
	if adaptive["max_tokens"] != 32000.0 || f.header(0).Get("Anthropic-Beta") != "" {
		t.Errorf("opus 4.6: max_tokens %v beta %q", adaptive["max_tokens"], f.header(0).Get("Anthropic-Beta"))
	}
	if plain["thinking"].(map[string]any)["type"] != "disabled" || plain["temperature"] != 0.5 || plain["max_tokens"] != 100.0 {
		t.Errorf("haiku without reasoning: thinking %v temperature %v max_tokens %v", plain["thinking"], plain["temperature"], plain["max_tokens"])
	}
	// high: 16384 on top of 4000, within the model's 64000.
	if th := budget["thinking"].(map[string]any); th["budget_tokens"] != 16384.0 || budget["max_tokens"] != 20384.0 {
		t.Errorf("sonnet high: thinking %v max_tokens %v", th, budget["max_tokens"])
	}
}

func TestAnthropicInvalidToolJSONDoesNotBreakTheStream(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "anthropic_bad_tool_json.sse"})
	got, err := anthropicModelFor(t, f, "claude-haiku-4-5").Stream(context.Background(), Request{Messages: []agent.Message{agent.UserText("go", 0)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := got.ToolCalls()
	if len(calls) != 2 || got.StopReason != agent.StopReasonToolUse {
		t.Fatalf("got %+v", got)
	}
	if len(calls[0].Arguments) != 0 {
		t.Errorf("invalid JSON: arguments %v, want {} as pi", calls[0].Arguments)
	}
	if calls[1].Arguments["path"] != `C:\dir\sub.txt` {
		t.Errorf("repaired backslashes: %q", calls[1].Arguments["path"])
	}
}

func TestAnthropicRefusalIsAnErrorMessage(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "anthropic_refusal.sse"})
	rec := &recorder{}
	got, err := anthropicModelFor(t, f, "claude-haiku-4-5").Stream(context.Background(), Request{Messages: []agent.Message{agent.UserText("x", 0)}}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != agent.StopReasonError || got.ErrorMessage != "An unknown error occurred" || agent.TextOf(got.Content) != "I can't" {
		t.Errorf("got %+v", got)
	}
	if last := rec.events[len(rec.events)-1]; last.Type != agent.StreamError || last.Reason != "error" || last.Error == nil {
		t.Errorf("last event %+v", last)
	}
}

func TestAnthropicErrors(t *testing.T) {
	cases := []errorCase{
		{"429 retry-after seconds", reply{Status: 429, Fixture: "anthropic_error_429.json", Header: map[string]string{"retry-after": "7"}},
			ErrRateLimited, 429, 7 * time.Second, "Number of request tokens has exceeded your per-minute rate limit"},
		{"529 overloaded", reply{Status: 529, Fixture: "anthropic_error_529.json"}, ErrUnavailable, 529, 0, "Overloaded"},
		{"500", reply{Status: 500, Fixture: "anthropic_error_500.json", Header: map[string]string{"retry-after": "2"}}, ErrUnavailable, 500, 2 * time.Second, "Internal server error"},
		{"401 with the key in the text", reply{Status: 401, Fixture: "anthropic_error_401.json"}, ErrAuth, 401, 0, "invalid x-api-key: [redacted]"},
		{"400 prompt too long", reply{Status: 400, Fixture: "anthropic_error_400_overflow.json"}, ErrContextOverflow, 400, 0, "prompt is too long: 213462 tokens > 200000 maximum"},
		{"413 request too large", reply{Status: 413, Fixture: "anthropic_error_413.json"}, ErrContextOverflow, 413, 0, "Request exceeds the maximum allowed number of bytes."},
		{"400", reply{Status: 400, Fixture: "anthropic_error_400.json"}, ErrBadRequest, 400, 0, "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
		{"404", reply{Status: 404, Fixture: "anthropic_error_404.json"}, ErrNotFound, 404, 0, "model: claude-nonexistent"},
		{"403 without a JSON body", reply{Status: 403, Body: "forbidden by proxy"}, ErrAuth, 403, 0, "forbidden by proxy"},
		{"error event mid-stream", reply{Fixture: "anthropic_overloaded_midstream.sse"}, ErrUnavailable, 529, 0, "Overloaded"},
		{"stream ends before message_stop", reply{Fixture: "anthropic_no_stop.sse"}, ErrUnavailable, 0, 0, errStreamCut.Error()},
		{"connection cut mid-stream", reply{Fixture: "anthropic_tool_use.sse", CutAfter: 900}, ErrUnavailable, 0, 0, "connection error: unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProvider(t, tc.reply)
			e, got := streamError(t, anthropicModelFor(t, f, "claude-haiku-4-5"), testAnthropicKey)
			if e.Kind != tc.kind || e.Status != tc.status || e.RetryAfter != tc.retry {
				t.Errorf("got kind %s status %d retry %v, want %s %d %v", e.Kind, e.Status, e.RetryAfter, tc.kind, tc.status, tc.retry)
			}
			if tc.message != "" && e.Message != tc.message {
				t.Errorf("message %q, want %q", e.Message, tc.message)
			}
			if got.StopReason != agent.StopReasonError || got.ErrorMessage != e.Message {
				t.Errorf("message stopReason %q errorMessage %q", got.StopReason, got.ErrorMessage)
			}
		})
	}
}

func TestAnthropicAbortReturnsAbortedMessage(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "anthropic_no_stop.sse", Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onEvent: func(ev agent.StreamEvent) {
		if ev.Type == agent.StreamTextDelta {
			cancel()
		}
	}}
	got, err := anthropicModelFor(t, f, "claude-haiku-4-5").Stream(ctx, Request{Messages: []agent.Message{agent.UserText("x", 0)}}, rec.emit)
	if err != nil {
		t.Fatalf("abort is not an error, got %v", err)
	}
	if got.StopReason != agent.StopReasonAborted || got.ErrorMessage != "Request was aborted" || agent.TextOf(got.Content) != "Hello" {
		t.Errorf("got %+v", got)
	}
	if got.Usage == nil || got.Usage.Input != 10 {
		t.Errorf("usage from message_start is kept: %+v", got.Usage)
	}
	last := rec.events[len(rec.events)-1]
	if last.Type != agent.StreamError || last.Reason != "aborted" {
		t.Errorf("last event %s %s", last.Type, last.Reason)
	}
}

func TestAnthropicAbortBeforeResponse(t *testing.T) {
	f := newFakeProvider(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := &recorder{}
	got, err := anthropicModelFor(t, f, "claude-haiku-4-5").Stream(ctx, Request{Messages: []agent.Message{agent.UserText("x", 0)}}, rec.emit)
	if err != nil || got.StopReason != agent.StopReasonAborted {
		t.Fatalf("got %+v, %v", got, err)
	}
	if rec.types() != "error" {
		t.Errorf("events %q, want only error (no start before a response, as pi)", rec.types())
	}
}

func TestAnthropicDeadlineIsRetryable(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "anthropic_no_stop.sse", Hold: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := anthropicModelFor(t, f, "claude-haiku-4-5").Stream(ctx, requestX(), nil)
	if e, ok := AsError(err); !ok || e.Kind != ErrUnavailable {
		t.Fatalf("a deadline is not an abort; err = %v", err)
	}
}
