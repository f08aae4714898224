package llm_test

// End-to-end tests of the real providers inside the real AgentLoop workflow:
// a worker on the shared test server (internal/harness/testenv) with providers
// registered by llm.RegisterFromEnv, whose official SDKs talk to a local
// httptest server speaking each provider's streaming wire format (the
// fixtures in testdata, shared with the provider tests). They prove what a
// run does with tool calls, usage and cost, rate limits, outages, cut
// streams, exhausted retries, requests that must not be retried, an abort
// mid-stream and broken tool arguments.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

func TestMain(m *testing.M) { testenv.MainCheckingLeaks(m) }

// ---------------------------------------------------------------------------
// The fake provider: an httptest server answering each call with the next
// scripted step and recording what the SDK sent.

// step is one scripted HTTP answer of the fake provider.
type step = fakeprovider.Reply

// fakeServer answers each call with the next step and records the calls.
type fakeServer = fakeprovider.Server

func newFakeServer(t *testing.T, steps ...step) *fakeServer { return fakeprovider.New(t, steps...) }

// ---------------------------------------------------------------------------
// Streams of the three wire formats for turns the fixtures do not have.

// anthropicEvent is one SSE event of the Messages API.
func anthropicEvent(v map[string]any) string {
	b, _ := json.Marshal(v)
	return "event: " + v["type"].(string) + "\ndata: " + string(b) + "\n\n"
}

func anthropicHead(id string, input, cacheRead, cacheWrite int) []string {
	return []string{
		anthropicEvent(map[string]any{"type": "message_start", "message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": []any{},
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": input, "cache_read_input_tokens": cacheRead, "cache_creation_input_tokens": cacheWrite, "output_tokens": 1},
		}}),
		anthropicEvent(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
	}
}

func anthropicTextDelta(s string) string {
	return anthropicEvent(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": s}})
}

func anthropicTail(output int) []string {
	return []string{
		anthropicEvent(map[string]any{"type": "content_block_stop", "index": 0}),
		anthropicEvent(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}}),
		anthropicEvent(map[string]any{"type": "message_stop"}),
	}
}

// anthropicText is a text answer with the given usage.
func anthropicText(id string, input, cacheRead, cacheWrite, output int, pieces ...string) string {
	evs := anthropicHead(id, input, cacheRead, cacheWrite)
	for _, p := range pieces {
		evs = append(evs, anthropicTextDelta(p))
	}
	return strings.Join(append(evs, anthropicTail(output)...), "")
}

// chatChunk is one Chat Completions chunk.
func chatChunk(model string, delta map[string]any, finish any, usage any) string {
	choices := []any{}
	if delta != nil {
		choices = append(choices, map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish})
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1741569952, "model": model,
		"choices": choices, "usage": usage,
	})
	return "data: " + string(b) + "\n\n"
}

func chatUsage(prompt, cached, completion int) map[string]any {
	return map[string]any{
		"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": cached},
	}
}

