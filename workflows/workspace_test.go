package workflows_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// A missing workspace (activities/workspace.go) is refused when the run
// resolves, before any model turn; in a fleet, the worker that holds it
// resolves the run instead.

// lsTool is a workspace tool that lists its workspace, as ls does.
func lsTool() tools.FuncTool {
	return tools.FuncTool{
		Def: tools.Definition{Name: "list", Description: "list the workspace", Workspace: true},
		Fn: func(_ context.Context, call tools.Call) (agent.ToolResult, error) {
			entries, err := os.ReadDir(call.Workspace)
			if err != nil {
				return agent.ToolResult{}, err
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return agent.TextResult(strings.Join(names, "\n")), nil
		},
	}
}

// A one-worker deployment: a run whose workspace does not exist fails
// when it resolves, with an error that names the workspace and the task
// queue, and its model is never called.
func TestMissingWorkspaceFailsBeforeAnyModelTurn(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(call("c1", "list")), answer(text("done"))}, lsTool())
	typo := filepath.Join(t.TempDir(), "no-such-workspace")
	in := h.input("list the files", "list")
	in.Workspace = typo
	run := h.start(in)

	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	err := run.Get(ctx, nil)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, activities.ErrWorkspaceMissing, appErr.Type())
	require.Contains(t, appErr.Error(), "workspace "+typo+" does not exist on any worker of task queue "+h.queue)
	require.True(t, appErr.NonRetryable())
	require.Zero(t, h.modelCalls.Load(), "no model turn was paid for")

	hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, 1, markers(hist, "check-workspace-at-resolve"))
	n := scheduled(t, h.c, run.GetID(), run.GetRunID())
	require.Zero(t, n["ModelTurn"], "%v", n)
}

// A run that names no workspace takes the worker's default; a default that
// is there passes the check as before.
func TestWorkspaceThatExistsPassesTheCheck(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(call("c1", "list")), answer(text("done"))}, lsTool())
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "here.txt"), nil, 0o644))
	h.acts.DefaultWorkspace = ws
	res := h.result(h.start(h.input("list the files", "list")))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, "here.txt", agent.TextOf(res.Messages[2].Content))
}

// A fleet: the only workflow worker (a) lacks the workspace, another
// worker of the task queue (b, activities only, on its own host queue)
// holds it. The run resolves on b, becomes b's host, lists b's workspace
// and ends as if nothing had happened.
func TestMissingWorkspaceResolvesOnTheWorkerThatHoldsIt(t *testing.T) {
	c, queue, hostB := workspaceFleet(t)
	run := testenv.Start(t, c, queue, "workspace-", agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}, Tools: []string{"list"}},
		Prompt:     "list the files",
	})
	res := testenv.Result(t, run, settleTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, "on-b.txt", agent.TextOf(res.Messages[2].Content), "the tool ran in b's workspace")

	hist, err := testenv.History(context.Background(), c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	resolves := map[int64]bool{}
	resolvedBy := ""
	for _, e := range hist.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			switch a.GetActivityType().GetName() {
			case "ExecuteToolCall":
				require.Equal(t, hostB, a.GetTaskQueue().GetName(), "the run's host is b")
			case "ResolveRun":
				resolves[e.GetEventId()] = true
			}
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && resolves[a.GetScheduledEventId()] {
			resolvedBy = a.GetIdentity()
		}
	}
	require.Equal(t, "worker-b", resolvedBy, "the attempt that resolved the run")
	n := scheduled(t, c, run.GetID(), run.GetRunID())
	require.Equal(t, 1, n["ResolveRun"], "the resolve moved to the task queue once: %v", n)
}

// workspaceFleet starts two workers of a task queue of their own with the
// scripted model (one call of the list tool, then "done") and the list
// tool: a, the only workflow worker, whose default workspace is missing,
// and b, activities only, whose default workspace holds on-b.txt, with a
// host queue each. It returns the queue and b's host queue once b polls.
func workspaceFleet(t *testing.T) (c client.Client, queue, hostB string) {
	c = testenv.Client(t)
	st := testenv.Store(t)
	queue = "test-" + testenv.Suffix()
	script := []llm.ScriptedResponse{answer(call("c1", "list")), answer(text("done"))}

	actsA := driftActs(c, st, "test", script, lsTool(), "")
	actsA.DefaultWorkspace = filepath.Join(t.TempDir(), "not-on-a")
	actsA.Identity = "worker-a"
	actsA.HostQueue = agentapi.HostQueue(queue, "a")
	startIdentified(t, c, queue, actsA, true)
	startIdentified(t, c, actsA.HostQueue, actsA, false)

	wsB := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(wsB, "on-b.txt"), nil, 0o644))
	actsB := driftActs(c, st, "test", script, lsTool(), "")
	actsB.DefaultWorkspace = wsB
	actsB.Identity = "worker-b"
	actsB.HostQueue = agentapi.HostQueue(queue, "b")
	startIdentified(t, c, queue, actsB, false)
	startIdentified(t, c, actsB.HostQueue, actsB, false)
	waitPoller(t, c, queue, "worker-b")
	return c, queue, actsB.HostQueue
}

// startIdentified starts a worker on queue that polls as its activities'
// Identity; withWorkflows also registers the workflows.
func startIdentified(t *testing.T, c client.Client, queue string, acts *activities.Activities, withWorkflows bool) {
	t.Helper()
	opts := workflows.WorkerOptions()
	opts.Identity = acts.Identity
	opts.DisableWorkflowWorker = !withWorkflows
	w := worker.New(c, queue, opts)
	if withWorkflows {
		workflows.Register(w, acts)
	} else {
		w.RegisterActivity(acts)
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
}

// waitPoller waits until a worker of the given identity polls queue for
// activities.
func waitPoller(t *testing.T, c client.Client, queue, identity string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := c.DescribeTaskQueue(context.Background(), queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return false
		}
		for _, p := range resp.GetPollers() {
			if p.GetIdentity() == identity {
				return true
			}
		}
		return false
	}, settleTimeout, 100*time.Millisecond)
}
