package workflows_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// Config drift (workflows/drift.go): two workers of one task queue, one
// with the run's provider, MCP-style tool and hook ("good"), one with none
// of them ("bad", a pod started without the provider's environment). The
// bad worker alone runs workflow tasks, so every local activity meets the
// drift; the good one serves activities only, and starts once the drift is
// visible.

// driftActs are activities over the given provider name (the scripted
// model under it), tool and after hook; an empty name leaves it out.
func driftActs(c client.Client, st store.Blobs, provider string, script []llm.ScriptedResponse, tool tools.Tool, hook string) *activities.Activities {
	models := llm.NewRegistry()
	if provider != "" {
		scripted := llm.NewScriptedProvider()
		scripted.Add("script", llm.Script{Responses: script})
		models.Register(provider, scripted)
	}
	ts := tools.NewRegistry()
	if tool != nil {
		ts.Register(tool)
	}
	hs := hooks.NewRegistry()
	if hook != "" {
		hs.RegisterAfter(hook, func(_ context.Context, c hooks.AfterContext) (*hooks.AfterResult, error) {
			return &hooks.AfterResult{Content: []agent.Content{text(agent.TextOf(c.Result.Content) + " [" + hook + "]")}}, nil
		})
	}
	return agentworker.NewActivities(agentworker.Options{Client: c, Store: st, Models: models, Tools: ts, Hooks: hs})
}

// startDriftWorker starts a worker on queue; withWorkflows also registers
// the workflows. It returns its stop.
func startDriftWorker(t *testing.T, c client.Client, queue string, acts *activities.Activities, withWorkflows bool) func() {
	t.Helper()
	opts := workflows.WorkerOptions()
	opts.DisableWorkflowWorker = !withWorkflows
	w, err := agentworker.New(agentworker.Options{Client: c, TaskQueue: queue, WorkerOptions: &opts, Activities: acts, ActivitiesOnly: !withWorkflows})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			w.Stop()
		}
	}
	t.Cleanup(stop)
	return stop
}

// waitPendingFailure waits until the workflow's latest run has a pending
// activity of the given type whose last attempt failed with want in its
// message: the error an operator sees in the Web UI.
func waitPendingFailure(t *testing.T, c client.Client, workflowID, activityType, want string) string {
	t.Helper()
	var msg string
	require.Eventually(t, func() bool {
		desc, err := c.DescribeWorkflow(context.Background(), workflowID, "")
		if err != nil {
			return false
		}
		for _, p := range desc.RawResponse.GetPendingActivities() {
			if p.GetActivityType().GetName() == activityType && strings.Contains(p.GetLastFailure().GetMessage(), want) {
				msg = p.GetLastFailure().GetMessage()
				return true
			}
		}
		return false
	}, settleTimeout, 100*time.Millisecond, "no pending %s failing with %q", activityType, want)
	return msg
}

// waitHistory waits until the workflow's latest run's history has an event
// ok accepts.
func waitHistory(t *testing.T, c client.Client, workflowID string, ok func(*historypb.HistoryEvent) bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		h, err := testenv.History(context.Background(), c, workflowID, "")
		if err != nil {
			return false
		}
		for _, e := range h.GetEvents() {
			if ok(e) {
				return true
			}
		}
		return false
	}, settleTimeout, 200*time.Millisecond)
}

// scheduled counts the regular activities of each type a history scheduled.
func scheduled(t *testing.T, c client.Client, workflowID, runID string) map[string]int {
	t.Helper()
	h, err := testenv.History(context.Background(), c, workflowID, runID)
	require.NoError(t, err)
	n := map[string]int{}
	for _, e := range h.GetEvents() {
		require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, e.GetEventType(), "workflow task failed: %v", e)
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			n[a.GetActivityType().GetName()]++
		}
	}
	return n
}

func driftFailed(activityType string) func(*historypb.HistoryEvent) bool {
	return func(e *historypb.HistoryEvent) bool {
		f := e.GetActivityTaskFailedEventAttributes().GetFailure()
		return f.GetApplicationFailureInfo().GetType() == activities.ErrConfigDrift && strings.Contains(f.GetMessage(), activityType)
	}
}

