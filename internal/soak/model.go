package soak

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// The soak's model: a local server speaking the OpenAI Chat Completions
// streaming wire format (as bench/contentmodel.go's), which the workers
// reach through their openai-compatible provider. It decides each answer
// from the request alone, so any worker, any attempt, gets the same answer:
//
//   - after the user's "Prompt K of session S", a short text and two tool
//     calls: bash appending "S K" to the session's ledger (the side effect
//     the soak counts) and then sleeping, so that kills land mid-command;
//     and write, an idempotent overwrite of notes/K.txt;
//   - after the tool results, the answer "Prompt K of session S is
//     recorded.".
//
// Each answer streams in chunks ChunkDelay apart, so that kills land
// mid-stream too.
type model struct {
	url      string
	srv      *http.Server
	requests atomic.Int64
	delay    time.Duration
}

// ModelID is the model's id under the workers' openai-compatible provider.
const ModelID = "soak"

// Ledger is the file in a session's workspace each bash call appends to.
const Ledger = "ledger"

// promptText is prompt k of session s; promptRE reads it back.
func promptText(s string, k int) string { return fmt.Sprintf("Prompt %d of session %s.", k, s) }

var promptRE = regexp.MustCompile(`Prompt (\d+) of session (\S+)\.`)

// answerText is the model's answer to prompt k of session s.
func answerText(s string, k int) string {
	return fmt.Sprintf("Prompt %d of session %s is recorded.", k, s)
}

// bashCommand is the side-effecting command of prompt k of session s.
func bashCommand(s string, k int) string {
	return fmt.Sprintf("echo '%s %d' >> %s; sleep 0.3; echo recorded", s, k, Ledger)
}

// bashCallID is the id of that bash call: the same in every attempt of the
// model turn, so that the event log and ledger can be matched.
func bashCallID(s string, k int) string { return fmt.Sprintf("call_%s_%d_bash", s, k) }

func startModel(delay time.Duration) (*model, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &model{url: "http://" + ln.Addr().String() + "/v1", delay: delay}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.serve)
	m.srv = &http.Server{Handler: mux}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *model) close() { _ = m.srv.Close() }

// chatRequest is what the model reads of a request.
type chatRequest struct {
	Model         string `json:"model"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// text is a message's text, whether its content is a string or parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	m.requests.Add(1)
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	// The prompt being answered is the last user message's.
	var session string
	var k int
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "user" {
			continue
		}
		if sm := promptRE.FindStringSubmatch(text(req.Messages[i].Content)); sm != nil {
			fmt.Sscan(sm[1], &k)
			session = sm[2]
		}
		break
	}
	if session == "" {
		http.Error(w, `{"error":{"message":"no soak prompt in the request"}}`, http.StatusBadRequest)
		return
	}
	var a answer
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		a.text = answerText(session, k)
	} else {
		a.text = fmt.Sprintf("Recording prompt %d.", k)
		a.calls = []toolCall{
			{id: bashCallID(session, k), name: "bash", args: map[string]any{"command": bashCommand(session, k)}},
			{id: fmt.Sprintf("call_%s_%d_write", session, k), name: "write",
				args: map[string]any{"path": fmt.Sprintf("notes/%d.txt", k), "content": promptText(session, k) + "\n"}},
		}
	}
	m.stream(w, r, req, a)
}

type toolCall struct {
	id, name string
	args     map[string]any
}

type answer struct {
	text  string
	calls []toolCall
}

// stream writes the answer as chat.completion.chunk events: the text in
// four pieces, then each tool call, each ChunkDelay after the last.
func (m *model) stream(w http.ResponseWriter, r *http.Request, req chatRequest, a answer) {
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
	words := strings.SplitAfter(a.text, " ")
	for i := 0; i < len(words); i += (len(words) + 3) / 4 {
		piece := strings.Join(words[i:min(len(words), i+(len(words)+3)/4)], "")
		if !send(choice(map[string]any{"content": piece}, nil)) {
			return
		}
	}
	finish := "stop"
	for i, c := range a.calls {
		args, _ := json.Marshal(c.args)
		if !send(choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": string(args)}}}}, nil)) {
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
