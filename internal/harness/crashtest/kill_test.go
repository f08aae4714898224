package crashtest_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/tools"
)

const (
	executeActivity = "ExecuteToolCall"
	modelActivity   = "ModelTurn"
	// lostWorkerText is how the workflow words a tool attempt whose worker
	// stopped heartbeating (workflows/parallel.go, timeoutText).
	lostWorkerText = "the worker running it stopped responding"
	// runTimeout bounds a run that must outlive a lost worker: the 30 s
	// heartbeat timeout of workflows/stages.go and turn.go, plus margin for
	// a loaded machine, where a dev server or worker takes 10-15 s to start.
	runTimeout = 3 * time.Minute
	// reachTimeout bounds the wait for a state a run reaches on its own (a
	// tool running, a call waiting for approval): a second idle, 30 s and
	// more with three test suites on two cores. Only a hang reaches it.
	reachTimeout = 2 * time.Minute
)

// A worker killed while a model turn streams: the turn's heartbeats stop, the
// server times the attempt out after the model heartbeat timeout (30 s) and a
// new worker streams the turn again from the start. The transcript holds
// the one final message of the turn, and the run goes on.
func TestKillWorkerWhileModelStreams(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1")
	id := "stream"
	e.start(id, e.input(crashtest.ModelStream, "ls"))
	var seq int64
	e.waitFor("model turn streaming (live heartbeat seq >= 10)", reachTimeout, func() bool {
		_, _, hb := e.pendingActivity(id, modelActivity)
		if hb != nil {
			seq = hb.Seq
		}
		return hb != nil && hb.Seq >= 10
	})
	killed := e.killWorker(w1, "mid-stream")
	e.startWorker("w2")

	res := e.resultAfterKill(id, killed)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, 2, res.Turns)
	assistants := assistantMessages(res.Messages)
	require.Len(t, assistants, 2, "one assistant message per turn, none from the lost attempt")
	require.Equal(t, crashtest.StreamText(), agent.TextOf(assistants[0].Content), "the retried turn streamed the whole text")
	results := oneResultPerCall(t, res.Messages)
	require.False(t, results["call-ls"].IsError, agent.TextOf(results["call-ls"].Content))

	evs := e.events(id)
	require.Equal(t, 2, countEvents(evs, agent.EventTurnStart, ""), "event log has each turn once")
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionStart, "call-ls"))
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionEnd, "call-ls"))

	turns := ofType(e.logActivities(id), modelActivity)
	require.Len(t, turns, 2)
	require.Equal(t, int32(2), turns[0].Attempt, "the first turn ran twice")
	require.Equal(t, "timeout "+enumspb.TIMEOUT_TYPE_HEARTBEAT.String(), turns[0].LastFailure)
	require.Equal(t, "completed", turns[0].Outcome)
	e.logf("killed at live seq %d of ~%d stream events", seq, crashtest.StreamChunks)
}

// A worker killed while a read-only tool (default retries) runs: the attempt
// is lost, Temporal runs the tool again on the new worker, and the call has
// one result. slow_read's start-to-close timeout (6 s) finds the lost
// attempt before the 30 s heartbeat timeout does. The tool log shows it ran
// twice (more where an attempt on the new worker outlasts the 6 s too),
// which is allowed for a read-only tool.
func TestKillWorkerWhileReadOnlyToolRuns(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1")
	id := "readonly"
	e.start(id, e.input(crashtest.ModelReadOnly, crashtest.SlowReadTool))
	log := e.path(crashtest.SlowReadLog)
	e.waitFor("slow_read attempt 1 running", reachTimeout, func() bool { return len(lines(log, "start")) == 1 })
	killed := e.killWorker(w1, "while slow_read sleeps")
	w2 := e.startWorker("w2")

	res := e.resultAfterKill(id, killed)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, notes, okText(t, res.Messages, "call-read"))

	starts, ends := lines(log, "start"), lines(log, "end")
	t.Logf("slow_read log:\n%s", strings.Join(append(starts, ends...), "\n"))
	// Once on w1, then on w2; on a loaded machine an attempt on w2 can
	// outlast slow_read's 6 s start-to-close too and run again there, which
	// a read-only tool allows. Every attempt shares the idempotency key.
	require.True(t, w1.wrote(starts[0]), starts[0])
	require.GreaterOrEqual(t, len(starts), 2, "the read-only tool ran again on the new worker")
	for _, s := range starts[1:] {
		require.True(t, w2.wrote(s), "only the new worker ran it again: %s", s)
		require.Equal(t, keyOf(starts[0]), keyOf(s), "every attempt shares the idempotency key")
	}
	require.NotEmpty(t, ends)
	for _, l := range ends {
		require.True(t, w2.wrote(l), "the killed worker's attempt never finished: %s", l)
	}

	evs := e.events(id)
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionStart, "call-read"))
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionEnd, "call-read"))
	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1)
	// Attempt 2 as a rule; on a loaded machine the server sometimes hands
	// attempt 2 to the killed worker's last poll, which nobody answers, and
	// the new worker gets attempt 3 after another start-to-close timeout.
	require.GreaterOrEqual(t, exec[0].Attempt, int32(2))
	require.Equal(t, "timeout "+enumspb.TIMEOUT_TYPE_START_TO_CLOSE.String(), exec[0].LastFailure)
}

