package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/internal/sandbox"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// newHookHarness is newHarness with the webhooks wh calls.
func newHookHarness(t *testing.T, wh *hooks.Webhooks, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
	t.Helper()
	h := &harness{t: t, c: testenv.Client(t), queue: "test-" + testenv.Suffix(), hooks: hooks.NewRegistry()}
	h.scripted = llm.NewScriptedProvider()
	h.scripted.Add("script", llm.Script{Responses: script})
	models := llm.NewRegistry()
	models.Register("test", h.scripted)
	st := testenv.Store(t)
	h.acts = agentworker.NewActivities(agentworker.Options{Client: h.c, Store: st, StoreID: st.ID(), Models: models,
		Tools: tools.NewRegistry(ts...), Hooks: h.hooks, Webhooks: wh})
	h.startWorker()
	return h
}

// startHookWorker serves activity hooks as a team's own worker would, on a
// queue of its own: the requests arrive as plain JSON objects.
func startHookWorker(t *testing.T, c client.Client, queue string, fns map[string]func(req map[string]any) (any, error)) {
	t.Helper()
	w := worker.New(c, queue, worker.Options{})
	for name, fn := range fns {
		w.RegisterActivityWithOptions(func(_ context.Context, req map[string]any) (any, error) { return fn(req) },
			activity.RegisterOptions{Name: name})
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
}

// hookToolEvents lists a run's tool events as "start c1", "end c2 ERR text".
func hookToolEvents(evs []agent.Event) []string {
	var out []string
	for _, e := range evs {
		switch e.Type {
		case agent.EventToolExecutionStart:
			out = append(out, "start "+e.ToolCallID)
		case agent.EventToolExecutionEnd:
			s := "end " + e.ToolCallID
			if e.IsError {
				s += " ERR"
			}
			out = append(out, s+" "+agent.TextOf(e.Result.Content))
		}
	}
	return out
}

func sleepTool(name string, d time.Duration, ran *atomic.Int32) tools.FuncTool {
	return tool(name, func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		ran.Add(1)
		time.Sleep(d)
		return agent.TextResult(c.ID), nil
	})
}

// Activity hooks served by another Go worker on its own queue take part in
// a parallel batch beside Go hooks, in list order: the before hooks run in
// call order before any tool executes, a block ends the call during
// preparation, the after hook's override replaces the result, and the
// events are in pi's order.
func TestActivityHooksInAParallelBatch(t *testing.T) {
	var ran atomic.Int32
	h := newHookHarness(t, nil, []llm.ScriptedResponse{
		answer(call("c1", "slow"), call("c2", "danger"), call("c3", "fast")),
		answer(text("done")),
	}, sleepTool("slow", 400*time.Millisecond, &ran), sleepTool("fast", 10*time.Millisecond, &ran), sleepTool("danger", 0, &ran))
	var mu sync.Mutex
	var before, after, goBefore []string
	h.hooks.RegisterBefore("audit", func(_ context.Context, c hooks.BeforeContext) (*hooks.BeforeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		goBefore = append(goBefore, c.ToolCall.ID)
		return nil, nil
	})
	hookQueue := "team-hooks-" + testenv.Suffix()
	var runID string
	startHookWorker(t, h.c, hookQueue, map[string]func(map[string]any) (any, error){
		"checkCall": func(req map[string]any) (any, error) {
			call := req["toolCall"].(map[string]any)
			mu.Lock()
			before = append(before, call["id"].(string))
			mu.Unlock()
			if req["hook"] != "beforeToolCall" || req["run"].(map[string]any)["workflowId"] != runID || req["args"] == nil {
				return nil, fmt.Errorf("unexpected request %v", req)
			}
			if call["name"] == "danger" {
				return map[string]any{"block": true, "reason": "danger is not allowed here"}, nil
			}
			return nil, nil
		},
		"auditResult": func(req map[string]any) (any, error) {
			call := req["toolCall"].(map[string]any)
			mu.Lock()
			after = append(after, call["id"].(string))
			mu.Unlock()
			result := req["result"].(map[string]any)
			if req["hook"] != "afterToolCall" || req["isError"] != false || result["content"] == nil {
				return nil, fmt.Errorf("unexpected request %v", req)
			}
			if call["name"] == "slow" {
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": "audited"}}, "details": map[string]any{"audited": true}}, nil
			}
			return nil, nil
		},
	})
	in := h.input("go", "slow", "danger", "fast")
	in.BeforeToolCall = []agent.Hook{{Activity: &agent.ActivityHook{TaskQueue: hookQueue, ActivityType: "checkCall", Timeout: "30s"}}, {Name: "audit"}}
	in.AfterToolCall = []agent.Hook{{Activity: &agent.ActivityHook{TaskQueue: hookQueue, ActivityType: "auditResult", Timeout: "30s"}}}
	run := h.start(in)
	runID = run.GetID()
	res := h.result(run)

	require.Equal(t, []string{"start c1", "start c2", "end c2 ERR danger is not allowed here", "start c3", "end c3 c3", "end c1 audited"},
		hookToolEvents(h.events(run)))
	require.Equal(t, []string{"c1", "c2", "c3"}, before, "before hooks run in call order")
	require.Equal(t, []string{"c1", "c3"}, goBefore, "the Go hook after the remote one, for the calls it let through")
	require.ElementsMatch(t, []string{"c1", "c3"}, after)
	require.EqualValues(t, 2, ran.Load(), "the blocked call never ran")
	require.Equal(t, "audited", agent.TextOf(res.Messages[2].Content))
	require.JSONEq(t, `{"audited":true}`, string(res.Messages[2].Details))
	require.True(t, res.Messages[3].IsError)
	require.Equal(t, "c3", agent.TextOf(res.Messages[4].Content))
	requireNoFailedTasks(t, h.c, run)
	saveToCorpus(t, h.c, run, "remote-hooks-activity-parallel")
}