// A run whose workflow worker lacks the provider, the MCP-style tool and
// the after hook resolves, prepares, executes and finalizes on the worker
// that has them, and ends as if nothing had happened; the bad worker's
// errors name it and what it lacks while the run waits.
func TestConfigDriftRunMovesToWorkerThatHasIt(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	// A parallel batch (even of one call) waits on futures; a sequential
	// one on each stage in turn: both move.
	for _, mode := range []agent.ExecutionMode{agent.ExecutionParallel, agent.ExecutionSequential} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			testRunMoves(t, mode)
		})
	}
}

func testRunMoves(t *testing.T, mode agent.ExecutionMode) {
	c := testenv.Client(t)
	st := testenv.Store(t)
	queue := "test-" + testenv.Suffix()
	toolQueue := queue + "-tools"
	echo := tools.FuncTool{
		Def: tools.Definition{Name: "srv__echo", Description: "echo", Durability: tools.Durability{Retry: tools.RetryOnce}},
		Fn: func(_ context.Context, call tools.Call) (agent.ToolResult, error) {
			return agent.TextResult("echo from the good worker"), nil
		},
	}
	script := []llm.ScriptedResponse{answer(call("c1", "srv__echo")), answer(text("done"))}
	good := driftActs(c, st, llm.OpenAICompatibleProviderName, script, echo, "audit")
	bad := driftActs(c, st, "", nil, nil, "")
	startDriftWorker(t, c, queue, bad, true)
	startDriftWorker(t, c, toolQueue, bad, false)

	run := testenv.Start(t, c, queue, "drift-", agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:         agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "script"},
			Tools:         []string{"srv__echo"},
			AfterToolCall: agent.HookNames("audit"),
			ToolTaskQueue: toolQueue,
			ToolExecution: mode,
		},
		Prompt: "echo",
	})
	start := time.Now()
	msg := waitPendingFailure(t, c, run.GetID(), "ResolveRun", `lacks model provider "openai-compatible"`)
	require.Contains(t, msg, "worker ")
	t.Logf("while only the bad worker runs: %s", msg)
	startDriftWorker(t, c, queue, good, false)

	// The tool's queue has only the bad worker: each single attempt fails
	// with ConfigDrift (nothing ran), and the workflow schedules it again.
	waitHistory(t, c, run.GetID(), driftFailed(`lacks tool "srv__echo"`))
	startDriftWorker(t, c, toolQueue, good, false)

	res := testenv.Result(t, run, settleTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, "done", agent.TextOf(lastMessage(res).Content))
	var toolResult string
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			toolResult = agent.TextOf(m.Content)
			require.False(t, m.IsError, toolResult)
		}
	}
	require.Equal(t, "echo from the good worker [audit]", toolResult)

	n := scheduled(t, c, run.GetID(), run.GetRunID())
	// The local activities moved to the task queue, once each; the model
	// turn prepared the call (the run has no before hooks).
	require.Equal(t, 1, n["ResolveRun"], "%v", n)
	require.Zero(t, n["PrepareToolCall"], "%v", n)
	require.Equal(t, 1, n["FinalizeToolCall"], "%v", n)
	require.GreaterOrEqual(t, n["ExecuteToolCall"], 2, "%v", n)
	t.Logf("done in %v; activities scheduled: %v", time.Since(start).Round(time.Millisecond), n)
}

