package fleettest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
)

// Model is a local model server speaking the OpenAI Chat Completions
// streaming wire format, which workers reach through their
// openai-compatible provider (OPENAI_COMPATIBLE_BASE_URL=URL,
// OPENAI_COMPATIBLE_API=completions). Decide picks each answer from the
// request alone; the answer streams in chunks delay apart, so that kills
// can land mid-stream.
type Model struct {
	// URL is the provider's base URL, http://127.0.0.1:port/v1.
	URL      string
	srv      *http.Server
	requests atomic.Int64
	delay    time.Duration
	decide   func(*Request) (Answer, error)
}

// Request is what the model reads of a chat completions request.
type Request struct {
	Model         string `json:"model"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []Message `json:"messages"`
}

// Message is one message of a request.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text is a message's text, whether its content is a string or parts.
func (m Message) Text() string { return fakeprovider.ContentText(m.Content) }

// Last is the request's last message.
func (r *Request) Last() Message { return r.Messages[len(r.Messages)-1] }

// LastUser is the text of the request's last user message, "" when it has
// none.
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// Answer is one assistant message: a text and tool calls.
type Answer struct {
	Text  string
	Calls []ToolCall
}

// ToolCall is one tool call of an answer.
type ToolCall struct {
	ID, Name string
	Args     map[string]any
}

// StartModel starts a model server on a free loopback port. A decide error
// is answered 400 with its text.
func StartModel(delay time.Duration, decide func(*Request) (Answer, error)) (*Model, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Model{URL: "http://" + ln.Addr().String() + "/v1", delay: delay, decide: decide}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.serve)
	m.srv = &http.Server{Handler: mux}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// Close stops the server.
func (m *Model) Close() { _ = m.srv.Close() }

// Requests counts the requests served so far.
func (m *Model) Requests() int64 { return m.requests.Load() }

func (m *Model) serve(w http.ResponseWriter, r *http.Request) {
	m.requests.Add(1)
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	a, err := m.decide(&req)
	if err != nil {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": err.Error()}})
		http.Error(w, string(b), http.StatusBadRequest)
		return
	}
	m.stream(w, r, &req, a)
}

// stream writes the answer as chat.completion.chunk events: the text in
// four pieces, then each tool call, each delay after the last.
func (m *Model) stream(w http.ResponseWriter, r *http.Request, req *Request, a Answer) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	id := fmt.Sprintf("chatcmpl-%d", m.requests.Load())
	created := time.Now().Unix()
	send := func(v map[string]any) bool {
		v["id"], v["object"], v["created"], v["model"] = id, "chat.completion.chunk", created, req.Model
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return false
		case <-time.After(m.delay):
			return true
		}
	}
	choice := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if !send(choice(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	words := strings.SplitAfter(a.Text, " ")
	for i := 0; i < len(words); i += (len(words) + 3) / 4 {
		piece := strings.Join(words[i:min(len(words), i+(len(words)+3)/4)], "")
		if !send(choice(map[string]any{"content": piece}, nil)) {
			return
		}
	}
	finish := "stop"
	for i, c := range a.Calls {
		args, _ := json.Marshal(c.Args)
		if !send(choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(args)}}}}, nil)) {
			return
		}
		finish = "tool_calls"
	}
	send(choice(map[string]any{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"choices": []any{}, "usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}
