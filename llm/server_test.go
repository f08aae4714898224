package llm

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// reply is one scripted HTTP response of the fake provider.
type reply struct {
	status int
	header map[string]string
	// body is sent as is; fixture names a file in testdata to send instead.
	body    string
	fixture string
	// cutAfter, when positive, sends that many bytes of the body and then
	// drops the connection, as a network failure mid-stream does.
	cutAfter int
	// hold keeps the stream open after the body until the client goes away.
	hold bool
}

// fakeProvider is a local HTTP server that answers every call with the next
// scripted reply and records what the SDK sent.
type fakeProvider struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
	headers []http.Header
	paths   []string
}

func newFakeProvider(t *testing.T, replies ...reply) *fakeProvider {
	f := &fakeProvider{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.Path)
	if len(f.replies) == 0 {
		f.mu.Unlock()
		http.Error(w, "no reply scripted", http.StatusTeapot)
		return
	}
	rep := f.replies[0]
	f.replies = f.replies[1:]
	f.mu.Unlock()

	data := []byte(rep.body)
	if rep.fixture != "" {
		data = readFixture(f.t, rep.fixture)
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.cutAfter > 0 {
		f.cut(w, status, data[:rep.cutAfter])
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(data)
	if rep.hold {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// cut writes part of a chunked response and closes the connection without
// the terminating chunk.
func (f *fakeProvider) cut(w http.ResponseWriter, status int, part []byte) {
	w.WriteHeader(status)
	_, _ = w.Write(part)
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		f.t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// request returns the JSON body of the i-th call.
func (f *fakeProvider) request(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var m map[string]any
	if err := json.Unmarshal(f.bodies[i], &m); err != nil {
		f.t.Fatalf("request %d is not JSON: %v\n%s", i, err, f.bodies[i])
	}
	return m
}

func (f *fakeProvider) header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares v, as indented JSON, with testdata/name; -update rewrites
// the file.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(buf.Bytes())) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, buf.String())
	}
}

// recorder collects stream events and checks what pi's consumers rely on:
// every event but start and the terminal one names a block of its partial.
type recorder struct {
	events []agent.StreamEvent
	// onEvent, when set, runs for each event (a test may cancel there).
	onEvent func(agent.StreamEvent)
}

func (r *recorder) emit(ev agent.StreamEvent) {
	r.events = append(r.events, ev)
	if r.onEvent != nil {
		r.onEvent(ev)
	}
}

func (r *recorder) types() string {
	var s []string
	for _, ev := range r.events {
		s = append(s, ev.Type)
	}
	return strings.Join(s, " ")
}

// checkPartials verifies that each block event's partial has the block it
// names, and that partials are snapshots: later events do not change them.
func (r *recorder) checkPartials(t *testing.T) {
	t.Helper()
	for i, ev := range r.events {
		switch ev.Type {
		case agent.StreamStart, agent.StreamDone, agent.StreamError:
			continue
		}
		if ev.Partial == nil || ev.ContentIndex >= len(ev.Partial.Content) {
			t.Errorf("event %d (%s) names block %d its partial does not have", i, ev.Type, ev.ContentIndex)
		}
	}
	if len(r.events) > 1 && r.events[0].Partial != nil && len(r.events[0].Partial.Content) != 0 {
		t.Errorf("the start event's partial changed after it was emitted: %d blocks", len(r.events[0].Partial.Content))
	}
}

func mustJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// add scripts more replies.
func (f *fakeProvider) add(replies ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = append(f.replies, replies...)
}

// mustJSONValue encodes v compactly, for comparing small JSON values.
func mustJSONValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
