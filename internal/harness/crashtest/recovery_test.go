package crashtest_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
)

// A single-attempt tool lost with its worker is reported within
// its own heartbeat timeout (5 s here) instead of the workflow's fixed 30 s.
// (At 3 s a machine running three test suites could miss a heartbeat of
// the live attempt before its command started.)
func TestLostBashReportedWithinItsHeartbeatTimeout(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1", "-bash-heartbeat", "5s")
	id := "heartbeat"
	e.start(id, e.input(crashtest.ModelBash, tools.BashToolName))
	e.waitBashStarted("bash command running")
	killed := e.killWorker(w1, "while bash sleeps")
	e.startWorker("w2", "-bash-heartbeat", "5s")

	res := e.resultAfterKill(id, killed)
	r := oneResultPerCall(t, res.Messages)["call-bash"]
	require.True(t, r.IsError)
	require.Contains(t, agent.TextOf(r.Content), lostWorkerText)
	// The server times the attempt out on bash's own heartbeat timeout,
	// not the workflow's 30 s: the history holds both the timeout the
	// workflow scheduled bash with and the kind that fired. When is
	// logged: the run's end also waits for the second worker's start-up
	// (10-15 s on a machine running three test suites at once).
	h := e.history(id)
	var scheduled *historypb.ActivityTaskScheduledEventAttributes
	var timedOut *historypb.ActivityTaskTimedOutEventAttributes
	var at time.Time
	for _, ev := range h.GetEvents() {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == executeActivity {
			scheduled = a
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
			timedOut, at = a, ev.GetEventTime().AsTime()
		}
	}
	require.NotNil(t, scheduled)
	require.Equal(t, 5*time.Second, scheduled.GetHeartbeatTimeout().AsDuration(), "bash scheduled with its own heartbeat timeout")
	require.NotNil(t, timedOut, "the lost attempt timed out")
	require.Equal(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, timedOut.GetFailure().GetTimeoutFailureInfo().GetTimeoutType())
	e.logf("the server timed the lost attempt out %v after the kill", at.Sub(killed).Round(100*time.Millisecond))
}

// The recovery path (workflows/lost.go, tools/journal): bash's worker journals the outcome and
// dies before reporting it. Once the workflow asks LookupToolOutcome after a
// lost single-attempt tool, the call ends with the recorded result instead
// of the lost-worker error, and bash does not run again.
func TestKillWorkerAfterJournaledOutcome(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1", "-journal", "-journal-pause", "60s", "-bash-heartbeat", "3s")
	id := "journal"
	e.start(id, e.input(crashtest.ModelJournal, tools.BashToolName))
	j := &journal.Journal{Dir: filepath.Join(e.dir, "journal")}
	e.waitFor("bash outcome journaled on w1", reachTimeout, func() bool {
		rs, _ := j.Records()
		return len(rs) == 1 && rs[0].State == journal.StateCompleted
	})
	killed := e.killWorker(w1, "after journaling, before reporting")
	e.startWorker("w2", "-journal", "-bash-heartbeat", "3s")

	res := e.resultAfterKill(id, killed)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Contains(t, okText(t, res.Messages, "call-journal"), "journaled-output")
	require.Len(t, lines(e.path(crashtest.Marker), "done"), 1, "bash ran exactly once")
	as := e.logActivities(id)
	require.Len(t, ofType(as, executeActivity), 1)
	lookups := ofType(as, journal.LookupActivity)
	require.Len(t, lookups, 1)
	require.Equal(t, "completed", lookups[0].Outcome)
}
