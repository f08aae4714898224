package workflows_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// TestMain fails the package when its tests leave goroutines behind. The
// SDK's test environment (the fast layer) leaves two of its own for each
// mocked activity call still waiting out its After delay when the workflow
// ended: runBeforeMockCallReturns blocks on a channel only the
// environment's clock would fill, and the call's timeout watcher
// (ExecuteActivity's goroutine) ticks until that call completes. Nothing
// in the SDK's API ends either.
func TestMain(m *testing.M) {
	testenv.MainCheckingLeaks(m,
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).runBeforeMockCallReturns"),
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*testWorkflowEnvironmentImpl).ExecuteActivity.func2"))
}

// harness is a worker on a task queue of its own, with a scripted model, the
// given tools and hooks, on the shared test server.
type harness struct {
	t          *testing.T
	c          client.Client
	queue      string
	acts       *activities.Activities
	hooks      *hooks.Registry
	modelCalls atomic.Int32
	scripted   *llm.ScriptedProvider
	mu         sync.Mutex
	requests   []llm.Request
	stopWorker func()
}

func newHarness(t *testing.T, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
	t.Helper()
	return newHarnessOn(t, testenv.Client(t), script, ts...)
}

// newHarnessOn is newHarness on a given client (a server of the test's own).
func newHarnessOn(t *testing.T, c client.Client, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
	return newHarnessStore(t, c, testenv.Store(t), script, ts...)
}

// newHarnessStore is newHarnessOn with a content store of the test's own.
func newHarnessStore(t *testing.T, c client.Client, st store.Blobs, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
	t.Helper()
	return newHarnessRegistry(t, c, st, script, tools.NewRegistry(ts...))
}

// newHarnessRegistry is newHarnessStore with a tool registry of the test's
// own (one with sources).
func newHarnessRegistry(t *testing.T, c client.Client, st store.Blobs, script []llm.ScriptedResponse, reg *tools.Registry) *harness {
	t.Helper()
	h := &harness{t: t, c: c, queue: "test-" + testenv.Suffix(), hooks: hooks.NewRegistry()}
	scripted := llm.NewScriptedProvider()
	scripted.Add("script", llm.Script{Responses: script})
	h.scripted = scripted
	models := llm.NewRegistry()
	models.Register("test", llm.ProviderFunc(func(id string) (llm.Model, error) {
		m, err := scripted.Model(id)
		if err != nil {
			return nil, err
		}
		return countingModel{m: m, h: h}, nil
	}))
	ao := agentworker.Options{Client: h.c, Store: st, Models: models, Tools: reg, Hooks: h.hooks,
		HeartbeatInterval: 50 * time.Millisecond} // with the throttle below: aborts reach tools fast
	if s, ok := st.(*store.Store); ok {
		ao.StoreID = s.ID() // as the worker does: runs carry it
	}
	h.acts = agentworker.NewActivities(ao)
	h.startWorker()
	return h
}

// startWorker starts a worker on the harness's queue; stopWorker stops it.
func (h *harness) startWorker() {
	h.t.Helper()
	h.stopWorker = h.startWorkerOn(h.queue)
}

// startWorkerOn starts a worker with the harness's activities on a queue
// and returns what stops it.
func (h *harness) startWorkerOn(queue string) func() {
	h.t.Helper()
	opts := workflows.WorkerOptions()
	opts.MaxHeartbeatThrottleInterval = 50 * time.Millisecond
	w, err := agentworker.New(agentworker.Options{Client: h.c, TaskQueue: queue, WorkerOptions: &opts, Activities: h.acts})
	require.NoError(h.t, err)
	require.NoError(h.t, w.Start())
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	h.t.Cleanup(stop)
	return stop
}

// input is a run of the scripted model with the named tools.
func (h *harness) input(prompt string, toolNames ...string) agentapi.AgentLoopInput {
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}, Tools: toolNames},
		Prompt:     prompt,
	}
}

func (h *harness) start(in any) client.WorkflowRun {
	h.t.Helper()
	return testenv.Start(h.t, h.c, h.queue, "test-", in)
}

func (h *harness) result(run client.WorkflowRun) agentapi.AgentLoopResult {
	h.t.Helper()
	return testenv.Result(h.t, run, time.Minute)
}

func (h *harness) events(run client.WorkflowRun) []agent.Event {
	h.t.Helper()
	return testenv.Events(h.t, h.c, run)
}

// settleTimeout bounds the waits for a state a run reaches on its own (a
// seam, a pending approval): the run guarantees it will, not how soon, and
// three test suites on two cores took over 30 s for one continue-as-new.
const settleTimeout = 2 * time.Minute

// waitState polls the state Query until ok accepts it.
func (h *harness) waitState(run client.WorkflowRun, ok func(agentapi.RunState) bool) agentapi.RunState {
	h.t.Helper()
	var st agentapi.RunState
	require.Eventually(h.t, func() bool {
		resp, err := h.c.QueryWorkflow(context.Background(), run.GetID(), run.GetRunID(), agentapi.QueryState)
		if err != nil || resp.Get(&st) != nil {
			return false
		}
		return ok(st)
	}, settleTimeout, 20*time.Millisecond)
	return st
}

// countingModel counts the calls of a model and keeps their requests.
type countingModel struct {
	m llm.Model
	h *harness
}

func (c countingModel) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	c.h.modelCalls.Add(1)
	c.h.mu.Lock()
	c.h.requests = append(c.h.requests, req)
	c.h.mu.Unlock()
	return c.m.Stream(ctx, req, emit)
}

func tool(name string, fn func(ctx context.Context, call tools.Call) (agent.ToolResult, error)) tools.FuncTool {
	return tools.FuncTool{Def: tools.Definition{Name: name, Description: "test tool " + name}, Fn: fn}
}

func text(s string) agent.Content { return agent.Text(s) }

func call(id, name string) agent.Content { return agent.ToolCall(id, name, map[string]any{}) }

func answer(blocks ...agent.Content) llm.ScriptedResponse {
	return llm.ScriptedResponse{Content: blocks}
}

func lastMessage(res agentapi.AgentLoopResult) agent.Message {
	return res.Messages[len(res.Messages)-1]
}