// saveToCorpus adds a run's history to the replay corpus when recording it
// (-record-histories; record_test.go).
func saveToCorpus(t *testing.T, c client.Client, run client.WorkflowRun, name string) {
	if *recordHistories {
		path := filepath.Join("..", "testdata", "histories", name+".json")
		require.NoError(t, testenv.SaveHistory(context.Background(), c, run.GetID(), run.GetRunID(), path))
	}
}

// webhookServer is a team's webhook: it checks each request's signature
// and answers what answer returns.
func webhookServer(t *testing.T, secret []byte, answer func(event string, req map[string]any) any) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		body, _ := io.ReadAll(r.Body)
		if !hooks.Verify(secret, body, r.Header.Get(hooks.SignatureHeader)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(answer(r.Header.Get(hooks.EventHeader), req))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func loopbackWebhooks(secrets map[string]string) *hooks.Webhooks {
	w := hooks.NewWebhooks(sandbox.Egress{Frontends: []string{testenv.HostPort()}}, true)
	for k, v := range secrets {
		w.Secrets[k] = []byte(v)
	}
	return w
}

// Webhook hooks get pi's hook context, signed, with large content inline
// (history holds it as a stub), and their answers apply as pi's hooks'.
func TestWebhookHooksAreSignedAndApplied(t *testing.T) {
	var ran atomic.Int32
	big := strings.Repeat("x", 5000)
	h := newHookHarness(t, loopbackWebhooks(map[string]string{"team": "team-secret"}), []llm.ScriptedResponse{
		answer(call("c1", "big"), call("c2", "danger")),
		answer(text("done")),
	}, tool("big", func(context.Context, tools.Call) (agent.ToolResult, error) {
		ran.Add(1)
		return agent.TextResult(big), nil
	}),
		sleepTool("danger", 0, &ran))
	var sawBig atomic.Bool
	srv, n := webhookServer(t, []byte("team-secret"), func(event string, req map[string]any) any {
		name := req["toolCall"].(map[string]any)["name"]
		switch {
		case event == "beforeToolCall" && name == "danger":
			return map[string]any{"block": true}
		case event == "afterToolCall":
			content := req["result"].(map[string]any)["content"].([]any)
			sawBig.Store(content[0].(map[string]any)["text"] == big)
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "5000 x"}}, "isError": true}
		}
		return nil
	})
	in := h.input("go", "big", "danger")
	in.ToolExecution = agent.ExecutionSequential
	hook := agent.Hook{Webhook: &agent.WebhookHook{URL: srv.URL + "/hook", SecretRef: "team", Timeout: "30s"}}
	in.BeforeToolCall, in.AfterToolCall = []agent.Hook{hook}, []agent.Hook{hook}
	run := h.start(in)
	h.result(run)

	require.Equal(t, []string{"start c1", "end c1 ERR 5000 x", "start c2", "end c2 ERR Tool execution was blocked"}, hookToolEvents(h.events(run)))
	require.True(t, sawBig.Load(), "the after hook got the tool's content, not its stub")
	require.EqualValues(t, 3, n.Load())
	require.EqualValues(t, 1, ran.Load())
	requireNoFailedTasks(t, h.c, run)
	saveToCorpus(t, h.c, run, "remote-hooks-webhook-sequential")
}