// chatText is a Chat Completions text answer with the given usage.
func chatText(model string, prompt, cached, completion int, pieces ...string) string {
	var b strings.Builder
	b.WriteString(chatChunk(model, map[string]any{"role": "assistant", "content": ""}, nil, nil))
	for _, p := range pieces {
		b.WriteString(chatChunk(model, map[string]any{"content": p}, nil, nil))
	}
	b.WriteString(chatChunk(model, map[string]any{}, "stop", nil))
	b.WriteString(chatChunk(model, nil, nil, chatUsage(prompt, cached, completion)))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// chatToolCall is a Chat Completions tool call whose arguments arrive in
// the given fragments.
func chatToolCall(model, id, name string, usage map[string]any, fragments ...string) string {
	var b strings.Builder
	b.WriteString(chatChunk(model, map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": ""}}}}, nil, nil))
	for _, frag := range fragments {
		b.WriteString(chatChunk(model, map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": frag}}}}, nil, nil))
	}
	b.WriteString(chatChunk(model, map[string]any{}, "tool_calls", nil))
	b.WriteString(chatChunk(model, nil, nil, usage))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func responsesEvent(seq *int, v map[string]any) string {
	v["sequence_number"] = *seq
	*seq++
	b, _ := json.Marshal(v)
	return "event: " + v["type"].(string) + "\ndata: " + string(b) + "\n\n"
}

// responsesText is a Responses API text answer with the given usage.
func responsesText(input, cached, output int, pieces ...string) string {
	seq := 0
	full := strings.Join(pieces, "")
	resp := func(status string, usage any, output []any) map[string]any {
		return map[string]any{"id": "resp_e2e2", "object": "response", "created_at": 1756315700, "status": status,
			"model": "gpt-5-2025-08-07", "output": output, "usage": usage, "service_tier": "default"}
	}
	part := func(text string) map[string]any {
		return map[string]any{"type": "output_text", "annotations": []any{}, "text": text}
	}
	item := map[string]any{"id": "msg_2", "type": "message", "status": "completed", "role": "assistant", "content": []any{part(full)}}
	var b strings.Builder
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.created", "response": resp("in_progress", nil, []any{})}))
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.output_item.added", "output_index": 0,
		"item": map[string]any{"id": "msg_2", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}}))
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.content_part.added", "item_id": "msg_2", "output_index": 0, "content_index": 0, "part": part("")}))
	for _, p := range pieces {
		b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.output_text.delta", "item_id": "msg_2", "output_index": 0, "content_index": 0, "delta": p}))
	}
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.output_text.done", "item_id": "msg_2", "output_index": 0, "content_index": 0, "text": full}))
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.content_part.done", "item_id": "msg_2", "output_index": 0, "content_index": 0, "part": part(full)}))
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item}))
	usage := map[string]any{"input_tokens": input, "input_tokens_details": map[string]any{"cached_tokens": cached},
		"output_tokens": output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": input + output}
	b.WriteString(responsesEvent(&seq, map[string]any{"type": "response.completed", "response": resp("completed", usage, []any{item})}))
	return b.String()
}

// ---------------------------------------------------------------------------
// The worker and runs.

// rig is a worker on a task queue of its own, on the shared test server,
// with the providers RegisterFromEnv makes from vars and the given tools.
type rig struct {
	t     *testing.T
	c     client.Client
	queue string
}

func newRig(t *testing.T, vars map[string]string, ts ...tools.Tool) *rig {
	t.Helper()
	// The worker's client logs nothing: failing attempts are the point here.
	c, err := client.NewClientFromExisting(testenv.Client(t), client.Options{Logger: testenv.Quiet()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	models := llm.NewRegistry()
	llm.RegisterFromEnv(models, func(k string) string { return vars[k] })
	r := &rig{t: t, c: c, queue: "llm-e2e-" + randomHex(6)}
	w, err := agentworker.New(agentworker.Options{Client: c, Store: testenv.Store(t), TaskQueue: r.queue,
		Models: models, Tools: tools.NewRegistry(ts...), DefaultWorkspace: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return r
}

func (r *rig) start(in agentapi.AgentLoopInput) client.WorkflowRun {
	r.t.Helper()
	run, err := agentclient.Start(context.Background(), r.c, "llm-e2e-"+randomHex(6), r.queue, in)
	require.NoError(r.t, err)
	return run
}

// result waits for a run, which must complete (not fail).
func (r *rig) result(run client.WorkflowRun) agentapi.AgentLoopResult {
	r.t.Helper()
	return testenv.Result(r.t, run, 80*time.Second)
}

func (r *rig) state(run client.WorkflowRun) agentapi.RunState {
	r.t.Helper()
	resp, err := r.c.QueryWorkflow(context.Background(), run.GetID(), run.GetRunID(), agentapi.QueryState)
	require.NoError(r.t, err)
	var st agentapi.RunState
	require.NoError(r.t, resp.Get(&st))
	return st
}

func (r *rig) history(run client.WorkflowRun) *historypb.History {
	r.t.Helper()
	h, err := testenv.History(context.Background(), r.c, run.GetID(), run.GetRunID())
	require.NoError(r.t, err)
	return h
}

// modelTurn is one ModelTurn activity in a history: the event that
// scheduled it, the start of its last attempt (which carries the attempt
// number and the failure of the attempt before) and how it closed.
type modelTurn struct {
	scheduled, started, closed *historypb.HistoryEvent
}

func (m modelTurn) attempt() int32 {
	return m.started.GetActivityTaskStartedEventAttributes().GetAttempt()
}

func (m modelTurn) lastFailure() (kind, message string) {
	f := m.started.GetActivityTaskStartedEventAttributes().GetLastFailure()
	return f.GetApplicationFailureInfo().GetType(), f.GetMessage()
}

func modelTurns(t *testing.T, h *historypb.History) []modelTurn {
	t.Helper()
	var turns []modelTurn
	index := map[int64]int{}
	for _, e := range h.Events {
		switch e.EventType {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "ModelTurn" {
				index[e.EventId] = len(turns)
				turns = append(turns, modelTurn{scheduled: e})
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if i, ok := index[e.GetActivityTaskStartedEventAttributes().GetScheduledEventId()]; ok {
				turns[i].started = e
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if i, ok := index[e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]; ok {
				turns[i].closed = e
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			if i, ok := index[e.GetActivityTaskFailedEventAttributes().GetScheduledEventId()]; ok {
				turns[i].closed = e
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			if i, ok := index[e.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()]; ok {
				turns[i].closed = e
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			if i, ok := index[e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()]; ok {
				turns[i].closed = e
			}
		}
	}
	for i, m := range turns {
		require.NotNil(t, m.started, "model turn %d started", i)
		require.NotNil(t, m.closed, "model turn %d closed", i)
	}
	return turns
}

// ---------------------------------------------------------------------------
// Test tools.

// calls records the arguments each tool ran with.
type calls struct {
	mu   sync.Mutex
	args map[string][]map[string]any
}

func (c *calls) add(name string, args map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.args == nil {
		c.args = map[string][]map[string]any{}
	}
	c.args[name] = append(c.args[name], args)
}

func (c *calls) of(name string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.args[name]
}

// weatherTool answers with a fixed forecast for the city it is given.
func weatherTool(rec *calls) tools.FuncTool {
	return tools.FuncTool{
		Def: tools.Definition{
			Name: "get_weather", Description: "Current weather for a city", ReadOnly: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}`),
		},
		Fn: func(_ context.Context, call tools.Call) (agent.ToolResult, error) {
			rec.add("get_weather", call.Args)
			return agent.TextResult(fmt.Sprintf("18°C and sunny in %v", call.Args["city"])), nil
		},
	}
}

func screenshotTool(rec *calls) tools.FuncTool {
	return tools.FuncTool{
		Def: tools.Definition{Name: "screenshot", Description: "Take a screenshot", ReadOnly: true},
		Fn: func(_ context.Context, call tools.Call) (agent.ToolResult, error) {
			rec.add("screenshot", call.Args)
			return agent.TextResult("a screenshot of a sunny sky"), nil
		},
	}
}

// readTool echoes the path it was given.
func readTool(rec *calls) tools.FuncTool {
	return tools.FuncTool{
		Def: tools.Definition{
			Name: "read", Description: "Read a file", ReadOnly: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		},
		Fn: func(_ context.Context, call tools.Call) (agent.ToolResult, error) {
			rec.add("read", call.Args)
			return agent.TextResult(fmt.Sprintf("contents of %v", call.Args["path"])), nil
		},
	}
}

// ---------------------------------------------------------------------------
// Helpers.

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func input(model, prompt string, toolNames ...string) agentapi.AgentLoopInput {
	ref, err := agent.ParseModelRef(model)
	if err != nil {
		panic(err)
	}
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: ref, Tools: toolNames, SystemPrompt: "You answer weather questions."},
		Prompt:     prompt,
	}
}

func lastMessage(res agentapi.AgentLoopResult) agent.Message {
	return res.Messages[len(res.Messages)-1]
}

// find returns the first JSON object anywhere in v that ok accepts.
func find(v any, ok func(map[string]any) bool) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if ok(x) {
			return x
		}
		for _, e := range x {
			if m := find(e, ok); m != nil {
				return m
			}
		}
	case []any:
		for _, e := range x {
			if m := find(e, ok); m != nil {
				return m
			}
		}
	}
	return nil
}

// has matches objects whose fields equal the given values.
func has(kv ...any) func(map[string]any) bool {
	return func(m map[string]any) bool {
		for i := 0; i < len(kv); i += 2 {
			if m[kv[i].(string)] != kv[i+1] {
				return false
			}
		}
		return true
	}
}

// usage is a usage's token counts with the cost at price.
func usage(p llm.Price, input, output, cacheRead, cacheWrite int64) agent.Usage {
	u := agent.Usage{Input: input, Output: output, CacheRead: cacheRead, CacheWrite: cacheWrite,
		TotalTokens: input + output + cacheRead + cacheWrite}
	u.Cost.Input = p.Input * float64(input) / 1e6
	u.Cost.Output = p.Output * float64(output) / 1e6
	u.Cost.CacheRead = p.CacheRead * float64(cacheRead) / 1e6
	u.Cost.CacheWrite = p.CacheWrite * float64(cacheWrite) / 1e6
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
	return u
}

func requireUsage(t *testing.T, what string, want, got agent.Usage) {
	t.Helper()
	gotTokens, wantTokens := got, want
	gotTokens.Cost, wantTokens.Cost = agent.Cost{}, agent.Cost{}
	require.Equal(t, wantTokens, gotTokens, "%s: tokens", what)
	for _, c := range [][3]any{
		{"input", want.Cost.Input, got.Cost.Input}, {"output", want.Cost.Output, got.Cost.Output},
		{"cacheRead", want.Cost.CacheRead, got.Cost.CacheRead}, {"cacheWrite", want.Cost.CacheWrite, got.Cost.CacheWrite},
		{"total", want.Cost.Total, got.Cost.Total},
	} {
		require.InDelta(t, c[1].(float64), c[2].(float64), 1e-12, "%s: cost.%s (%+v)", what, c[0], got.Cost)
	}
}

// everywhere is every place a run's data is kept on the server or handed to
// a client: the raw history, its JSON, the result and the state Query.
func everywhere(t *testing.T, r *rig, run client.WorkflowRun, res agentapi.AgentLoopResult) string {
	t.Helper()
	h := r.history(run)
	raw, err := proto.Marshal(h)
	require.NoError(t, err)
	js, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(h)
	require.NoError(t, err)
	resJSON, _ := json.Marshal(res)
	stJSON, _ := json.Marshal(r.state(run))
	return string(raw) + "\n" + string(js) + "\n" + string(resJSON) + "\n" + string(stJSON)
}

func requireNoKey(t *testing.T, places, key string) {
	t.Helper()
	for _, needle := range []string{key, key[len(key)-16:], base64.StdEncoding.EncodeToString([]byte(key))} {
		if i := strings.Index(places, needle); i >= 0 {
			t.Fatalf("the API key shows in the run's history or result: …%q…", places[max(0, i-80):min(len(places), i+len(needle)+40)])
		}
	}
}

// ---------------------------------------------------------------------------
// 4. Retries exhausted (first, as it is the longest: the other parallel
// tests run while it waits out the backoff).

// A server that always answers 503: the model turn is attempted as often as
// the run's modelRetryTimeout allows (20 s here: 5 attempts, backing off 1,
// 2, 4, 8 s; the next would start after 31 s), then the run completes with
// pi's error message: stopReason error and the provider's text.
func TestWorkflowModelRetriesExhausted(t *testing.T) {
	t.Parallel()
	const text = "The engine is currently overloaded, please try again later."
	f := newFakeServer(t)
	f.Always = &step{Status: 503, Body: `{"error":{"message":"` + text + `","type":"server_error","param":null,"code":null}}`}
	r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL})
	began := time.Now()
	in := input("openai/gpt-5", "What's the weather in Paris?")
	in.ModelRetryTimeout = "20s"
	run := r.start(in)
	res := r.result(run)
	took := time.Since(began)

	last := lastMessage(res)
	require.Equal(t, agent.StopReasonError, last.StopReason)
	require.Equal(t, text, last.ErrorMessage)
	require.Equal(t, agent.StopReasonError, res.StopReason)
	require.Equal(t, text, res.ErrorMessage)
	require.Len(t, res.Messages, 2, "the prompt and the error message")

	reqs := f.Requests()
	require.Len(t, reqs, 5, "five calls reached the provider")
	turns := modelTurns(t, r.history(run))
	require.Len(t, turns, 1)
	require.EqualValues(t, 5, turns[0].attempt())
	failed := turns[0].closed.GetActivityTaskFailedEventAttributes()
	require.NotNil(t, failed, "the activity failed for good")
	require.Equal(t, enumspb.RETRY_STATE_TIMEOUT, failed.GetRetryState())
	require.Equal(t, string(llm.ErrUnavailable), failed.GetFailure().GetApplicationFailureInfo().GetType())
	require.Equal(t, text, failed.GetFailure().GetMessage())
	// The policy's backoff: 1, 2, 4, 8, 16 s between attempts. The
	// server guarantees no attempt starts before its backoff is over (the
	// 100 ms allow for the requests' own latencies); how much later it
	// starts depends on the machine's load, so the policy itself is read
	// from the history rather than timed from above.
	scheduled := turns[0].scheduled.GetActivityTaskScheduledEventAttributes()
	policy := scheduled.GetRetryPolicy()
	require.Equal(t, time.Second, policy.GetInitialInterval().AsDuration())
	require.Equal(t, 2.0, policy.GetBackoffCoefficient())
	require.EqualValues(t, 0, policy.GetMaximumAttempts(), "attempts are unlimited")
	require.Equal(t, 20*time.Second, scheduled.GetScheduleToCloseTimeout().AsDuration())
	for i := 1; i < len(reqs); i++ {
		gap, want := reqs[i].At.Sub(reqs[i-1].At), time.Second<<(i-1)
		require.Greater(t, gap, want-100*time.Millisecond, "gap before attempt %d: %v, want %v", i+1, gap, want)
	}
	t.Logf("5 attempts over %v; run took %v", reqs[4].At.Sub(reqs[0].At).Round(time.Millisecond), took.Round(time.Millisecond))
}

// ---------------------------------------------------------------------------
// 1. A tool-using conversation per provider.

type conversation struct {
	name    string
	vars    func(url string) map[string]string
	model   string
	api     string // the api the assistant messages are stamped with
	key     string // sent as the provider expects; "" means no Authorization
	path    string
	turn1   step
	turn2   step
	callIDs []string // the tool calls of turn 1, in order
	// wantArgs is what get_weather runs with.
	wantArgs map[string]any
	price    llm.Price
	usage    [2]agent.Usage // tokens only; cost is priced below
	text     string         // turn 2's answer
	// checkTurn2 checks the second request: the tool results with their
	// call ids and whatever turn 1 must send back.
	checkTurn2 func(t *testing.T, body map[string]any)
}

func conversations() []conversation {
	const answer = "It is 18°C and sunny."
	anthropicKey := "sk-ant-e2e-" + randomHex(8)
	openaiKey := "sk-e2e-" + randomHex(8)
	sonnet, _ := llm.LookupPrice("claude-sonnet-4-5")
	gpt5, _ := llm.LookupPrice("gpt-5")
	return []conversation{
		{
			name: "anthropic messages",
			vars: func(url string) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": anthropicKey, "ANTHROPIC_BASE_URL": url}
			},
			model: "anthropic/claude-sonnet-4-5", api: llm.APIAnthropicMessages, key: anthropicKey, path: "/v1/messages",
			// Thinking with a signature, redacted thinking, text and a
			// get_weather call whose JSON arrives in three fragments.
			turn1:    step{Fixture: "anthropic_tool_use.sse"},
			turn2:    step{Body: anthropicText("msg_02", 1500, 2000, 0, 12, "It is 18°C", " and sunny.")},
			callIDs:  []string{"toolu_01A09q90qw90lq917835lq9"},
			wantArgs: map[string]any{"city": "San Francisco", "unit": "celsius"},
			price:    sonnet,
			usage:    [2]agent.Usage{{Input: 1200, Output: 89, CacheRead: 800, CacheWrite: 100}, {Input: 1500, Output: 12, CacheRead: 2000}},
			text:     answer,
			checkTurn2: func(t *testing.T, body map[string]any) {
				require.Equal(t, "claude-sonnet-4-5", body["model"])
				msgs := body["messages"].([]any)
				require.Len(t, msgs, 3, "prompt, assistant turn, tool results")
				assistant := msgs[1].(map[string]any)
				require.Equal(t, "assistant", assistant["role"])
				blocks := assistant["content"].([]any)
				require.Equal(t, map[string]any{"type": "thinking", "thinking": "The user wants the weather.",
					"signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}, blocks[0], "signed thinking goes back as it came")
				require.Equal(t, map[string]any{"type": "redacted_thinking",
					"data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}, blocks[1])
				require.NotNil(t, find(blocks, has("type", "tool_use", "id", "toolu_01A09q90qw90lq917835lq9", "name", "get_weather")))
				result := find(msgs[2], has("type", "tool_result"))
				require.NotNil(t, result, "turn 2 carries the tool result")
				require.Equal(t, "toolu_01A09q90qw90lq917835lq9", result["tool_use_id"])
				require.Equal(t, "18°C and sunny in San Francisco", result["content"])
				require.Equal(t, false, result["is_error"])
			},
		},
		{
			name: "openai chat completions",
			vars: func(url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": openaiKey, "OPENAI_BASE_URL": url, "OPENAI_API": "completions"}
			},
			model: "openai/gpt-5", api: llm.APIOpenAICompletions, key: openaiKey, path: "/chat/completions",
			// Text, then get_weather with its JSON in three fragments and a
			// screenshot call, in parallel.
			turn1:    step{Fixture: "openai_chat_tools.sse"},
			turn2:    step{Body: chatText("gpt-5-2025-08-07", 1300, 1000, 20, "It is 18°C", " and sunny.")},
			callIDs:  []string{"call_abc", "call_def"},
			wantArgs: map[string]any{"city": "Paris"},
			price:    gpt5,
			usage:    [2]agent.Usage{{Input: 400, Output: 50, CacheRead: 600}, {Input: 300, Output: 20, CacheRead: 1000}},
			text:     answer,
			checkTurn2: func(t *testing.T, body map[string]any) {
				require.NotNil(t, find(body["messages"], has("role", "assistant")), "the assistant turn goes back")
				call := find(body["messages"], has("id", "call_abc", "type", "function"))
				require.NotNil(t, call)
				require.JSONEq(t, `{"city":"Paris"}`, call["function"].(map[string]any)["arguments"].(string))
				r1 := find(body["messages"], has("role", "tool", "tool_call_id", "call_abc"))
				require.NotNil(t, r1, "turn 2 carries get_weather's result")
				require.Equal(t, "18°C and sunny in Paris", r1["content"])
				r2 := find(body["messages"], has("role", "tool", "tool_call_id", "call_def"))
				require.NotNil(t, r2, "turn 2 carries screenshot's result")
				require.Equal(t, "a screenshot of a sunny sky", r2["content"])
			},
		},
		{
			name: "openai responses",
			vars: func(url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": openaiKey, "OPENAI_BASE_URL": url}
			},
			model: "openai/gpt-5", api: llm.APIOpenAIResponses, key: openaiKey, path: "/responses",
			// A reasoning item, text, and get_weather with its JSON in two
			// deltas before the done event.
			turn1:    step{Fixture: "openai_responses_tools.sse"},
			turn2:    step{Body: responsesText(1400, 1100, 25, "It is 18°C", " and sunny.")},
			callIDs:  []string{"call_1|fc_1"},
			wantArgs: map[string]any{"city": "Paris"},
			price:    gpt5,
			usage:    [2]agent.Usage{{Input: 600, Output: 120, CacheRead: 400}, {Input: 300, Output: 25, CacheRead: 1100}},
			text:     answer,
			checkTurn2: func(t *testing.T, body map[string]any) {
				require.NotNil(t, find(body["input"], has("type", "reasoning", "encrypted_content", "gAAAAABo-ENCRYPTED")),
					"the encrypted reasoning item goes back")
				require.NotNil(t, find(body["input"], has("type", "function_call", "call_id", "call_1", "id", "fc_1")))
				out := find(body["input"], has("type", "function_call_output"))
				require.NotNil(t, out, "turn 2 carries the tool result")
				require.Equal(t, "call_1", out["call_id"])
				require.Equal(t, "18°C and sunny in Paris", out["output"])
			},
		},
		{
			name: "openai-compatible server without a key",
			vars: func(url string) map[string]string {
				return map[string]string{"OPENAI_COMPATIBLE_BASE_URL": url, "OPENAI_COMPATIBLE_NAME": "vllm"}
			},
			model: "vllm/qwen3-coder", api: llm.APIOpenAICompletions, path: "/chat/completions",
			turn1: step{Body: chatToolCall("qwen3-coder", "chatcmpl-tool-9a1", "get_weather", chatUsage(210, 0, 31),
				`{"ci`, `ty": "Par`, `is", "un`, `it": "celsius"}`)},
			turn2:    step{Body: chatText("qwen3-coder", 260, 0, 9, "It is 18°C", " and sunny.")},
			callIDs:  []string{"chatcmpl-tool-9a1"},
			wantArgs: map[string]any{"city": "Paris", "unit": "celsius"},
			// A local server's model names are not OpenAI's: no price.
			usage: [2]agent.Usage{{Input: 210, Output: 31}, {Input: 260, Output: 9}},
			text:  answer,
			checkTurn2: func(t *testing.T, body map[string]any) {
				r := find(body["messages"], has("role", "tool", "tool_call_id", "chatcmpl-tool-9a1"))
				require.NotNil(t, r, "turn 2 carries the tool result")
				require.Equal(t, "18°C and sunny in Paris", r["content"])
			},
		},
	}
}

// For each provider: turn 1 calls tools (arguments streamed in fragments),
// the tools run in the worker, turn 2 sees their results and answers. The
// messages, stop reasons, usage and cost come out as pi's, and the run's
// total usage is in the result and the state Query.
func TestWorkflowToolConversation(t *testing.T) {
	t.Parallel()
	for _, cv := range conversations() {
		t.Run(cv.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeServer(t, cv.turn1, cv.turn2)
			rec := &calls{}
			r := newRig(t, cv.vars(f.URL), weatherTool(rec), screenshotTool(rec))
			run := r.start(input(cv.model, "What's the weather? Use the tools.", "get_weather", "screenshot"))
			res := r.result(run)

			// user, assistant (toolUse), tool results, assistant (stop).
			require.Len(t, res.Messages, 3+len(cv.callIDs), "messages: %+v", res.Messages)
			first, final := res.Messages[1], lastMessage(res)
			require.Equal(t, agent.StopReasonToolUse, first.StopReason)
			require.Equal(t, agent.StopReasonStop, final.StopReason)
			require.Equal(t, agent.StopReasonStop, res.StopReason)
			require.Equal(t, cv.text, agent.TextOf(final.Content))
			require.Equal(t, 2, res.Turns)
			ref, _ := agent.ParseModelRef(cv.model)
			for _, m := range []agent.Message{first, final} {
				require.Equal(t, [3]string{cv.api, ref.Provider, ref.ID}, [3]string{m.API, m.Provider, m.Model})
			}
			var ids []string
			for _, c := range first.ToolCalls() {
				ids = append(ids, c.ID)
			}
			require.Equal(t, cv.callIDs, ids)
			require.Equal(t, cv.wantArgs, first.ToolCalls()[0].Arguments)
			require.Equal(t, []map[string]any{cv.wantArgs}, rec.of("get_weather"), "the tool ran once with the streamed arguments")
			for i, id := range cv.callIDs {
				m := res.Messages[2+i]
				require.Equal(t, agent.RoleToolResult, m.Role)
				require.Equal(t, id, m.ToolCallID)
				require.False(t, m.IsError)
			}
			if cv.name == "anthropic messages" {
				th := first.Content[0]
				require.Equal(t, agent.ContentThinking, th.Type)
				require.Equal(t, "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", th.ThinkingSignature)
			}

			// Usage and cost per message and for the run.
			var total agent.Usage
			for i, m := range []agent.Message{first, final} {
				u := cv.usage[i]
				want := usage(cv.price, u.Input, u.Output, u.CacheRead, u.CacheWrite)
				require.NotNil(t, m.Usage)
				requireUsage(t, fmt.Sprintf("turn %d", i+1), want, *m.Usage)
				total = total.Add(want)
			}
			requireUsage(t, "result", total, res.Usage)
			st := r.state(run)
			requireUsage(t, "state Query", total, st.Usage)
			require.Equal(t, agent.StopReasonStop, st.StopReason)
			if cv.price != (llm.Price{}) {
				require.Greater(t, total.Cost.Total, 0.0, "a known model is priced")
			}

			// What the provider received.
			reqs := f.Requests()
			require.Len(t, reqs, 2)
			for i, q := range reqs {
				require.Equal(t, cv.path, q.Path)
				auth := q.Header.Get("Authorization") + q.Header.Get("X-Api-Key")
				if cv.key == "" {
					require.Empty(t, auth, "request %d: a keyless provider sends no credentials", i)
				} else {
					require.Contains(t, auth, cv.key, "request %d", i)
				}
			}
			cv.checkTurn2(t, reqs[1].Body)

			turns := modelTurns(t, r.history(run))
			require.Len(t, turns, 2)
			for _, m := range turns {
				require.EqualValues(t, 1, m.attempt())
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 2. Rate limit.

// A 429 with retry-after: 1, twice: the third attempt succeeds, each retry
// waits the provider's 1 s (the policy's own backoff would wait 1 s, then
// 2 s), and the history shows attempt 3 with the rate limit as the last
// failure.
func TestWorkflowRateLimitHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	limited := step{Status: 429, Fixture: "anthropic_error_429.json", Header: map[string]string{"retry-after": "1"}}
	f := newFakeServer(t, limited, limited, step{Body: anthropicText("msg_rl", 20, 0, 0, 5, "Hello", " again.")})
	r := newRig(t, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-e2e-" + randomHex(8), "ANTHROPIC_BASE_URL": f.URL})
	run := r.start(input("anthropic/claude-haiku-4-5", "hi"))

	// Watch the pending activity while it waits between attempts.
	var mu sync.Mutex
	var waits []*workflowpb.PendingActivityInfo
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx := context.Background(); ; {
			d, err := r.c.DescribeWorkflow(ctx, run.GetID(), run.GetRunID())
			if err != nil || d.RawResponse.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return
			}
			for _, pa := range d.RawResponse.GetPendingActivities() {
				if pa.GetActivityType().GetName() == "ModelTurn" && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && pa.GetAttempt() > 1 {
					mu.Lock()
					if len(waits) == 0 || waits[len(waits)-1].GetAttempt() != pa.GetAttempt() {
						waits = append(waits, pa)
					}
					mu.Unlock()
				}
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()
	res := r.result(run)
	<-done

	final := lastMessage(res)
	require.Equal(t, agent.StopReasonStop, final.StopReason)
	require.Equal(t, "Hello again.", agent.TextOf(final.Content))
	require.Empty(t, final.ErrorMessage)
	require.Len(t, res.Messages, 2)

	turns := modelTurns(t, r.history(run))
	require.Len(t, turns, 1)
	require.EqualValues(t, 3, turns[0].attempt(), "ActivityTaskStarted attempt")
	kind, msg := turns[0].lastFailure()
	require.Equal(t, string(llm.ErrRateLimited), kind)
	require.Equal(t, "Number of request tokens has exceeded your per-minute rate limit", msg)
	require.NotNil(t, turns[0].closed.GetActivityTaskCompletedEventAttributes())

	reqs := f.Requests()
	require.Len(t, reqs, 3)
	gap1, gap2 := reqs[1].At.Sub(reqs[0].At), reqs[2].At.Sub(reqs[1].At)
	t.Logf("gaps between attempts: %v, %v", gap1.Round(time.Millisecond), gap2.Round(time.Millisecond))
	// The gaps' lower bound is the retry-after; their upper bound is up to
	// the machine's load, so that the delay is the provider's 1 s and not
	// the policy's 2 s is read from the server below (NextAttemptScheduleTime).
	require.GreaterOrEqual(t, gap1, 900*time.Millisecond)
	require.GreaterOrEqual(t, gap2, 900*time.Millisecond)

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, waits, "the pending activity was seen waiting for a retry")
	for _, pa := range waits {
		require.Equal(t, string(llm.ErrRateLimited), pa.GetLastFailure().GetApplicationFailureInfo().GetType())
		delay := pa.GetNextAttemptScheduleTime().AsTime().Sub(pa.GetLastAttemptCompleteTime().AsTime())
		t.Logf("pending attempt %d: next attempt %v after the failure", pa.GetAttempt(), delay)
		require.InDelta(t, 1.0, delay.Seconds(), 0.05, "NextAttemptScheduleTime is the retry-after")
	}
}

// ---------------------------------------------------------------------------
// 3. Outages.

// 500, 529 and a stream cut mid-way are retried, and the run then completes
// with the answer of the attempt that succeeded and nothing of the cut one.
func TestWorkflowOutageRetries(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, model string
		vars        func(url string) map[string]string
		steps       []step
		lastFailure string
	}{
		{
			name: "anthropic 500, 529, cut", model: "anthropic/claude-sonnet-4-5",
			vars: func(url string) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-e2e-" + randomHex(8), "ANTHROPIC_BASE_URL": url}
			},
			steps: []step{
				{Status: 500, Fixture: "anthropic_error_500.json"},
				{Status: 529, Fixture: "anthropic_error_529.json"},
				// message_start and the thinking block's start, then the
				// connection drops.
				{Fixture: "anthropic_tool_use.sse", CutAfter: 900},
				{Body: anthropicText("msg_ok", 20, 0, 0, 5, "Back", " online.")},
			},
			lastFailure: "connection error: unexpected EOF",
		},
		{
			name: "openai chat 503, cut", model: "openai/gpt-5",
			vars: func(url string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": url, "OPENAI_API": "completions"}
			},
			steps: []step{
				{Status: 503, Body: "upstream connect error"},
				{Fixture: "openai_chat_tools.sse", CutAfter: 700},
				{Body: chatText("gpt-5-2025-08-07", 20, 0, 5, "Back", " online.")},
			},
			lastFailure: "connection error: unexpected EOF",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeServer(t, tc.steps...)
			r := newRig(t, tc.vars(f.URL))
			run := r.start(input(tc.model, "are you there?"))
			res := r.result(run)
			final := lastMessage(res)
			require.Equal(t, agent.StopReasonStop, final.StopReason)
			require.Equal(t, "Back online.", agent.TextOf(final.Content))
			require.Len(t, final.Content, 1, "nothing of the cut attempt")
			require.Len(t, res.Messages, 2)
			require.Len(t, f.Requests(), len(tc.steps))

			turns := modelTurns(t, r.history(run))
			require.Len(t, turns, 1)
			require.EqualValues(t, len(tc.steps), turns[0].attempt())
			kind, msg := turns[0].lastFailure()
			require.Equal(t, string(llm.ErrUnavailable), kind)
			require.Equal(t, tc.lastFailure, msg)
		})
	}
}

// ---------------------------------------------------------------------------
// 5. Failures that must not be retried.

// 401, 403, 400, 404 and a context overflow fail the model turn at once:
// one attempt, a non-retryable ApplicationError of the kind's type in
// history, and a run that ends with pi's error message carrying the
// provider's text. The planted key, which a 401 quotes back, shows nowhere.
func TestWorkflowModelFailsFast(t *testing.T) {
	t.Parallel()
	type failure struct {
		name   string
		status int
		body   func(key string) string
		kind   llm.ErrorKind
		text   string
	}
	file := func(name string) func(string) string {
		return func(string) string { b, _ := os.ReadFile(filepath.Join("testdata", name)); return string(b) }
	}
	providers := []struct {
		name, model, keyPrefix string
		vars                   func(url, key string) map[string]string
		failures               []failure
	}{
		{
			name: "anthropic", model: "anthropic/claude-sonnet-4-5", keyPrefix: "sk-ant-api03-PLANTED-",
			vars: func(url, key string) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": key, "ANTHROPIC_BASE_URL": url}
			},
			failures: []failure{
				{"401", 401, func(key string) string {
					return `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: ` + key + `"},"request_id":"req_e2e"}`
				}, llm.ErrAuth, "invalid x-api-key: [redacted]"},
				{"403", 403, func(string) string {
					return `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`
				}, llm.ErrAuth, "Your API key does not have permission to use the specified resource."},
				{"400", 400, file("anthropic_error_400.json"), llm.ErrBadRequest,
					"messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
				{"404", 404, file("anthropic_error_404.json"), llm.ErrNotFound, "model: claude-nonexistent"},
				{"400 context overflow", 400, file("anthropic_error_400_overflow.json"), llm.ErrContextOverflow,
					"prompt is too long: 213462 tokens > 200000 maximum"},
			},
		},
		{
			name: "openai", model: "openai/gpt-5", keyPrefix: "sk-proj-PLANTED-",
			vars: func(url, key string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": url}
			},
			failures: []failure{
				{"401", 401, func(key string) string {
					return `{"error": {"message": "Incorrect API key provided: ` + key + `. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`
				}, llm.ErrAuth, "Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys."},
				{"403", 403, func(string) string {
					return `{"error": {"message": "Project proj_e2e does not have access to model gpt-5", "type": "invalid_request_error", "param": null, "code": "model_not_found"}}`
				}, llm.ErrAuth, "Project proj_e2e does not have access to model gpt-5"},
				{"400", 400, file("openai_error_400.json"), llm.ErrBadRequest,
					"Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 45 instead."},
				{"404", 404, func(string) string {
					return `{"error": {"message": "The model gpt-5 does not exist or you do not have access to it.", "type": "invalid_request_error", "param": null, "code": "model_not_found"}}`
				}, llm.ErrNotFound, "The model gpt-5 does not exist or you do not have access to it."},
				{"400 context overflow", 400, file("openai_error_400_overflow.json"), llm.ErrContextOverflow,
					"Your input exceeds the context window of this model. Please adjust your input and try again."},
			},
		},
	}
	for _, p := range providers {
		for _, fc := range p.failures {
			t.Run(p.name+" "+fc.name, func(t *testing.T) {
				t.Parallel()
				key := p.keyPrefix + randomHex(16)
				f := newFakeServer(t)
				f.Always = &step{Status: fc.status, Body: fc.body(key)}
				r := newRig(t, p.vars(f.URL, key))
				run := r.start(input(p.model, "What's the weather in Paris?"))
				res := r.result(run)

				final := lastMessage(res)
				require.Equal(t, agent.StopReasonError, final.StopReason)
				require.Equal(t, fc.text, final.ErrorMessage)
				require.NotEmpty(t, final.API, "the failed turn keeps what the provider returned, as pi-ai's error message does")
				require.Equal(t, agent.StopReasonError, res.StopReason)
				require.Equal(t, fc.text, res.ErrorMessage)

				reqs := f.Requests()
				require.Len(t, reqs, 1, "one call, no retry")
				require.Contains(t, reqs[0].Header.Get("Authorization")+reqs[0].Header.Get("X-Api-Key"), key, "the planted key was sent")
				turns := modelTurns(t, r.history(run))
				require.Len(t, turns, 1)
				require.EqualValues(t, 1, turns[0].attempt())
				failed := turns[0].closed.GetActivityTaskFailedEventAttributes()
				require.NotNil(t, failed)
				info := failed.GetFailure().GetApplicationFailureInfo()
				require.Equal(t, string(fc.kind), info.GetType())
				require.True(t, info.GetNonRetryable())
				require.Equal(t, fc.text, failed.GetFailure().GetMessage())
				require.Equal(t, enumspb.RETRY_STATE_NON_RETRYABLE_FAILURE, failed.GetRetryState())

				requireNoKey(t, everywhere(t, r, run, res), key)
			})
		}
	}
}

// ---------------------------------------------------------------------------
// 6. Abort while streaming.

// The abort Update lands while the model streams (an event every 100 ms):
// the stream stops, and the run ends at once with pi's aborted message
// holding the text streamed so far.
func TestWorkflowAbortWhileStreaming(t *testing.T) {
	t.Parallel()
	const words = 60
	evs := anthropicHead("msg_slow", 30, 0, 0)
	var full strings.Builder
	for i := range words {
		w := fmt.Sprintf("w%d ", i)
		full.WriteString(w)
		evs = append(evs, anthropicTextDelta(w))
	}
	evs = append(evs, anthropicTail(words)...)
	f := newFakeServer(t, step{Events: evs, Interval: 100 * time.Millisecond})
	r := newRig(t, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-e2e-" + randomHex(8), "ANTHROPIC_BASE_URL": f.URL})
	run := r.start(input("anthropic/claude-sonnet-4-5", "count slowly"))

	// Wait for a few words (two head events, then one word per event).
	require.Eventually(t, func() bool { return f.Sent() >= 2+8 }, 20*time.Second, 10*time.Millisecond)
	sentAtAbort := int(f.Sent()) - 2
	abortAt := time.Now()
	st, err := agentclient.Abort(context.Background(), r.c, run.GetID(), "user pressed Esc")
	require.NoError(t, err)
	require.False(t, st.AlreadyAborted)
	res := r.result(run)
	took := time.Since(abortAt)
	select {
	case <-f.Gone():
	case <-time.After(10 * time.Second):
		t.Fatal("the provider's stream was not closed by the abort")
	}
	sentAtEnd := int(f.Sent()) - 2
	t.Logf("abort after %d words; run ended %v later, %d words streamed in all", sentAtAbort, took.Round(time.Millisecond), sentAtEnd)

	final := lastMessage(res)
	require.Equal(t, agent.StopReasonAborted, final.StopReason)
	require.Equal(t, "Request was aborted", final.ErrorMessage)
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	text := agent.TextOf(final.Content)
	require.True(t, strings.HasPrefix(full.String(), text), "the partial text is a prefix of the stream: %q", text)
	got := strings.Count(text, " ")
	require.GreaterOrEqual(t, got, sentAtAbort, "the words streamed before the abort are kept")
	require.LessOrEqual(t, got, sentAtEnd)
	require.Less(t, sentAtEnd, words, "the stream did not run to its end")
	// At once: well before the rest of the stream (an event every 100 ms)
	// could have arrived, however slow the machine.
	require.Less(t, took, time.Duration(words-sentAtAbort)*100*time.Millisecond, "the run ends without waiting for the stream")
	require.Len(t, res.Messages, 2)
	require.Equal(t, 1, res.Turns)

	turns := modelTurns(t, r.history(run))
	require.Len(t, turns, 1)
	require.EqualValues(t, 1, turns[0].attempt())
}

// ---------------------------------------------------------------------------
// 7. Invalid tool arguments.

// A model that streams tool arguments that are not valid JSON does not break
// the run. As pi-ai's parseStreamingJson: arguments that cannot be parsed
// become {} (and the tool's validation error goes back to the model), a
// Windows path with raw backslashes is repaired, and truncated JSON keeps
// its complete prefix.
func TestWorkflowInvalidToolArguments(t *testing.T) {
	t.Parallel()
	t.Run("anthropic unparseable and repaired", func(t *testing.T) {
		t.Parallel()
		f := newFakeServer(t,
			step{Fixture: "anthropic_bad_tool_json.sse"},
			step{Body: anthropicText("msg_fix", 40, 0, 0, 6, "Please name", " a city.")})
		rec := &calls{}
		r := newRig(t, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-e2e-" + randomHex(8), "ANTHROPIC_BASE_URL": f.URL},
			weatherTool(rec), readTool(rec))
		run := r.start(input("anthropic/claude-haiku-4-5", "weather, then read my notes", "get_weather", "read"))
		res := r.result(run)

		require.Len(t, res.Messages, 5)
		first := res.Messages[1]
		require.Equal(t, agent.StopReasonToolUse, first.StopReason)
		callsOut := first.ToolCalls()
		require.Len(t, callsOut, 2)
		require.Equal(t, map[string]any{}, callsOut[0].Arguments, "unparseable arguments are {} as in pi")
		require.Equal(t, map[string]any{"path": `C:\dir\sub.txt`}, callsOut[1].Arguments)

		weather, read := res.Messages[2], res.Messages[3]
		require.Equal(t, "toolu_bad", weather.ToolCallID)
		require.True(t, weather.IsError)
		wantValidation := "Validation failed for tool \"get_weather\":\n  - city: must have required properties city\n\nReceived arguments:\n{}"
		require.Equal(t, wantValidation, agent.TextOf(weather.Content))
		require.Empty(t, rec.of("get_weather"), "the tool never ran with invalid arguments")
		require.Equal(t, "toolu_path", read.ToolCallID)
		require.False(t, read.IsError)
		require.Equal(t, []map[string]any{{"path": `C:\dir\sub.txt`}}, rec.of("read"))

		final := lastMessage(res)
		require.Equal(t, agent.StopReasonStop, final.StopReason)
		require.Equal(t, "Please name a city.", agent.TextOf(final.Content))
		// The model is told.
		body := f.Requests()[1].Body
		result := find(body["messages"], has("type", "tool_result", "tool_use_id", "toolu_bad"))
		require.NotNil(t, result)
		require.Equal(t, true, result["is_error"])
		require.Equal(t, wantValidation, result["content"])
		require.NotNil(t, find(body["messages"], has("type", "tool_use", "id", "toolu_bad")), "the call goes back with {} as its input")
	})
	t.Run("openai chat truncated", func(t *testing.T) {
		t.Parallel()
		f := newFakeServer(t,
			step{Body: chatToolCall("gpt-5-2025-08-07", "call_trunc", "get_weather", chatUsage(50, 0, 10), `{"ci`, `ty": "Par`, `is", "unit": `)},
			step{Body: chatText("gpt-5-2025-08-07", 80, 0, 6, "Sunny", " in Paris.")})
		rec := &calls{}
		r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"},
			weatherTool(rec))
		run := r.start(input("openai/gpt-5", "weather in Paris", "get_weather"))
		res := r.result(run)
		require.Len(t, res.Messages, 4)
		require.Equal(t, map[string]any{"city": "Paris"}, res.Messages[1].ToolCalls()[0].Arguments, "the complete prefix, as pi's partial-json")
		require.Equal(t, []map[string]any{{"city": "Paris"}}, rec.of("get_weather"))
		require.False(t, res.Messages[2].IsError)
		require.Equal(t, agent.StopReasonStop, lastMessage(res).StopReason)
		r1 := find(f.Requests()[1].Body["messages"], has("role", "tool", "tool_call_id", "call_trunc"))
		require.NotNil(t, r1)
		require.Equal(t, "18°C and sunny in Paris", r1["content"])
	})
	// Arguments that are valid JSON but not an object are kept as pi-ai
	// keeps them: the call fails validation with the value as received
	// (before, they became {}), and the model gets the call back with them.
	t.Run("openai chat not an object", func(t *testing.T) {
		t.Parallel()
		f := newFakeServer(t,
			step{Body: chatToolCall("gpt-5-2025-08-07", "call_arr", "get_weather", chatUsage(50, 0, 10), `[1, `, `2]`)},
			step{Body: chatText("gpt-5-2025-08-07", 80, 0, 6, "Which", " city?")})
		rec := &calls{}
		r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"},
			weatherTool(rec))
		run := r.start(input("openai/gpt-5", "weather", "get_weather"))
		res := r.result(run)
		require.Len(t, res.Messages, 4)
		call := res.Messages[1].ToolCalls()[0]
		require.Nil(t, call.Arguments)
		require.Equal(t, `[1,2]`, string(call.RawArguments))
		require.Empty(t, rec.of("get_weather"), "the tool never ran")
		want := "Validation failed for tool \"get_weather\":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]"
		require.True(t, res.Messages[2].IsError)
		require.Equal(t, want, agent.TextOf(res.Messages[2].Content))
		body := f.Requests()[1].Body
		back := find(body["messages"], has("role", "assistant"))
		require.NotNil(t, back)
		fn := back["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
		require.Equal(t, `[1,2]`, fn["arguments"])
		r1 := find(body["messages"], has("role", "tool", "tool_call_id", "call_arr"))
		require.NotNil(t, r1)
		require.Equal(t, want, r1["content"])
	})
	// The same on Anthropic: pi-ai sends the call back with the value it
	// received as its input (block.arguments ?? {}), not {}.
	t.Run("anthropic not an object", func(t *testing.T) {
		t.Parallel()
		f := newFakeServer(t,
			step{Fixture: "anthropic_array_tool_args.sse"},
			step{Body: anthropicText("msg_fix", 40, 0, 0, 6, "Which", " city?")})
		rec := &calls{}
		r := newRig(t, map[string]string{"ANTHROPIC_API_KEY": "sk-ant-e2e-" + randomHex(8), "ANTHROPIC_BASE_URL": f.URL},
			weatherTool(rec))
		run := r.start(input("anthropic/claude-haiku-4-5", "weather", "get_weather"))
		res := r.result(run)
		require.Len(t, res.Messages, 4)
		call := res.Messages[1].ToolCalls()[0]
		require.Equal(t, `[1,2]`, string(call.RawArguments))
		require.Empty(t, rec.of("get_weather"), "the tool never ran")
		want := "Validation failed for tool \"get_weather\":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]"
		require.Equal(t, want, agent.TextOf(res.Messages[2].Content))
		back := find(f.Requests()[1].Body["messages"], has("type", "tool_use", "id", "toolu_arr"))
		require.NotNil(t, back)
		require.Equal(t, []any{1.0, 2.0}, back["input"], "the value as received, as pi")
	})
}

// ---------------------------------------------------------------------------
// 6. Long outages and long silences.

// The provider is down for 60 s (every call answers 503), then answers.
// The model turn keeps retrying, backing off to its 30 s cap (attempts
// about 0, 1, 3, 7, 15, 31 and 61 s in: the outage outlasts six), within the
// run's default retry window of two hours, and the run ends as if nothing
// had happened: stopReason stop, the answer, the usage of the one billed
// call. The wait is real: about 61 s (it was 150 s, which showed nothing
// more and was the llm package's tail).
func TestWorkflowWaitsOutAProviderOutage(t *testing.T) {
	t.Parallel()
	const outage = 60 * time.Second
	f := newFakeServer(t, step{Body: chatText("gpt-5-2025-08-07", 20, 0, 5, "Back", " online.")})
	f.GoDown(step{Status: 503, Body: `{"error":{"message":"upstream connect error","type":"server_error","param":null,"code":null}}`}, outage)
	began := time.Now()
	r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"})
	run := r.start(input("openai/gpt-5", "are you there?"))
	res := testenv.Result(t, run, outage+3*time.Minute)

	final := lastMessage(res)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, agent.StopReasonStop, final.StopReason)
	require.Equal(t, "Back online.", agent.TextOf(final.Content))
	require.Len(t, res.Messages, 2)
	require.EqualValues(t, 20, res.Usage.Input, "only the answered call was billed")
	require.EqualValues(t, 5, res.Usage.Output)

	reqs := f.Requests()
	last := reqs[len(reqs)-1]
	require.False(t, last.At.Before(began.Add(outage)), "the answered call came after the outage")
	for _, q := range reqs[:len(reqs)-1] {
		require.True(t, q.At.Before(began.Add(outage)), "every call during the outage was refused")
	}
	require.GreaterOrEqual(t, len(reqs), 7, "1+2+4+8+16 s of backoff end within the outage")
	require.GreaterOrEqual(t, last.At.Sub(reqs[len(reqs)-2].At), 30*time.Second, "the last wait is the 30 s cap")
	turns := modelTurns(t, r.history(run))
	require.Len(t, turns, 1, "one model turn, retried")
	require.EqualValues(t, len(reqs), turns[0].attempt())
	require.NotNil(t, turns[0].closed.GetActivityTaskCompletedEventAttributes(), "the turn completed")
	scheduled := turns[0].scheduled.GetActivityTaskScheduledEventAttributes()
	require.Equal(t, agent.DefaultModelRetryTimeout, scheduled.GetScheduleToCloseTimeout().AsDuration())
	require.EqualValues(t, 0, scheduled.GetRetryPolicy().GetMaximumAttempts())
	t.Logf("%d attempts; the answered one %v after the start, %v after the outage ended",
		len(reqs), last.At.Sub(began).Round(time.Second), last.At.Sub(began.Add(outage)).Round(time.Second))
}

// The model goes silent mid-answer for 45 s, longer than the model turn's
// 30 s heartbeat timeout, as a model reasoning at length does behind a
// stream that sends nothing. The streaming turn keeps heartbeating, so the
// first attempt finishes the answer: no timeout, no retry.
func TestWorkflowModelSilentMidStream(t *testing.T) {
	t.Parallel()
	const model = "gpt-5-2025-08-07"
	head := chatChunk(model, map[string]any{"role": "assistant", "content": ""}, nil, nil) +
		chatChunk(model, map[string]any{"content": "Let me think."}, nil, nil)
	tail := chatChunk(model, map[string]any{"content": " Done."}, nil, nil) +
		chatChunk(model, map[string]any{}, "stop", nil) +
		chatChunk(model, nil, nil, chatUsage(20, 0, 5)) + "data: [DONE]\n\n"
	f := newFakeServer(t, step{Events: []string{head, tail}, Interval: 45 * time.Second})
	r := newRig(t, map[string]string{"OPENAI_API_KEY": "sk-e2e-" + randomHex(8), "OPENAI_BASE_URL": f.URL, "OPENAI_API": "completions"})
	run := r.start(input("openai/gpt-5", "think hard"))
	res := testenv.Result(t, run, 3*time.Minute)

	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, "Let me think. Done.", agent.TextOf(lastMessage(res).Content))
	require.Len(t, f.Requests(), 1, "one call")
	turns := modelTurns(t, r.history(run))
	require.Len(t, turns, 1)
	require.EqualValues(t, 1, turns[0].attempt(), "the first attempt answered")
	require.NotNil(t, turns[0].closed.GetActivityTaskCompletedEventAttributes())
}
