package workflows_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/internal/testenv"
	"github.com/durable-agents/agentloop/workflows"
)

// Histories recorded from a real server (go test ./conformance
// -update-histories) must replay against the current workflow code: a
// change that alters the commands of a running history fails here before it
// reaches a deployment.
func TestReplayRecordedHistories(t *testing.T) {
	files := histories(t)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.AgentLoop, workflow.RegisterOptions{Name: workflows.AgentLoopWorkflow})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(testenv.Quiet(), f))
		})
	}
}

// The replay test must catch a nondeterministic change: here a workflow
// that starts with a timer the recorded histories never had.
func TestReplayCatchesNondeterministicChange(t *testing.T) {
	changed := func(ctx workflow.Context, in workflows.AgentLoopInput) (workflows.AgentLoopResult, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return workflows.AgentLoopResult{}, err
		}
		return workflows.AgentLoop(ctx, in)
	}
	for _, f := range histories(t) {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(changed, workflow.RegisterOptions{Name: workflows.AgentLoopWorkflow})
		err := r.ReplayWorkflowHistoryFromJSONFile(testenv.Quiet(), f)
		require.Error(t, err, filepath.Base(f))
		// TMPRL1100 is the SDK's code for a nondeterminism error.
		require.Contains(t, err.Error(), "TMPRL1100", filepath.Base(f))
	}
}

func histories(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "record histories with: go test ./conformance -run TestConformance -update-histories")
	return files
}
