package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/durable-agents/agentloop/agent"
)

// Answers the happy path never sees, from servers speaking each provider's
// real wire format over HTTP, and what pi-ai 0.73.1 makes of each (read in
// its dist/providers: openai-completions.js mapStopReason and the end of
// its stream loop, anthropic.js content_block_start and mapStopReason,
// openai-responses-shared.js processResponsesStream and mapStopReason).

func sseData(v any) string {
	b, _ := json.Marshal(v)
	return "data: " + string(b) + "\n\n"
}

func sseEvent(v map[string]any) string {
	b, _ := json.Marshal(v)
	return "event: " + v["type"].(string) + "\ndata: " + string(b) + "\n\n"
}

func chatChunkJSON(delta map[string]any, finish any, usage any) string {
	choices := []any{}
	if delta != nil {
		choices = append(choices, map[string]any{"index": 0, "delta": delta, "finish_reason": finish})
	}
	return sseData(map[string]any{"id": "chatcmpl-u", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5",
		"choices": choices, "usage": usage})
}

var chatUsageJSON = map[string]any{"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}

func streamOpenAIChat(t *testing.T, body string) (agent.Message, error) {
	t.Helper()
	return streamBody(t, body, func(f *fakeProvider) Model { return openAIModelFor(t, f, openAIChatConfig, "gpt-5") })
}

func TestOpenAIChatUntrustedAnswers(t *testing.T) {
	role := chatChunkJSON(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	text := chatChunkJSON(map[string]any{"content": "partial"}, nil, nil)
	usage := chatChunkJSON(nil, nil, chatUsageJSON)
	const done = "data: [DONE]\n\n"
	cases := []struct {
		name, body string
		stop       agent.StopReason
		errMsg     string
		text       string
		blocks     int
	}{
		// pi: a stream the server ended without a finish_reason is
		// complete, stopReason stop, with what it holds.
		{"no finish_reason, then [DONE]", role + text + usage + done, agent.StopReasonStop, "", "partial", 1},
		// The same with "data:[DONE]" (no space), as some servers write it.
		{"no finish_reason, then data:[DONE]", role + text + usage + "data:[DONE]\n\n", agent.StopReasonStop, "", "partial", 1},
		// pi: usage only is an empty answer.
		{"usage only", usage + done, agent.StopReasonStop, "", "", 0},
		// pi: an empty answer, content [].
		{"empty answer", role + chatChunkJSON(map[string]any{}, "stop", nil) + usage + done, agent.StopReasonStop, "", "", 0},
		// pi's mapStopReason: any other finish_reason is an error naming it.
		{"unknown finish_reason", role + text + chatChunkJSON(map[string]any{}, "eos_token", nil) + usage + done,
			agent.StopReasonError, "Provider finish_reason: eos_token", "partial", 1},
		// pi reads content, reasoning fields and tool_calls of a delta;
		// anything else is ignored.
		{"unknown delta fields", role + chatChunkJSON(map[string]any{"audio": map[string]any{"id": "a1", "data": "AAAA"}, "annotations": []any{map[string]any{"type": "url_citation"}}}, nil, nil) +
			text + chatChunkJSON(map[string]any{}, "stop", nil) + usage + done, agent.StopReasonStop, "", "partial", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := streamOpenAIChat(t, tc.body)
			if err != nil {
				t.Fatalf("err %v, want an answer", err)
			}
			if got.StopReason != tc.stop || got.ErrorMessage != tc.errMsg || agent.TextOf(got.Content) != tc.text || len(got.Content) != tc.blocks {
				t.Errorf("got stopReason %q, errorMessage %q, content %+v; want %q, %q, %q in %d blocks",
					got.StopReason, got.ErrorMessage, got.Content, tc.stop, tc.errMsg, tc.text, tc.blocks)
			}
			if tc.name == "usage only" && got.Usage.Input != 12 {
				t.Errorf("usage %+v, want the server's", got.Usage)
			}
		})
	}
	t.Run("cut before [DONE]", func(t *testing.T) {
		// No finish_reason and no [DONE]: the connection closed early,
		// which is retried rather than taken for the answer.
		_, err := streamOpenAIChat(t, role+text)
		e, ok := AsError(err)
		if !ok || e.Kind != ErrUnavailable || e.Message != errStreamCut.Error() {
			t.Errorf("err %v, want %s %q", err, ErrUnavailable, errStreamCut)
		}
	})
}

// TestDoneReaderFindsASplitMarker feeds a stream one byte at a time: the
// marker is found across reads.
func TestDoneReaderFindsASplitMarker(t *testing.T) {
	for _, body := range []string{"data: {}\n\ndata: [DONE]\n\n", "data:[DONE]", strings.Repeat("x", 100) + "data: [DONE]"} {
		var w doneWatch
		r := &doneReader{ReadCloser: io.NopCloser(iotest.OneByteReader(bytes.NewReader([]byte(body)))), w: &w}
		if _, err := io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
		if !w.seen {
			t.Errorf("%q: marker not seen", body)
		}
	}
	var w doneWatch
	r := &doneReader{ReadCloser: io.NopCloser(bytes.NewReader([]byte(`data: {"content":"[DONE]"}`))), w: &w}
	_, _ = io.ReadAll(r)
	if w.seen {
		t.Error("[DONE] inside a chunk's content is not the marker")
	}
}

func anthropicUntrustedStream(stop string, blocks ...string) string {
	var b strings.Builder
	b.WriteString(sseEvent(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_u", "type": "message", "role": "assistant",
		"model": "claude-haiku-4-5", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}}))
	for _, s := range blocks {
		b.WriteString(s)
	}
	b.WriteString(sseEvent(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 3}}))
	b.WriteString(sseEvent(map[string]any{"type": "message_stop"}))
	return b.String()
}

