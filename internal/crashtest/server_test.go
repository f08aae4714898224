package crashtest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/crashtest"
)

// The dev server stopped (SIGINT; it takes 2-5 s to shut down) while a tool
// sleeps, and started again on the same SQLite file and port once the tool
// has finished: the worker process, never restarted, reconnects; the tool's
// result, which the SDK retries to report for 10 s (defaultRPCTimeout),
// reaches the restarted server; the run completes without running the tool
// again. slow_read runs with a 30 s start-to-close timeout here, so the
// attempt cannot time out while the server is down. (With its usual 6 s the
// attempt timed out before the late result arrived and slow_read, being
// read-only, ran again; a single-attempt tool would have ended as lost: a
// second case the tool journal recovers.)
func TestServerRestartMidRun(t *testing.T) {
	e := newEnv(t)
	w := e.startWorker("w1", "-slow-read-timeout", "30s")
	id := "restart"
	e.start(id, e.input(crashtest.ModelRestart, crashtest.SlowReadTool))
	log := e.path(crashtest.SlowReadLog)
	e.waitFor("slow_read running", 30*time.Second, func() bool { return len(lines(log, "start")) == 1 })

	down := time.Now()
	e.stopServer()
	e.logf("dev server stopped in %v", time.Since(down).Round(time.Millisecond))
	e.waitFor("slow_read finished while the server is down", 30*time.Second, func() bool { return len(lines(log, "end")) == 1 })
	time.Sleep(300 * time.Millisecond)
	e.startServer()
	e.logf("server was down %v", time.Since(down).Round(time.Millisecond))

	res := e.result(id, runTimeout)
	e.logf("completed %v after the server went down", time.Since(down).Round(100*time.Millisecond))
	require.True(t, w.alive(), "the same worker process served the whole run")
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, 2, res.Turns)
	results := oneResultPerCall(t, res.Messages)
	r := results["call-restart"]
	require.False(t, r.IsError, agent.TextOf(r.Content))
	require.Equal(t, notes, agent.TextOf(r.Content))

	require.Len(t, lines(log, "start"), 1, "the result reached the restarted server; the tool did not run again")
	evs := e.events(id)
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionStart, "call-restart"))
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionEnd, "call-restart"))
	e.logActivities(id)
	e.logHistory(id)
}
