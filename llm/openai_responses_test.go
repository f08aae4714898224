package llm

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

var openAIResponsesConfig = OpenAIConfig{Name: OpenAIProviderName, APIKey: testOpenAIKey, API: APIOpenAIResponses, Catalog: true}

// responsesSelf is an earlier turn of the model under test: a reasoning item
// kept whole as the signature, text with its item id, and tool calls with
// call and item ids.
var responsesSelf = []agent.Content{
	{Type: agent.ContentThinking, Thinking: "Earlier thoughts",
		ThinkingSignature: `{"id":"rs_prev","type":"reasoning","encrypted_content":"gAAAA-prev","summary":[{"type":"summary_text","text":"Earlier thoughts"}]}`},
	{Type: agent.ContentText, Text: "I'll check both.", TextSignature: `{"v":1,"id":"msg_prev","phase":"commentary"}`},
	agent.ToolCall("call_1|fc_1", "get_weather", map[string]any{"city": "Paris"}),
	agent.ToolCall("call_2|fc_2", "screenshot", nil),
	agent.ToolCall("call_3|fc_3", "get_weather", map[string]any{"city": "Lyon"}),
}

func TestOpenAIResponsesStreamsReasoningAndToolCalls(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "openai_responses_tools.sse"})
	m := openAIModelFor(t, f, openAIResponsesConfig, "gpt-5")
	msgs := testTranscript(OpenAIProviderName, APIOpenAIResponses, "gpt-5", responsesSelf)
	got, _ := streamGolden(t, f, m, testRequest(msgs, "high"), "openai_responses_tools",
		"start thinking_start thinking_delta thinking_delta thinking_delta thinking_end text_start text_delta text_delta text_end "+
			"toolcall_start toolcall_delta toolcall_delta toolcall_delta toolcall_end done")
	if f.Requests()[0].Path != "/responses" {
		t.Errorf("path %s", f.Requests()[0].Path)
	}
	// The reasoning item is kept whole, to be sent back next turn.
	var item map[string]any
	if err := json.Unmarshal([]byte(got.Content[0].ThinkingSignature), &item); err != nil || item["encrypted_content"] != "gAAAAABo-ENCRYPTED" {
		t.Errorf("thinking signature %q", got.Content[0].ThinkingSignature)
	}

	// Next turn: the reply goes back as reasoning item, message and call.
	f.Add(reply{Fixture: "openai_responses_tools.sse"})
	next := append(msgs[:len(msgs):len(msgs)], got)
	if _, err := m.Stream(context.Background(), Request{Messages: next}, nil); err != nil {
		t.Fatal(err)
	}
	input := f.request(1)["input"].([]any)
	tail := input[len(input)-4:]
	if mustJSONValue(tail[0].(map[string]any)["id"]) != `"rs_1"` || tail[1].(map[string]any)["id"] != "msg_1" || tail[1].(map[string]any)["phase"] != "commentary" {
		t.Errorf("sent back: %s", mustJSONValue(tail))
	}
	if call := tail[2].(map[string]any); call["id"] != "fc_1" || call["call_id"] != "call_1" || call["arguments"] != `{"city":"Paris"}` {
		t.Errorf("function call sent back: %v", call)
	}
	if r := f.request(1)["reasoning"]; r != nil {
		t.Errorf("gpt-5 cannot switch reasoning off, so none is sent: %v", r)
	}
}

func TestOpenAIResponsesIncompleteIsLength(t *testing.T) {
	f := newFakeProvider(t, reply{Fixture: "openai_responses_incomplete.sse"})
	got, err := openAIModelFor(t, f, openAIResponsesConfig, "gpt-5").Stream(context.Background(), requestX(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != agent.StopReasonLength || agent.TextOf(got.Content) != "Long answer" {
		t.Errorf("got %+v", got)
	}
	// Flex processing costs half.
	if want := (1.25*100 + 10*16) / 1e6 / 2; got.Usage.Cost.Total != want {
		t.Errorf("cost %v, want %v", got.Usage.Cost.Total, want)
	}
}

func TestOpenAIResponsesErrors(t *testing.T) {
	cases := []struct {
		name    string
		reply   reply
		kind    ErrorKind
		message string
	}{
		{"response.failed", reply{Fixture: "openai_responses_failed.sse"}, ErrUnavailable, "server_error: The model failed to generate a response."},
		{"error event", reply{Fixture: "openai_responses_error_event.sse"}, ErrRateLimited, "Error Code rate_limit_exceeded: Rate limit reached for requests"},
		{"cut mid-stream", reply{Fixture: "openai_responses_tools.sse", CutAfter: 3000}, ErrUnavailable, "connection error: unexpected EOF"},
		{"ends before response.completed", reply{Body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n"}, ErrUnavailable, errStreamCut.Error()},
		{"400 overflow", reply{Status: 400, Fixture: "openai_error_400_overflow.json"}, ErrContextOverflow, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeProvider(t, tc.reply)
			e, got := streamError(t, openAIModelFor(t, f, openAIResponsesConfig, "gpt-5"), testOpenAIKey)
			if e.Kind != tc.kind || tc.message != "" && e.Message != tc.message {
				t.Errorf("got %s %q, want %s %q", e.Kind, e.Message, tc.kind, tc.message)
			}
			if got.StopReason != agent.StopReasonError {
				t.Errorf("stopReason %q", got.StopReason)
			}
		})
	}
}
