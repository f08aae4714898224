package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The content benchmark's model: a local server speaking the OpenAI Chat
// Completions streaming wire format, which the worker reaches through its
// openai-compatible provider (OPENAI_COMPATIBLE_BASE_URL). It decides each
// answer from the request alone, so any number of sessions can share it:
//
//   - model "loop-N": bash "echo turn K" until N tool results are in the
//     context, then a short answer;
//   - any other model: when the last message is the user's, bash printing
//     48,000 characters of incompressible text; after a tool result, a
//     short answer.
const (
	contentCommand  = "head -c 36000 /dev/urandom | base64 -w0"
	contentOutput   = 48000 // characters contentCommand prints
	contentLoopPref = "loop-"
)

// contentModel is the server.
type contentModel struct {
	url      string // base URL, ending in /v1
	srv      *http.Server
	requests atomic.Int64
	maxBody  atomic.Int64 // the largest request body, bytes
	calls    atomic.Int64 // tool call ids handed out
}

func startContentModel() (*contentModel, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &contentModel{url: "http://" + ln.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.serve)
	m.srv = &http.Server{Handler: mux}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *contentModel) close() { _ = m.srv.Close() }

func (m *contentModel) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.requests.Add(1)
	for n := int64(len(body)); ; {
		old := m.maxBody.Load()
		if n <= old || m.maxBody.CompareAndSwap(old, n) {
			break
		}
	}
	model := ""
	if ms := jsonKeys(body, "model"); len(ms) > 0 {
		model = ms[0]
	}
	roles := jsonKeys(body, "role")
	if len(roles) == 0 {
		http.Error(w, `{"error":{"message":"no messages"}}`, http.StatusBadRequest)
		return
	}
	last := roles[len(roles)-1]
	var answer chatAnswer
	if n, ok := strings.CutPrefix(model, contentLoopPref); ok {
		turns, _ := strconv.Atoi(n)
		done := 0
		for _, role := range roles {
			if role == "tool" {
				done++
			}
		}
		if done < turns {
			answer.command = fmt.Sprintf("echo turn %d", done+1)
		} else {
			answer.text = fmt.Sprintf("Counted %d turns.", done)
		}
	} else if last == "tool" {
		answer.text = "The command printed 48,000 characters of random base64."
	} else {
		answer.command = contentCommand
	}
	if answer.command != "" {
		answer.callID = fmt.Sprintf("call_%d", m.calls.Add(1))
	}
	includeUsage := bytes.Contains(body, []byte(`"include_usage":true`))
	m.stream(w, model, answer, len(body)/4, includeUsage)
}

// chatAnswer is either a bash call or a text.
type chatAnswer struct {
	command, callID, text string
}

// stream writes the answer as chat.completion.chunk events.
func (m *contentModel) stream(w http.ResponseWriter, model string, a chatAnswer, promptTokens int, usage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	id := fmt.Sprintf("chatcmpl-%d", m.requests.Load())
	created := time.Now().Unix()
	send := func(v map[string]any) {
		v["id"], v["object"], v["created"], v["model"] = id, "chat.completion.chunk", created, model
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	choice := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	finish := "stop"
	if a.command != "" {
		args, _ := json.Marshal(map[string]string{"command": a.command})
		send(choice(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": a.callID, "type": "function", "function": map[string]any{"name": "bash", "arguments": ""}}}}, nil))
		send(choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "function": map[string]any{"arguments": string(args)}}}}, nil))
		finish = "tool_calls"
	} else {
		send(choice(map[string]any{"role": "assistant", "content": ""}, nil))
		send(choice(map[string]any{"content": a.text}, nil))
	}
	send(choice(map[string]any{}, finish))
	if usage {
		send(map[string]any{"choices": []any{}, "usage": map[string]any{
			"prompt_tokens": promptTokens, "completion_tokens": 20, "total_tokens": promptTokens + 20}})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// jsonKeys returns the string values of every object key named key in a
// JSON document, in document order, without decoding it: the requests of a
// long session are tens of megabytes, and the model needs only the roles.
// Inside JSON strings a quote is always escaped, so a match preceded by a
// backslash is text, not a key.
func jsonKeys(doc []byte, key string) []string {
	var out []string
	for rest := doc; ; {
		v, after, ok := nextKey(rest, key)
		if !ok {
			return out
		}
		out = append(out, v)
		rest = after
	}
}

func nextKey(doc []byte, key string) (value string, rest []byte, ok bool) {
	pat := []byte(`"` + key + `"`)
	for {
		i := bytes.Index(doc, pat)
		if i < 0 {
			return "", nil, false
		}
		j := i + len(pat)
		if i > 0 && doc[i-1] == '\\' {
			doc = doc[j:]
			continue
		}
		k := j
		for k < len(doc) && (doc[k] == ' ' || doc[k] == '\n' || doc[k] == '\t' || doc[k] == '\r') {
			k++
		}
		if k >= len(doc) || doc[k] != ':' {
			doc = doc[j:]
			continue
		}
		k++
		for k < len(doc) && (doc[k] == ' ' || doc[k] == '\n' || doc[k] == '\t' || doc[k] == '\r') {
			k++
		}
		if k >= len(doc) || doc[k] != '"' {
			doc = doc[k:]
			continue
		}
		end := bytes.IndexByte(doc[k+1:], '"')
		if end < 0 {
			return "", nil, false
		}
		return string(doc[k+1 : k+1+end]), doc[k+1+end:], true
	}
}
