package llm

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// reply is one scripted HTTP response of the fake provider.
type reply = fakeprovider.Reply

// fakeProvider is the local server the provider SDKs talk to in these
// tests.
type fakeProvider struct {
	*fakeprovider.Server
	t *testing.T
}

func newFakeProvider(t *testing.T, replies ...reply) *fakeProvider {
	return &fakeProvider{Server: fakeprovider.New(t, replies...), t: t}
}

// request returns the JSON body of the i-th call.
func (f *fakeProvider) request(i int) map[string]any {
	raw := f.Requests()[i].Raw
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		f.t.Fatalf("request %d is not JSON: %v\n%s", i, err, raw)
	}
	return m
}

func (f *fakeProvider) header(i int) http.Header { return f.Requests()[i].Header }

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

// mustJSONValue encodes v compactly, for comparing small JSON values.
func mustJSONValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
