package crashtest_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
)

// scheduledOn lists the task queue of every scheduled activity of a type.
func scheduledOn(h *historypb.History, activityType string) []string {
	var out []string
	for _, ev := range h.GetEvents() {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activityType {
			out = append(out, a.GetTaskQueue().GetName())
		}
	}
	return out
}

// Host affinity by default: two hosts (two workers with different host
// names), the run resolved on host a. Its bash call runs on host a's queue;
// host a dies after journaling the outcome and before reporting it. Host b
// serves the run's workflow and model turns but never its tools: the
// lookup of the lost call goes to host a's queue and waits there until
// host a is back, which answers from its journal.
func TestToolsStayOnTheirHost(t *testing.T) {
	e := newEnv(t)
	a := e.startWorker("a", "-host", "host-a", "-journal", "-journal-pause", "60s", "-bash-heartbeat", "3s")
	id := "affinity"
	e.start(id, e.input(crashtest.ModelJournal, tools.BashToolName))
	j := &journal.Journal{Dir: filepath.Join(e.dir, "journal")}
	e.waitFor("bash outcome journaled on host a", reachTimeout, func() bool {
		rs, _ := j.Records()
		return len(rs) == 1 && rs[0].State == journal.StateCompleted
	})
	b := e.startWorker("b", "-host", "host-b", "-journal", "-bash-heartbeat", "3s")
	e.killWorker(a, "host a dies after journaling, before reporting")
	e.waitFor("the lookup waiting on host a's queue", reachTimeout, func() bool {
		found, _, _ := e.pendingActivity(id, journal.LookupActivity)
		return found
	})
	time.Sleep(2 * time.Second)
	found, _, _ := e.pendingActivity(id, journal.LookupActivity)
	require.True(t, found, "host b did not answer for host a")
	a2 := e.startWorker("a2", "-host", "host-a", "-journal", "-bash-heartbeat", "3s")

	res := e.result(id, runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Contains(t, okText(t, res.Messages, "call-journal"), "journaled-output")
	require.Len(t, lines(e.path(crashtest.Marker), "done"), 1, "bash ran once")

	h := e.history(id)
	hostA := agentapi.HostQueue(e.queue, "host-a")
	require.Equal(t, []string{hostA}, scheduledOn(h, executeActivity))
	require.Equal(t, []string{hostA}, scheduledOn(h, journal.LookupActivity), "the lookup asks the host that ran the tool")
	as := e.logActivities(id)
	lookups := ofType(as, journal.LookupActivity)
	require.Len(t, lookups, 1)
	require.Contains(t, lookups[0].Identity, itoa(a2.pid()))
	bTasks := 0
	for _, ev := range h.GetEvents() {
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil && a.GetIdentity() == "crashtest-plain-"+itoa(b.pid()) {
			bTasks++
		}
	}
	require.Positive(t, bTasks, "host b ran the run's workflow tasks, only the tools stayed on host a")
}
