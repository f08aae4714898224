package llm

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicsse "github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/openai/openai-go/v3"
	openaisse "github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/durable-agents/agentloop/agent"
)

// The fuzz targets feed arbitrary bytes to each provider's stream decoding,
// SDK decoder included, and require that nothing panics and that whatever
// comes out is a well-formed assistant message.

func sseResponse(data []byte) *http.Response {
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(data)),
	}
}

func addSeeds(f *testing.F, prefix string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", prefix+"*.sse"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {}\n\n"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":7}\n\n"))
}

func checkMessage(t *testing.T, m agent.Message, events []agent.StreamEvent) {
	if m.Role != agent.RoleAssistant || m.Usage == nil {
		t.Fatalf("malformed message %+v", m)
	}
	for _, c := range m.Content {
		// Arguments that are JSON but not an object are kept raw, as pi.
		if c.Type == agent.ContentToolCall && c.Arguments == nil && len(c.RawArguments) == 0 {
			t.Fatalf("tool call without arguments: %+v", c)
		}
	}
	for _, ev := range events {
		if ev.Partial != nil && ev.ContentIndex > len(ev.Partial.Content) {
			t.Fatalf("event %s names block %d of %d", ev.Type, ev.ContentIndex, len(ev.Partial.Content))
		}
	}
}

// fuzzStream is the fuzz target of one provider's stream: its seeds are the
// provider's recorded streams (testdata/prefix*.sse), and decode runs each
// input through the SDK's decoder and the provider's handler into a.
func fuzzStream(f *testing.F, prefix, api, provider, model string, price Price, decode func(a *assembler, r *http.Response) agent.Message) {
	addSeeds(f, prefix)
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := &recorder{}
		a := newAssembler(api, provider, model, price, rec.emit)
		checkMessage(t, decode(a, sseResponse(data)), rec.events)
	})
}

func FuzzAnthropicStream(f *testing.F) {
	fuzzStream(f, "anthropic_", APIAnthropicMessages, "anthropic", "claude-sonnet-4-5", Price{3, 15, 0.3, 3.75}, func(a *assembler, r *http.Response) agent.Message {
		stream := anthropicsse.NewStream[anthropic.MessageStreamEventUnion](anthropicsse.NewDecoder(r), nil)
		s := newAnthropicStream(a)
		for stream.Next() {
			s.handle(stream.Current())
		}
		return s.finish()
	})
}

func FuzzOpenAIChatStream(f *testing.F) {
	fuzzStream(f, "openai_chat_", APIOpenAICompletions, "openai", "gpt-5", Price{1.25, 10, 0.125, 0}, func(a *assembler, r *http.Response) agent.Message {
		stream := openaisse.NewStream[openai.ChatCompletionChunk](openaisse.NewDecoder(r), nil)
		s := newChatStream(a, "gpt-5")
		for stream.Next() {
			s.handle(stream.Current())
		}
		return s.finish()
	})
}

func FuzzOpenAIResponsesStream(f *testing.F) {
	fuzzStream(f, "openai_responses_", APIOpenAIResponses, "openai", "gpt-5", Price{1.25, 10, 0.125, 0}, func(a *assembler, r *http.Response) agent.Message {
		stream := openaisse.NewStream[responses.ResponseStreamEventUnion](openaisse.NewDecoder(r), nil)
		s := newResponsesStream(a)
		for stream.Next() && s.err == nil {
			s.handle(stream.Current())
		}
		return s.finish()
	})
}

func FuzzParseStreamingJSON(f *testing.F) {
	for _, s := range []string{`{"a": "hel`, `{"a": [1, {"b": tr`, `{"p": "C:\d"}`, "{\"t\": \"a\nb\"}", `{"a":"\u12`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if parseStreamingJSON(s) == nil {
			t.Fatal("nil arguments")
		}
		// Every prefix of a document parses too, as it streams in.
		for i := 0; i < len(s) && i < 64; i++ {
			_ = parseStreamingJSON(s[:i])
		}
	})
}
