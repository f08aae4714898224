package crashtest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/workflows"
)

// cli runs the Temporal CLI against the test's server, as the README's
// "Deploying a change" does, retrying while the server does not know the
// version yet (its workers' first polls register it) or, on a loaded
// machine, cancels the call: three test suites at once made set-current-
// version fail with RST_STREAM CANCEL for more than 30 s.
func (e *env) cli(args ...string) string {
	e.t.Helper()
	path, err := devserver.FindCLI()
	require.NoError(e.t, err)
	args = append(args, "--address", e.hostPort)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command(path, args...).CombinedOutput()
		if err == nil {
			e.logf("temporal %s", strings.Join(args[:len(args)-2], " "))
			return string(out)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("temporal %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// buildsOf lists the build IDs that completed a history's workflow tasks,
// in order, without repeats.
func buildsOf(h *historypb.History) []string {
	var out []string
	for _, ev := range h.GetEvents() {
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			b := a.GetDeploymentVersion().GetBuildId()
			if len(out) == 0 || out[len(out)-1] != b {
				out = append(out, b)
			}
		}
	}
	return out
}

// Worker Deployment Versioning, deployed with the README's CLI commands:
// build v1 is current; a run and a session start on it. Build v2, whose
// AgentLoop has an unversioned change (an activity before the loop, which
// fails any v1 history's replay), is made current. The v1 run is pinned: it
// ends on v1 and v2 never sees it (no workflow task fails). A new run
// starts on v2 and runs the change. The session is auto-upgrade: its next
// prompt goes to v2, which continues it as new at once, so the prompt's run
// and the rest of the session are v2's alone (its history has v1's tasks
// and then one v2 task, the seam).
func TestDeployNewVersion(t *testing.T) {
	e := newEnv(t)
	v1 := e.startWorker("v1", "-build-id", "v1", "-slow-read-timeout", "30s")
	e.cli("worker", "deployment", "set-current-version", "--deployment-name", workflows.DeploymentName, "--build-id", "v1", "--yes")

	a := "pinned-run"
	e.start(a, e.input(crashtest.ModelLongRead, crashtest.SlowReadTool))
	s := "session"
	ctx := context.Background()
	_, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: s, TaskQueue: e.queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: llm.ScriptedProviderName, ID: crashtest.ModelReadOnly},
			Tools:     []string{crashtest.SlowReadTool},
			Workspace: e.ws,
		}})
	require.NoError(t, err)
	var st agentapi.RunStatus
	update(t, e, s, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "read"}, &st)
	log := e.path(crashtest.SlowReadLog)
	e.waitFor("the pinned run's held tool running on v1", reachTimeout, func() bool {
		for _, l := range lines(log, "start") {
			if strings.Contains(l, "key="+a+"/") {
				return true
			}
		}
		return false
	})

	// The session's first prompt ends on v1 before the deploy: a workflow
	// task of it on v2 would move it then, not at the next prompt.
	e.waitFor("the session's first run ended on v1", reachTimeout, func() bool {
		return countEvents(e.events(s), agent.EventAgentEnd, "") == 1
	})
	first, err := e.c.DescribeWorkflow(ctx, s, "")
	require.NoError(t, err)
	firstRun := first.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId()

	v2 := e.startWorker("v2", "-build-id", "v2", "-variant", crashtest.VariantUnguarded, "-slow-read-timeout", "30s")
	e.cli("worker", "deployment", "set-current-version", "--deployment-name", workflows.DeploymentName, "--build-id", "v2", "--yes")
	d, err := e.c.DescribeWorkflow(ctx, a, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.RawResponse.GetWorkflowExecutionInfo().GetStatus(), "the pinned run outlives the deploy")
	desc := e.cli("worker", "deployment", "describe", "--name", workflows.DeploymentName)
	e.logf("after the deploy:\n%s", desc)
	require.Contains(t, desc, "v2")
	release(t, e)

	b := "new-run"
	e.start(b, e.input(crashtest.ModelDeploy, crashtest.SlowReadTool))
	for id, turns := range map[string]int{a: 2, b: 3} {
		res := e.result(id, runTimeout)
		require.Equal(t, agent.StopReasonStop, res.StopReason, "%s: %s", id, res.ErrorMessage)
		require.Equal(t, turns, res.Turns, id)
	}
	e.saveHistory(a)
	e.saveHistory(b)
	ha, hb := e.history(a), e.history(b)
	require.Equal(t, []string{"v1"}, buildsOf(ha), "the pinned run stayed on v1")
	require.Equal(t, []string{"v2"}, buildsOf(hb), "the new run ran on v2")
	for _, ev := range ha.GetEvents() {
		require.Nil(t, ev.GetWorkflowTaskFailedEventAttributes(), "v2's unguarded change never replayed the pinned run")
	}
	audit, _ := os.ReadFile(filepath.Join(e.dir, crashtest.AuditLog))
	require.Equal(t, b+"\n", string(audit), "only the run started on v2 ran v2's change")
	for _, ev := range ha.GetEvents() {
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			require.Equal(t, enumspb.VERSIONING_BEHAVIOR_PINNED, a.GetVersioningBehavior())
		}
	}

	// The session's next prompt moves it to v2.
	update(t, e, s, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "read again"}, &st)
	require.Equal(t, 2, st.Run)
	var now *historypb.History
	e.waitFor("the session's second run ended on v2", reachTimeout, func() bool {
		d, err := e.c.DescribeWorkflow(ctx, s, "")
		if err != nil || d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId() == firstRun {
			return false
		}
		evs := e.events(s)
		return countEvents(evs, agent.EventAgentEnd, "") == 1
	})
	old := e.historyRun(s, firstRun)
	now = e.history(s)
	e.saveHistoryRun(s, firstRun, "moved")
	e.saveHistory(s)
	require.Equal(t, []string{"v1", "v2"}, buildsOf(old), "the first workflow run: v1's tasks, then v2's seam")
	require.Equal(t, []string{"v2"}, buildsOf(now), "the session's new workflow run is v2's alone")
	require.Contains(t, versionMarkers(t, old), "continue-as-new-on-new-build=1")
	for _, ev := range old.GetEvents() {
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			require.Equal(t, enumspb.VERSIONING_BEHAVIOR_AUTO_UPGRADE, a.GetVersioningBehavior())
		}
	}
	e.logf("v1 after the deploy:\n%s", e.cli("worker", "deployment", "describe-version",
		"--deployment-name", workflows.DeploymentName, "--build-id", "v1"))
	_, _ = v1, v2
}

func update(t *testing.T, e *env, id, updateID, name string, arg, out any) {
	t.Helper()
	h, err := e.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateID: updateID, UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	require.NoError(t, h.Get(context.Background(), out))
}

func (e *env) historyRun(id, runID string) *historypb.History {
	e.t.Helper()
	h, err := testenv.History(context.Background(), e.c, id, runID)
	require.NoError(e.t, err)
	return h
}

// saveHistoryRun is saveHistory for one workflow run, named after what it
// shows.
func (e *env) saveHistoryRun(id, runID, what string) {
	e.t.Helper()
	dir := os.Getenv("CRASHTEST_SAVE_HISTORY")
	if dir == "" {
		return
	}
	path := filepath.Join(dir, e.t.Name()+"-"+id+"-"+what+".json")
	require.NoError(e.t, testenv.SaveHistory(context.Background(), e.c, id, runID, path))
}
