package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The gated model is an OpenAI-compatible server (Chat Completions, its
// real event stream) that the worker knows as openai-compatible/gated. Its
// answer streams the first half at once, the second half only once the
// test sends on modelGate, and its end only once the test sends again: so
// a test knows the answer is still streaming while it waits on the screen
// for the second half.
const (
	gatedModelRef = "openai-compatible/gated"
	firstHalf     = "The first half of the answer, streamed before the reattach. "
	secondHalf    = "The second half, streamed after it."
)

var modelGate = make(chan struct{})

// openGate lets the gated model's answer go one step on.
func openGate(t *testing.T) {
	t.Helper()
	select {
	case modelGate <- struct{}{}:
	case <-time.After(appear):
		t.Fatalf("the gated model was not called within %v", appear)
	}
}

// startGatedModel starts the server; its URL goes to the worker.
func startGatedModel() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		flusher, _ := w.(http.Flusher)
		send := func(delta, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-gated", "object": "chat.completion.chunk", "created": 1, "model": "gated",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			if flusher != nil {
				flusher.Flush()
			}
		}
		wait := func() bool {
			select {
			case <-modelGate:
				return true
			case <-r.Context().Done():
				return false
			}
		}
		send(map[string]any{"role": "assistant", "content": firstHalf}, nil)
		if !wait() {
			return
		}
		send(map[string]any{"content": secondHalf}, nil)
		if !wait() {
			return
		}
		send(map[string]any{}, "stop")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
}