// A session that resolved on a worker with its provider goes on, across
// continue-as-new, when the only workflow worker left lacks the provider:
// its model turn waits for a worker that has it, and its next run's
// resolve, where the provider name is one no build knows but the session
// resolved before, is drift and not bad input.
func TestConfigDriftSessionGoesOnAfterContinueAsNew(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	c := testenv.Client(t)
	st := testenv.Store(t)
	queue := "test-" + testenv.Suffix()
	script := []llm.ScriptedResponse{answer(text("one")), answer(text("two")), answer(text("three"))}
	good := driftActs(c, st, "test", script, nil, "")
	bad := driftActs(c, st, "", nil, nil, "")
	stopGood := startDriftWorker(t, c, queue, good, true)

	h := &harness{t: t, c: c, queue: queue}
	run := h.startSession(agentapi.SessionInput{
		LoopConfig:              agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}},
		ContinueAsNewAfterTurns: 1,
	})
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "1"}, nil))
	waitRunEndWithin(t, c, run, 1, 3*time.Minute)
	// The session continues as new after the turn; its second workflow run
	// resolves on the good worker.
	require.Eventually(t, func() bool {
		desc, err := c.DescribeWorkflow(context.Background(), run.GetID(), "")
		if err != nil || desc.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId() == run.GetRunID() {
			return false
		}
		h, err := testenv.History(context.Background(), c, run.GetID(), "")
		if err != nil {
			return false
		}
		for _, e := range h.GetEvents() {
			if e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED {
				return true
			}
		}
		return false
	}, settleTimeout, 100*time.Millisecond)
	stopGood()
	startDriftWorker(t, c, queue, bad, true)

	start := time.Now()
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "2"}, nil))
	msg := waitPendingFailure(t, c, run.GetID(), "ModelTurn", "lacks model test/script")
	t.Logf("while only the bad worker runs: %s", msg)
	startDriftWorker(t, c, queue, good, false)
	waitRunEndWithin(t, c, run, 2, 3*time.Minute)

	// The third workflow run resolves on the bad worker: drift, moved.
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "3"}, nil))
	events := waitRunEndWithin(t, c, run, 3, 3*time.Minute)
	var answers []string
	for _, e := range events {
		if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleAssistant {
			answers = append(answers, agent.TextOf(e.Message.Content))
		}
	}
	require.Equal(t, []string{"one", "two", "three"}, answers)
	desc, err := c.DescribeWorkflow(context.Background(), run.GetID(), "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.RawResponse.GetWorkflowExecutionInfo().GetStatus())
	n := scheduled(t, c, run.GetID(), "")
	require.Equal(t, 1, n["ResolveRun"], "the latest run's resolve moved: %v", n)
	t.Logf("prompts 2 and 3 in %v", time.Since(start).Round(time.Millisecond))
}

// Names no worker of this build could serve still fail a run's first start
// at once, whatever the other workers have: a typo'd provider, a tool name
// that is neither built in nor an MCP server's.
func TestConfigDriftTypoStillFailsAtOnce(t *testing.T) {
	c := testenv.Client(t)
	st := testenv.Store(t)
	queue := "test-" + testenv.Suffix()
	good := driftActs(c, st, llm.OpenAICompatibleProviderName, []llm.ScriptedResponse{answer(text("hi"))}, nil, "")
	bad := driftActs(c, st, "", nil, nil, "")
	startDriftWorker(t, c, queue, bad, true)
	startDriftWorker(t, c, queue, good, true)
	for _, tc := range []struct {
		name, provider, tool, want, kind string
	}{
		{"provider", "openai-compatibel", "", `unknown model provider "openai-compatibel"`, activities.ErrUnknownModelProvider},
		{"tool", llm.OpenAICompatibleProviderName, "reaad", `unknown tools ["reaad"]`, activities.ErrUnknownTool},
		{"malformed MCP name", llm.OpenAICompatibleProviderName, "srv__", `unknown tools ["srv__"]`, activities.ErrUnknownTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := agent.LoopConfig{Model: agent.ModelRef{Provider: tc.provider, ID: "script"}}
			if tc.tool != "" {
				cfg.Tools = []string{tc.tool}
			}
			run := testenv.Start(t, c, queue, "typo-", agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "hi"})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := run.Get(ctx, nil)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, tc.kind, appErr.Type())
			require.True(t, appErr.NonRetryable())
			require.Contains(t, err.Error(), tc.want)
			require.Empty(t, scheduled(t, c, run.GetID(), run.GetRunID()), "nothing moved to another worker")
		})
	}
}

// waitRunEndWithin follows the session's events until its n-th agent_end.
// A stage that meets drift waits out backoffs and may meet the lacking
// worker again, so the wait is generous.
func waitRunEndWithin(t *testing.T, c client.Client, run client.WorkflowRun, n int, timeout time.Duration) []agent.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var all []agent.Event
	ends := 0
	err := agentclient.Watch(ctx, c, run.GetID(), "", agentclient.WatchOptions{}, func(e agent.Event) {
		all = append(all, e)
		if e.Type == agent.EventAgentEnd {
			if ends++; ends == n {
				cancel()
			}
		}
	})
	require.ErrorIs(t, err, context.Canceled, "run %d did not end", n)
	return all
}
