package crashtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
)

// A deployment that changes the workflow code under a running history.
//
// Run A starts on the old worker (plain AgentLoop), which is killed while
// A's first tool runs. A worker whose AgentLoop first runs a new activity
// (RecordRunStart) picks A up: replay meets a command the history does not
// have and the workflow task fails with NON_DETERMINISTIC_ERROR, again and
// again, while A stays open. That worker is killed in turn and one with the
// same change behind workflow.GetVersion takes over: A (no version marker in
// its history) replays without the new activity and completes, and run B,
// started after the change, records version 1, runs the activity and
// completes.
func TestDeployChangedWorkflow(t *testing.T) {
	e := newEnv(t)
	old := e.startWorker("old", "-variant", crashtest.VariantPlain)
	a := "deploy-old-run"
	e.start(a, e.input(crashtest.ModelDeploy, crashtest.SlowReadTool))
	log := e.path(crashtest.SlowReadLog)
	e.waitFor("run A's first tool running on the old worker", reachTimeout, func() bool { return len(lines(log, "start")) == 1 })
	e.killWorker(old, "deploy: old worker stops")

	bad := e.startWorker("unguarded", "-variant", crashtest.VariantUnguarded)
	// The server writes a workflow task's failure to history on its first
	// attempt only. When that attempt timed out instead (it went to the
	// killed worker's sticky queue, which a loaded machine reaches before
	// the new worker is up), the failures that follow show only in the
	// pending task's attempt count and in the worker's log.
	var failure *historypb.WorkflowTaskFailedEventAttributes
	workerLog := filepath.Join(e.dir, "worker-unguarded.log")
	e.waitFor("the changed workflow's task failing on run A", reachTimeout, func() bool {
		for _, ev := range e.history(a).GetEvents() {
			if f := ev.GetWorkflowTaskFailedEventAttributes(); f != nil {
				failure = f
				return true
			}
		}
		d, err := e.c.DescribeWorkflow(context.Background(), a, "")
		logged, _ := os.ReadFile(workerLog)
		return err == nil && d.RawResponse.GetPendingWorkflowTask().GetAttempt() >= 3 && strings.Contains(string(logged), "TMPRL1100")
	})
	if failure != nil {
		require.Equal(t, enumspb.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR, failure.GetCause())
		msg := failure.GetFailure().GetMessage()
		e.logf("workflow task failure: %.300s", msg)
		require.Contains(t, msg, "TMPRL1100", "the SDK's nondeterminism error")
	} else {
		e.logf("the first workflow task attempt timed out; later ones failed with the SDK's nondeterminism error (TMPRL1100) in the worker's log")
	}
	d, err := e.c.DescribeWorkflow(context.Background(), a, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.RawResponse.GetWorkflowExecutionInfo().GetStatus(), "a nondeterministic task blocks the run; it does not fail it")
	e.logf("pending workflow task: attempt %d", d.RawResponse.GetPendingWorkflowTask().GetAttempt())
	e.killWorker(bad, "deploy: roll back the unguarded change")

	e.startWorker("guarded", "-variant", crashtest.VariantGuarded)
	b := "deploy-new-run"
	e.start(b, e.input(crashtest.ModelDeploy, crashtest.SlowReadTool))

	for _, id := range []string{a, b} {
		res := e.result(id, runTimeout)
		require.Equal(t, agent.StopReasonStop, res.StopReason, "%s: %s", id, res.ErrorMessage)
		require.Equal(t, 3, res.Turns, id)
		results := oneResultPerCall(t, res.Messages)
		for _, call := range []string{"call-d1", "call-d2"} {
			require.False(t, results[call].IsError, "%s %s: %s", id, call, agent.TextOf(results[call].Content))
		}
	}

	e.logHistory(a)
	e.logHistory(b)
	audit, _ := os.ReadFile(filepath.Join(e.dir, crashtest.AuditLog))
	require.Equal(t, b+"\n", string(audit), "only the run started after the change ran the new activity")
	require.Empty(t, markersOf(t, e.history(a), crashtest.AuditChangeID), "the old run replays without the change")
	require.Empty(t, ofType(scheduledActivities(e.history(a)), crashtest.AuditActivity))
	require.Equal(t, []string{crashtest.AuditChangeID + "=1"}, markersOf(t, e.history(b), crashtest.AuditChangeID))
	require.Len(t, ofType(scheduledActivities(e.history(b)), crashtest.AuditActivity), 1)
}

// markersOf lists the GetVersion markers of one change (runs record
// others, such as host-start-timeout's, as they go).
func markersOf(t *testing.T, h *historypb.History, change string) []string {
	t.Helper()
	var out []string
	for _, m := range versionMarkers(t, h) {
		if strings.HasPrefix(m, change+"=") {
			out = append(out, m)
		}
	}
	return out
}

// versionMarkers lists the GetVersion markers of a history as changeID=version.
func versionMarkers(t *testing.T, h *historypb.History) []string {
	t.Helper()
	var out []string
	dc := converter.GetDefaultDataConverter()
	for _, ev := range h.GetEvents() {
		m := ev.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		var change string
		var version int
		require.NoError(t, dc.FromPayloads(m.GetDetails()["change-id"], &change))
		require.NoError(t, dc.FromPayloads(m.GetDetails()["version"], &version))
		out = append(out, change+"="+itoa(version))
	}
	return out
}
