package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
)

// A session's hooks and remote tools are set between runs with
// agentclient's SetHooks and SetRemoteTools (the setHooks and
// setRemoteTools Updates): the next run's calls go through the hooks set,
// an emptied list removes them for the run after, and a hook the worker
// lacks or a malformed one is refused, leaving the session's hooks as
// they were.
func TestSessionSetsHooks(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "fetch", map[string]any{}), agent.ToolCall("c2", "fetch", map[string]any{})),
		answer(text("one blocked")),
		answer(agent.ToolCall("c3", "fetch", map[string]any{})),
		answer(text("none blocked")),
	})
	queue, hookQueue := startSetHooksWorkers(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := h.startSession(agentapi.SessionInput{})
	id := run.GetID()
	hook := agent.Hook{Activity: &agent.ActivityHook{TaskQueue: hookQueue, ActivityType: "CheckCall", Timeout: "30s"}}

	// Refused: a Go hook this worker lacks, a malformed activity hook,
	// neither list.
	require.ErrorContains(t, agentclient.SetHooks(ctx, h.c, id, agent.HookNames("nope"), nil), "nope")
	require.ErrorContains(t, agentclient.SetHooks(ctx, h.c, id, nil, []agent.Hook{{Activity: &agent.ActivityHook{TaskQueue: queue}}}),
		"afterToolCall[0]: activity hook: want taskQueue and activityType")
	require.ErrorContains(t, agentclient.SetHooks(ctx, h.c, id, nil, nil), `want {"beforeToolCall": [...]`)
	require.ErrorContains(t, agentclient.SetRemoteTools(ctx, h.c, id, []agent.RemoteTool{{Name: "read"}}), `name "read" is a built-in tool's`)

	require.NoError(t, agentclient.SetRemoteTools(ctx, h.c, id, []agent.RemoteTool{remoteTool("fetch", queue, "Fetch", agent.ReplayNever)}))
	require.NoError(t, agentclient.SetHooks(ctx, h.c, id, []agent.Hook{hook}, nil))
	prompt := func(text string, messages int) []string {
		t.Helper()
		require.NoError(t, agentclient.Update(ctx, h.c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: text}, nil))
		require.Eventually(t, func() bool {
			st, err := agentclient.State(ctx, h.c, id)
			return err == nil && st.Status == agentapi.StatusIdle && st.Messages == messages
		}, settleTimeout, 50*time.Millisecond)
		resp, err := h.c.QueryWorkflow(ctx, id, "", agentapi.QueryContext, agentapi.ContextQuery{})
		require.NoError(t, err)
		var page agentapi.ContextPage
		require.NoError(t, resp.Get(&page))
		var results []string
		for _, m := range page.Messages {
			if m.Role == agent.RoleToolResult {
				results = append(results, fmt.Sprintf("%s %v %s", m.ToolCallID, m.IsError, agent.TextOf(m.Content)))
			}
		}
		return results
	}
	require.Equal(t, []string{"c1 false fetched c1", "c2 true the session's hook blocks c2"}, prompt("go", 5))

	// An emptied list removes the hooks: the run after calls no hook (the
	// hook would not block c3 either, so history says it).
	require.NoError(t, agentclient.SetHooks(ctx, h.c, id, []agent.Hook{}, nil))
	// (The context page holds the latest run's messages; earlier runs'
	// are segments in the content store.)
	require.Equal(t, []string{"c3 false fetched c3"}, prompt("again", 9))
	hist, err := testenv.History(ctx, h.c, id, "")
	require.NoError(t, err)
	hookCalls := 0
	for _, e := range hist.GetEvents() {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "CheckCall" {
			hookCalls++
		}
	}
	require.Equal(t, 2, hookCalls, "the hook ran for c1 and c2, not for c3")
}

// startSetHooksWorkers serves, each on a queue of its own, the remote tool
// Fetch and the activity hook CheckCall, which blocks the call c2.
func startSetHooksWorkers(t *testing.T, h *harness) (queue, hookQueue string) {
	queue, hookQueue = "remote-"+testenv.Suffix(), "hooks-"+testenv.Suffix()
	w := worker.New(h.c, queue, worker.Options{})
	w.RegisterActivityWithOptions(func(_ context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
		return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text("fetched " + in.ToolCallID)}}, nil
	}, activity.RegisterOptions{Name: "Fetch"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	startHookWorker(t, h.c, hookQueue, map[string]func(map[string]any) (any, error){
		"CheckCall": func(req map[string]any) (any, error) {
			if call, _ := req["toolCall"].(map[string]any); call["id"] == "c2" {
				return map[string]any{"block": true, "reason": "the session's hook blocks c2"}, nil
			}
			return nil, nil
		},
	})
	return queue, hookQueue
}

// recordSessionSetHooks (TestRecordHistories): a session whose remote
// tool and activity hook are set by the setRemoteTools and setHooks
// Updates (each a ResolveRun local activity) runs a batch the hook blocks
// a call of.
func recordSessionSetHooks(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "fetch", map[string]any{}), agent.ToolCall("c2", "fetch", map[string]any{})),
		answer(text("one blocked")),
	})
	queue, hookQueue := startSetHooksWorkers(t, h)
	run := h.startSession(agentapi.SessionInput{})
	tools := []agent.RemoteTool{remoteTool("fetch", queue, "Fetch", agent.ReplayNever)}
	h.updateOnce(run.GetID(), "tools-1", agentapi.UpdateSetRemoteTools, agentapi.RemoteToolsRequest{RemoteTools: &tools}, nil)
	before := []agent.Hook{{Activity: &agent.ActivityHook{TaskQueue: hookQueue, ActivityType: "CheckCall", Timeout: "30s"}}, {Name: "audit"}}
	h.hooks.RegisterBefore("audit", func(context.Context, hooks.BeforeContext) (*hooks.BeforeResult, error) { return nil, nil })
	h.updateOnce(run.GetID(), "hooks-1", agentapi.UpdateSetHooks, agentapi.HooksRequest{BeforeToolCall: &before}, nil)
	h.updateOnce(run.GetID(), "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	h.waitRunEnd(run, 1)
	return h.c, run.GetID()
}