func anthropicTextBlock(index int, text string) string {
	return sseEvent(map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}}) +
		sseEvent(map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": text}}) +
		sseEvent(map[string]any{"type": "content_block_stop", "index": index})
}

func TestAnthropicUntrustedAnswers(t *testing.T) {
	stream := func(t *testing.T, body string) agent.Message {
		t.Helper()
		got, err := streamBody(t, body, func(f *fakeProvider) Model { return anthropicModelFor(t, f, "claude-haiku-4-5") })
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	t.Run("unknown stop reason", func(t *testing.T) {
		// pi's mapStopReason throws for a stop reason it does not know:
		// the message ends in error with the text so far.
		got := stream(t, anthropicUntrustedStream("something_new", anthropicTextBlock(0, "so far")))
		if got.StopReason != agent.StopReasonError || got.ErrorMessage != "Unhandled stop reason: something_new" || agent.TextOf(got.Content) != "so far" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("unknown content blocks", func(t *testing.T) {
		// pi keeps text, thinking, redacted_thinking and tool_use blocks
		// and ignores the others (server tools, blocks of types to come)
		// with their deltas; the blocks it keeps stay in order.
		server := sseEvent(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": map[string]any{}}}) +
			sseEvent(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": `{"query":"x"}`}}) +
			sseEvent(map[string]any{"type": "content_block_stop", "index": 1}) +
			sseEvent(map[string]any{"type": "content_block_start", "index": 2, "content_block": map[string]any{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []any{}}}) +
			sseEvent(map[string]any{"type": "content_block_stop", "index": 2}) +
			sseEvent(map[string]any{"type": "content_block_start", "index": 3, "content_block": map[string]any{"type": "future_block", "payload": "?"}}) +
			sseEvent(map[string]any{"type": "content_block_delta", "index": 3, "delta": map[string]any{"type": "future_delta", "x": 1}}) +
			sseEvent(map[string]any{"type": "content_block_stop", "index": 3})
		got := stream(t, anthropicUntrustedStream("end_turn", anthropicTextBlock(0, "before"), server, anthropicTextBlock(4, "after")))
		if got.StopReason != agent.StopReasonStop || len(got.Content) != 2 || got.Content[0].Text != "before" || got.Content[1].Text != "after" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("empty answer", func(t *testing.T) {
		got := stream(t, anthropicUntrustedStream("end_turn"))
		if got.StopReason != agent.StopReasonStop || len(got.Content) != 0 || got.ErrorMessage != "" {
			t.Errorf("got %+v", got)
		}
	})
}

func responsesUntrustedStream(status string, items ...string) string {
	resp := func(status string, usage any) map[string]any {
		return map[string]any{"id": "resp_u", "object": "response", "created_at": 1, "status": status, "model": "gpt-5", "output": []any{}, "usage": usage}
	}
	var b strings.Builder
	b.WriteString(sseEvent(map[string]any{"type": "response.created", "sequence_number": 0, "response": resp("in_progress", nil)}))
	for _, s := range items {
		b.WriteString(s)
	}
	usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 3,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 13}
	b.WriteString(sseEvent(map[string]any{"type": "response.completed", "sequence_number": 99, "response": resp(status, usage)}))
	return b.String()
}

func responsesMessage(index int, text string) string {
	item := map[string]any{"id": "msg_" + text, "type": "message", "status": "in_progress", "content": []any{}, "role": "assistant"}
	part := map[string]any{"type": "output_text", "annotations": []any{}, "text": ""}
	done := map[string]any{"id": "msg_" + text, "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "annotations": []any{}, "text": text}}}
	return sseEvent(map[string]any{"type": "response.output_item.added", "output_index": index, "item": item}) +
		sseEvent(map[string]any{"type": "response.content_part.added", "item_id": item["id"], "output_index": index, "content_index": 0, "part": part}) +
		sseEvent(map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text}) +
		sseEvent(map[string]any{"type": "response.output_item.done", "output_index": index, "item": done})
}

func TestOpenAIResponsesUntrustedAnswers(t *testing.T) {
	stream := func(t *testing.T, body string) agent.Message {
		t.Helper()
		got, err := streamBody(t, body, func(f *fakeProvider) Model { return openAIModelFor(t, f, openAIResponsesConfig, "gpt-5") })
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	t.Run("unknown status", func(t *testing.T) {
		// pi's mapStopReason throws for a status it does not know.
		got := stream(t, responsesUntrustedStream("paused", responsesMessage(0, "so far")))
		if got.StopReason != agent.StopReasonError || got.ErrorMessage != "Unhandled stop reason: paused" || agent.TextOf(got.Content) != "so far" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("unknown output items", func(t *testing.T) {
		// pi keeps reasoning, message and function_call items and ignores
		// the others (built-in tools' calls, items of types to come).
		search := map[string]any{"id": "ws_1", "type": "web_search_call", "status": "completed", "action": map[string]any{"type": "search", "query": "x"}}
		future := map[string]any{"id": "fut_1", "type": "future_item", "status": "completed"}
		other := sseEvent(map[string]any{"type": "response.output_item.added", "output_index": 1, "item": search}) +
			sseEvent(map[string]any{"type": "response.web_search_call.completed", "output_index": 1, "item_id": "ws_1"}) +
			sseEvent(map[string]any{"type": "response.output_item.done", "output_index": 1, "item": search}) +
			sseEvent(map[string]any{"type": "response.output_item.added", "output_index": 2, "item": future}) +
			sseEvent(map[string]any{"type": "response.future_event", "output_index": 2}) +
			sseEvent(map[string]any{"type": "response.output_item.done", "output_index": 2, "item": future})
		got := stream(t, responsesUntrustedStream("completed", responsesMessage(0, "before"), other, responsesMessage(3, "after")))
		if got.StopReason != agent.StopReasonStop || len(got.Content) != 2 || got.Content[0].Text != "before" || got.Content[1].Text != "after" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("empty answer", func(t *testing.T) {
		got := stream(t, responsesUntrustedStream("completed"))
		if got.StopReason != agent.StopReasonStop || len(got.Content) != 0 || got.ErrorMessage != "" {
			t.Errorf("got %+v", got)
		}
	})
}
