package historysecrets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

func marker(name string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}

// A run on a worker with the codec leaves no prompt, argument, tool output,
// partial result, steering message, failure message or answer in clear in
// the server's history, while clients with the keys read all of it.
func TestEncryptedRunOnRealServer(t *testing.T) {
	key, err := codec.GenerateKey("e2e-1")
	require.NoError(t, err)
	keys, err := codec.NewKeys(key)
	require.NoError(t, err)

	secrets := map[string]string{}
	for _, name := range []string{"SYSTEM", "PROMPT", "ARGUMENT", "PARTIAL", "TOOL-OUTPUT", "FAULT", "STEER", "ANSWER"} {
		secrets[name] = marker(name)
	}

	// The worker's and the starter's client: the shared test server's
	// connection with the codec.
	plain := testenv.Client(t)
	c, err := client.NewClientFromExisting(plain, client.Options{
		Logger:           testenv.Quiet(),
		DataConverter:    codec.NewDataConverter(keys),
		FailureConverter: codec.NewFailureConverter(keys),
	})
	require.NoError(t, err)
	defer c.Close()

	started, steered := make(chan struct{}), make(chan struct{})
	probe := tools.FuncTool{
		Def: tools.Definition{Name: "probe", Description: "test probe",
			Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		Fn: func(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
			call.EmitUpdate(agent.TextResult(secrets["PARTIAL"]))
			close(started)
			select {
			case <-steered:
			case <-ctx.Done():
				return agent.ToolResult{}, ctx.Err()
			}
			return agent.TextResult("ran " + call.Args["command"].(string) + ": " + secrets["TOOL-OUTPUT"]), nil
		},
	}
	faulty := tools.FuncTool{
		Def: tools.Definition{Name: "faulty", Description: "always faults", Durability: tools.Durability{MaxAttempts: 1}},
		Fn: func(context.Context, tools.Call) (agent.ToolResult, error) {
			return agent.ToolResult{}, tools.Fault(errors.New("disk said: " + secrets["FAULT"]))
		},
	}
	scripted := llm.NewScriptedProvider()
	scripted.Add("script", llm.Script{Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{
			agent.Text("checking"),
			agent.ToolCall("c1", "probe", map[string]any{"command": "cat " + secrets["ARGUMENT"]}),
			agent.ToolCall("c2", "faulty", map[string]any{}),
		}},
		{Content: []agent.Content{agent.Text(secrets["ANSWER"])}},
	}})
	models := llm.NewRegistry()
	models.Register("test", scripted)
	// The content store (transcript segments, large output) is sealed with
	// the same key ring.
	storeDir := t.TempDir()
	st, err := store.Open(storeDir, store.Options{Keys: keys})
	require.NoError(t, err)
	queue := marker("codec-e2e")
	w, err := agentworker.New(agentworker.Options{Client: c, Store: st, TaskQueue: queue, Models: models, Tools: tools.NewRegistry(probe, faulty)})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := agentclient.Start(ctx, c, marker("codec-e2e"), queue, agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:        agent.ModelRef{Provider: "test", ID: "script"},
			SystemPrompt: secrets["SYSTEM"],
			Tools:        []string{"probe", "faulty"},
		},
		Prompt: secrets["PROMPT"],
	})
	require.NoError(t, err)
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the probe tool never ran")
	}
	_, err = agentclient.Steer(ctx, c, run.GetID(), secrets["STEER"])
	require.NoError(t, err)
	close(steered)

	// With the keys, everything reads as usual.
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, secrets["ANSWER"], agent.TextOf(res.Messages[len(res.Messages)-1].Content))
	var events strings.Builder
	require.NoError(t, agentclient.Follow(ctx, c, run.GetID(), run.GetRunID(), 0, func(e agent.Event) {
		b, _ := json.Marshal(e)
		events.Write(b)
	}))
	for _, name := range []string{"PROMPT", "PARTIAL", "TOOL-OUTPUT", "FAULT", "STEER", "ANSWER"} {
		require.Contains(t, events.String(), secrets[name], "the events Query shows %s to a client with the keys", name)
	}

	// Without the codec: the raw history holds none of it in clear.
	hist, err := testenv.History(ctx, plain, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	raw, err := proto.Marshal(hist)
	require.NoError(t, err)
	asJSON, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(hist)
	require.NoError(t, err)
	for name, s := range secrets {
		require.False(t, strings.Contains(string(raw), s), "%s is in the history in clear", name)
		require.False(t, strings.Contains(string(asJSON), s), "%s is in the history's JSON in clear", name)
	}

	// Every payload that carries the run's data is ciphertext under the key.
	var encrypted, clear int
	for _, p := range historyPayloads(hist) {
		if string(p.GetMetadata()[converter.MetadataEncoding]) == codec.MetadataEncodingEncrypted {
			require.Equal(t, "e2e-1", string(p.GetMetadata()[codec.MetadataEncryptionKeyID]))
			encrypted++
			continue
		}
		clear++
		t.Logf("unencrypted payload (SDK bookkeeping): %s %q", p.GetMetadata()[converter.MetadataEncoding], p.GetData())
	}
	require.Greater(t, encrypted, 10)
	failed := 0
	for _, e := range hist.Events {
		if f := e.GetActivityTaskFailedEventAttributes().GetFailure(); f != nil {
			failed++
			require.Equal(t, "Encoded failure", f.GetMessage())
		}
	}
	require.Equal(t, 1, failed, "the faulty tool's activity failed once")

	// The content store holds the transcript's segments (the system prompt,
	// the prompt, the answer): every blob at rest is sealed (the flags byte
	// after the 4-byte magic has the sealed bit) and shows nothing in clear.
	// The store's id (",store/id", random hex naming the store) is no
	// content and stays plain, so that stores opened with other keys still
	// tell each other apart.
	blobs := 0
	require.NoError(t, filepath.Walk(storeDir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(storeDir, path); strings.HasPrefix(rel, ",store") {
			return nil
		}
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Greater(t, len(data), 5)
		require.NotZero(t, data[4]&2, "%s is sealed", path)
		for name, s := range secrets {
			require.False(t, strings.Contains(string(data), s), "%s is in the content store in clear", name)
		}
		blobs++
		return nil
	}))
	require.Greater(t, blobs, 0, "the run stored its transcript's segments")

	// A client without the keys cannot read the result or the events.
	var noKeys agentapi.AgentLoopResult
	err = plain.GetWorkflow(ctx, run.GetID(), run.GetRunID()).Get(ctx, &noKeys)
	require.Error(t, err)
	resp, err := plain.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.QueryEvents, agentapi.EventsQuery{})
	if err == nil {
		var page agentapi.EventsPage
		require.Error(t, resp.Get(&page), "a query answer is ciphertext too")
	}
}

// historyPayloads finds every Payload anywhere in the history.
func historyPayloads(h *historypb.History) []*commonpb.Payload {
	var out []*commonpb.Payload
	payloadName := (&commonpb.Payload{}).ProtoReflect().Descriptor().FullName()
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if m.Descriptor().FullName() == payloadName {
			out = append(out, m.Interface().(*commonpb.Payload))
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message())
					return true
				})
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	walk(h.ProtoReflect())
	return out
}
