package fleettest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/fleettest"
	"github.com/durable-agents/agentloop/llm"
)

// Two real worker processes, of which only b holds the workspace that
// runs naming none use (its -workspace; a's does not exist, a pod whose
// volume did not mount): every run resolves on b, runs its bash there and
// ends; a run whose workflow task a took first moves its resolve to the
// task queue, where b answers (activities/workspace.go). Reproduced with
// the worker before: a run resolved on a ran its bash on a, "Working
// directory does not exist: .../not-on-a. Cannot execute bash commands."
func TestRunsResolveOnTheHostThatHoldsTheirWorkspace(t *testing.T) {
	m := newHostModel()
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	wsB := filepath.Join(f.Dir, "workspace-b")
	require.NoError(t, os.MkdirAll(wsB, 0o755))
	f.AddHost("host-a", nil, "-workspace", filepath.Join(f.Dir, "not-on-a"))
	f.AddHost("host-b", nil, "-workspace", wsB)
	f.WaitPolled(f.Queue, nil, time.Minute)
	f.WaitCurrent(time.Minute)

	const n = 6
	ctx := context.Background()
	runs := make([]client.WorkflowRun, n)
	for i := range runs {
		run, err := agentclient.Start(ctx, f.Client, fmt.Sprintf("workspace-%d-%d", i, time.Now().UnixNano()), f.Queue,
			agentapi.AgentLoopInput{
				LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "fleet"}, Tools: []string{"bash"}},
				Prompt:     "Run: pwd",
			})
		require.NoError(t, err)
		runs[i] = run
	}
	moved := 0
	for _, run := range runs {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		var res agentapi.AgentLoopResult
		err := run.Get(rctx, &res)
		cancel()
		require.NoError(t, err)
		require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
		var out string
		for _, msg := range res.Messages {
			if msg.Role == agent.RoleToolResult {
				out = strings.TrimSpace(agent.TextOf(msg.Content))
				require.False(t, msg.IsError, out)
			}
		}
		require.Equal(t, wsB, out, "bash ran in b's workspace")

		hist := f.Client.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
		for hist.HasNext() {
			ev, err := hist.Next()
			require.NoError(t, err)
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ResolveRun" {
				moved++
			}
		}
	}
	t.Logf("%d of %d runs first resolved on a, which lacks the workspace, and moved to b", moved, n)
}
