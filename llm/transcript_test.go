package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

var testTools = []Tool{
	{
		Name:        "get_weather",
		Description: "Current weather in a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`),
	},
	{
		Name:        "screenshot",
		Description: "Take a screenshot.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
	},
}

// testTranscript is a conversation that exercises every mapping rule: an
// earlier turn by another provider (its thinking becomes text, its ids are
// rewritten), a turn by the model itself with signed thinking and two tool
// calls, an aborted turn that must be dropped, and tool results with text,
// with only an image, and a call left without a result.
func testTranscript(provider, api, model string, self []agent.Content) []agent.Message {
	return []agent.Message{
		{Role: agent.RoleUser, Content: []agent.Content{agent.Text("hi")}},
		{
			Role: agent.RoleAssistant, Provider: "other", API: "openai-responses", Model: "gpt-5",
			StopReason: agent.StopReasonToolUse,
			Content: []agent.Content{
				{Type: agent.ContentThinking, Thinking: "Foreign thoughts.", ThinkingSignature: `{"type":"reasoning","id":"rs_1"}`},
				{Type: agent.ContentText, Text: "Checking the time.", TextSignature: `{"v":1,"id":"msg_1"}`},
				agent.ToolCall("call_9|fc_9+x", "clock", map[string]any{}),
			},
		},
		{Role: agent.RoleToolResult, ToolCallID: "call_9|fc_9+x", ToolName: "clock", Content: []agent.Content{agent.Text("12:00")}},
		{Role: agent.RoleUser, Content: []agent.Content{
			agent.Text("What's the weather in Paris? Also show me the screen."),
			agent.Image(pngData, "image/png"),
		}},
		{Role: agent.RoleAssistant, Provider: provider, API: api, Model: model, StopReason: agent.StopReasonToolUse, Content: self},
		{Role: agent.RoleToolResult, ToolCallID: selfCallID(self, 0), ToolName: "get_weather", Content: []agent.Content{agent.Text("18°C & sunny")}},
		{Role: agent.RoleToolResult, ToolCallID: selfCallID(self, 1), ToolName: "screenshot", Content: []agent.Content{agent.Image(pngData, "image/png")}, IsError: false},
		{
			Role: agent.RoleAssistant, Provider: provider, API: api, Model: model,
			StopReason: agent.StopReasonAborted, ErrorMessage: agent.AbortedErrorMessage,
			Content: []agent.Content{agent.Text("I was interrupted")},
		},
		{Role: agent.RoleUser, Content: []agent.Content{agent.Text("  "), agent.Text("Thanks! What next?")}},
	}
}

func selfCallID(self []agent.Content, n int) string {
	for _, c := range self {
		if c.Type == agent.ContentToolCall {
			if n == 0 {
				return c.ID
			}
			n--
		}
	}
	return ""
}

func testRequest(msgs []agent.Message, reasoning string) Request {
	temp := 0.2
	return Request{
		SystemPrompt: "You are a helpful assistant.",
		Messages:     msgs,
		Tools:        testTools,
		Options:      agent.ModelOptions{Reasoning: reasoning, Temperature: &temp, SessionID: "session-1"},
	}
}

// streamGolden streams req through m and checks the result and the request
// f received against the golden files name.want.json and
// name.request.json, and the events' types against wantEvents, each partial
// whole. It returns the result and the events.
func streamGolden(t *testing.T, f *fakeProvider, m Model, req Request, name, wantEvents string) (agent.Message, *recorder) {
	t.Helper()
	rec := &recorder{}
	got, err := m.Stream(context.Background(), req, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, name+".want.json", got)
	golden(t, name+".request.json", f.request(0))
	if rec.types() != wantEvents {
		t.Errorf("events:\n got %s\nwant %s", rec.types(), wantEvents)
	}
	rec.checkPartials(t)
	return got, rec
}

// errorCase is a provider's failing answer and the *Error it must become:
// its kind, HTTP status, Retry-After (-1 in the OpenAI table: about 90 s,
// from an HTTP date) and message ("": not checked).
type errorCase struct {
	name    string
	reply   reply
	kind    ErrorKind
	status  int
	retry   time.Duration
	message string
}

// streamError streams one user message through m, which must fail with an
// *Error that does not carry the API key, in itself or in the message's
// errorMessage; it returns both.
func streamError(t *testing.T, m Model, key string) (*Error, agent.Message) {
	t.Helper()
	got, err := m.Stream(context.Background(), requestX(), nil)
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	t.Logf("%s: %q", e.Kind, e.Message)
	if strings.Contains(e.Message, key) || strings.Contains(got.ErrorMessage, key) {
		t.Error("the API key leaked into the error")
	}
	return e, got
}

// requestX is the smallest request: one user message, "x".
func requestX() Request {
	return Request{Messages: []agent.Message{agent.UserText("x", 0)}}
}

// streamBody serves body as the provider's one answer and streams requestX
// through the model that model makes for that provider.
func streamBody(t *testing.T, body string, model func(*fakeProvider) Model) (agent.Message, error) {
	t.Helper()
	return model(newFakeProvider(t, reply{Body: body})).Stream(context.Background(), requestX(), nil)
}