func keyOf(line string) string {
	_, key, _ := strings.Cut(line, "key=")
	return key
}

// A worker killed while bash runs: bash has MaxAttempts 1, so Temporal does
// not run it again. After the heartbeat timeout (30 s) the call ends as an
// error result saying the worker was lost, and the model sees it in the
// next turn. The command started once and was not re-run by the new
// worker. Its process group outlives the killed worker (bash runs it with
// Setpgid, which SIGKILL of the worker does not reach), so it finishes on
// its own: the command did complete, but nobody reported it.
func TestKillWorkerWhileBashRuns(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1")
	id := "bash"
	e.start(id, e.input(crashtest.ModelBash, tools.BashToolName))
	e.waitBashStarted("bash command running")
	killed := e.killWorker(w1, "while bash sleeps")
	e.startWorker("w2")

	res := e.resultAfterKill(id, killed)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, 2, res.Turns, "the model got the error result and answered")
	results := oneResultPerCall(t, res.Messages)
	r := results["call-bash"]
	text := agent.TextOf(r.Content)
	e.logf("bash result: isError=%v %q", r.IsError, text)
	require.True(t, r.IsError, "a lost single-attempt tool is an error result")
	require.Contains(t, text, lostWorkerText)

	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1, "bash was not scheduled again")
	require.Equal(t, int32(1), exec[0].Attempt, "bash was not retried")
	require.Equal(t, "timed out "+enumspb.TIMEOUT_TYPE_HEARTBEAT.String(), exec[0].Outcome)

	require.Len(t, lines(e.path(crashtest.Started), "started"), 1, "bash was not re-run")
	marker := lines(e.path(crashtest.Marker), "done")
	e.logf("marker lines: %d (the orphaned command of the killed worker finished)", len(marker))
	require.LessOrEqual(t, len(marker), 1, "bash ran more than once")
}

// A worker killed between prepare and execute: the before hook (which runs
// after tool_execution_start is emitted) blocks, and the worker dies inside
// it, before the workflow task that would schedule ExecuteToolCall
// completes. The new worker replays the run, prepares the call again and
// runs bash once: nothing of the first prepare reached history, so the
// single-attempt tool runs and succeeds.
func TestKillWorkerBetweenPrepareAndExecute(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1", "-hook-block", "3s")
	id := "prepare"
	in := e.input(crashtest.ModelPrepare, tools.BashToolName)
	in.BeforeToolCall = agent.HookNames(crashtest.BlockHook)
	e.start(id, in)
	hookMarker := filepath.Join(e.dir, "prepare-call-prep.")
	e.waitFor("before hook entered on w1 (tool_execution_start emitted)", reachTimeout, func() bool {
		_, err := os.Stat(hookMarker + itoa(w1.pid()))
		return err == nil
	})
	killed := e.killWorker(w1, "inside the before hook")
	found, _, _ := e.pendingActivity(id, executeActivity)
	require.False(t, found, "ExecuteToolCall must not be scheduled yet")
	w2 := e.startWorker("w2", "-hook-block", "100ms")

	res := e.resultAfterKill(id, killed)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Contains(t, okText(t, res.Messages, "call-prep"), "prepared-output")
	require.Len(t, lines(e.path(crashtest.Marker), "ran"), 1, "bash ran exactly once")
	_, err := os.Stat(hookMarker + itoa(w2.pid()))
	require.NoError(t, err, "the new worker ran prepare again")

	evs := e.events(id)
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionStart, "call-prep"), "the replayed log has one start")
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionEnd, "call-prep"))
	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1)
	require.Equal(t, int32(1), exec[0].Attempt)
	require.Contains(t, exec[0].Identity, itoa(w2.pid()), "the new worker ran bash")
}

func itoa(n int) string { return strconv.Itoa(n) }