// A before hook nobody answers within its timeout, retries included,
// blocks the call with a reason that says so: a webhook whose port is
// closed, an activity hook whose queue no worker serves.
func TestUnreachableBeforeHooksFailClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String() + "/hook"
	require.NoError(t, l.Close())

	var ran atomic.Int32
	h := newHookHarness(t, loopbackWebhooks(map[string]string{"team": "k"}), []llm.ScriptedResponse{
		answer(call("c1", "fast")), answer(text("done")),
	}, sleepTool("fast", 0, &ran))
	for _, c := range []struct {
		hook agent.Hook
		want string
	}{
		{agent.Hook{Webhook: &agent.WebhookHook{URL: closed, SecretRef: "team", Timeout: "2s"}},
			"beforeToolCall hook webhook " + closed + " did not answer within 2s (last error: webhook " + closed},
		{agent.Hook{Activity: &agent.ActivityHook{TaskQueue: "nobody-" + testenv.Suffix(), ActivityType: "checkCall", Timeout: "1s"}},
			"beforeToolCall hook activity checkCall on task queue nobody-"},
	} {
		in := h.input("go", "fast")
		in.BeforeToolCall = []agent.Hook{c.hook}
		run := h.start(in)
		res := h.result(run)
		msg := res.Messages[2]
		require.True(t, msg.IsError)
		require.Contains(t, agent.TextOf(msg.Content), c.want)
		require.Contains(t, agent.TextOf(msg.Content), "; the tool call is blocked")
		requireNoFailedTasks(t, h.c, run)
	}
	require.Zero(t, ran.Load())
}

// A hook that answers after its timeout changes nothing: the late "block"
// of a before hook is never read (the call ends once, blocked by the
// timeout rule), nor the late override of an after hook (the result is the
// thrown hook's error).
func TestLateHookAnswerChangesNothing(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv, n := webhookServer(t, []byte("k"), func(event string, req map[string]any) any {
		select {
		case <-time.After(6 * time.Second):
		case <-release:
		}
		if event == "beforeToolCall" {
			return map[string]any{"block": true, "reason": "late block"}
		}
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "late override"}}}
	})
	var ran atomic.Int32
	h := newHookHarness(t, loopbackWebhooks(map[string]string{"team": "k"}), []llm.ScriptedResponse{
		answer(call("c1", "fast")), answer(text("done")),
	}, sleepTool("fast", 0, &ran))
	hook := agent.Hook{Webhook: &agent.WebhookHook{URL: srv.URL, SecretRef: "team", Timeout: "3s"}}

	in := h.input("go", "fast")
	in.BeforeToolCall = []agent.Hook{hook}
	run := h.start(in)
	res := h.result(run)
	require.Equal(t, []string{"start c1", "end c1 ERR beforeToolCall hook webhook " + srv.URL + " did not answer within 3s; the tool call is blocked"},
		hookToolEvents(h.events(run)))
	require.Equal(t, "done", agent.TextOf(lastMessage(res).Content))
	require.Zero(t, ran.Load())
	require.EqualValues(t, 1, n.Load(), "one attempt took the whole timeout")

	in = h.input("go", "fast")
	in.AfterToolCall = []agent.Hook{hook}
	run = h.start(in)
	h.result(run)
	require.Equal(t, []string{"start c1", "end c1 ERR afterToolCall hook webhook " + srv.URL + " did not answer within 3s"}, hookToolEvents(h.events(run)))
	require.EqualValues(t, 1, ran.Load())
	require.EqualValues(t, 2, n.Load())
	requireNoFailedTasks(t, h.c, run)
}
