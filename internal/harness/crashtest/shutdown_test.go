package crashtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
)

// Deploys stop workers with SIGTERM. A stopping worker stops polling at
// once, lets its activities in flight go on for -stop-timeout, then
// interrupts those still running: a retry-safe attempt fails as the
// retryable WorkerShutdown and another worker takes it over at once; a
// single-attempt tool is journaled as interrupted and the model gets pi's
// text for an interrupted call. These tests run two real worker processes,
// the second already polling, as in a rolling deploy.

// handOverLimit is what a SIGTERM'd worker's interrupted attempt may wait
// before another worker starts it again: half the 30 s heartbeat timeout
// that handing over at once replaces (issue 13). The hand-off itself takes
// well under a second on an idle machine (docs/operations.md has the
// figures the tests log); a loaded one stretches it, never to the timeout.
const handOverLimit = 15 * time.Second

// term sends SIGTERM to a worker and waits for it to exit.
func (e *env) term(p *proc, why string) (sent time.Time, exited time.Duration) {
	e.t.Helper()
	sent = time.Now()
	require.NoError(e.t, p.cmd.Process.Signal(syscall.SIGTERM))
	e.logf("SIGTERM worker %s (pid %d): %s", p.name, p.pid(), why)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		e.t.Fatalf("worker %s still running a minute after SIGTERM", p.name)
	}
	exited = time.Since(sent)
	e.logf("worker %s exited %v after SIGTERM", p.name, exited.Round(time.Millisecond))
	return sent, exited
}

// eventTime is the time of the first history event that matches.
func eventTime(h *historypb.History, match func(*historypb.HistoryEvent) bool) time.Time {
	for _, ev := range h.GetEvents() {
		if match(ev) {
			return ev.GetEventTime().AsTime()
		}
	}
	return time.Time{}
}

// A worker SIGTERM'd while a 12 s model turn streams, with a 1 s grace: the turn
// is interrupted at the end of the grace and streamed again at once by the
// other worker (before: after the 30 s heartbeat timeout,
// TestKillWorkerWhileModelStreams). Both workers poll before the run starts,
// so the stream is still going when the test stops the one that has it,
// however long a worker takes to start. The test logs what the SIGTERM added
// to the run beyond the redone part of the stream.
func TestSigtermWorkerWhileModelStreams(t *testing.T) {
	e := newEnv(t)
	const grace = time.Second
	workers := []*proc{e.startWorker("w1", "-stop-timeout", grace.String()), e.startWorker("w2", "-stop-timeout", grace.String())}
	id := "stream-sigterm"
	e.start(id, e.input(crashtest.ModelLongStream, "ls"))
	e.waitFor("model turn streaming (live heartbeat seq >= 5)", reachTimeout, func() bool {
		_, _, hb := e.pendingActivity(id, modelActivity)
		return hb != nil && hb.Seq >= 5
	})
	holder := e.runningOn(id, modelActivity, workers)
	sent, exited := e.term(holder, "mid-stream, the other worker polling")
	require.Less(t, exited, grace+5*time.Second, "the worker exits within its grace and the report margin")

	res := e.result(id, runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, 2, res.Turns)
	assistants := assistantMessages(res.Messages)
	for _, m := range assistants {
		require.NotEqual(t, agent.StopReasonAborted, m.StopReason, "a shutdown is not an abort")
	}
	require.Len(t, assistants, 2, "one assistant message per turn")
	require.Equal(t, crashtest.LongStreamText(), agent.TextOf(assistants[0].Content), "the retried turn streamed the whole text")
	evs := e.events(id)
	require.Equal(t, 2, countEvents(evs, agent.EventTurnStart, ""))
	require.Equal(t, 1, countEvents(evs, agent.EventToolExecutionEnd, "call-ls"))

	turns := ofType(e.logActivities(id), modelActivity)
	require.Len(t, turns, 2)
	if lostToStoppingPoll(t, e, turns[0]) {
		return
	}
	require.Equal(t, int32(2), turns[0].Attempt, "the interrupted turn ran again")
	require.Contains(t, turns[0].LastFailure, "the worker is shutting down")

	// The same run on the remaining worker, undisturbed, for comparison.
	base := "stream-baseline"
	e.start(base, e.input(crashtest.ModelLongStream, "ls"))
	e.result(base, runTimeout)

	e.logHistory(id)
	e.logHistory(base)
	h, hb := e.history(id), e.history(base)
	// From the first model turn's schedule to the run's end: a worker's
	// start-up and the first workflow task are not the SIGTERM's doing.
	firstTurn := func(ev *historypb.HistoryEvent) bool {
		return ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == modelActivity
	}
	fromTurn := func(h *historypb.History) time.Duration {
		evs := h.GetEvents()
		return evs[len(evs)-1].GetEventTime().AsTime().Sub(eventTime(h, firstTurn))
	}
	retried := eventTime(h, func(ev *historypb.HistoryEvent) bool {
		return ev.GetActivityTaskStartedEventAttributes().GetAttempt() == 2
	})
	interrupted := sent.Add(grace)
	redone := interrupted.Sub(eventTime(h, firstTurn))
	added := fromTurn(h) - fromTurn(hb) - redone
	e.logf("from the first turn to the end: %v, undisturbed %v; redone stream %v: the SIGTERM added %v; attempt 2 started %v after the interruption",
		fromTurn(h).Round(time.Millisecond), fromTurn(hb).Round(time.Millisecond), redone.Round(time.Millisecond),
		added.Round(time.Millisecond), retried.Sub(interrupted).Round(time.Millisecond))
	require.Less(t, retried.Sub(interrupted), handOverLimit, "handed over at once, not after the heartbeat timeout")
}

// A worker SIGTERM'd while bash runs, with a grace shorter than the
// command (it runs until the test writes crashtest.Release, which it never
// does): bash runs once (RetryOnce), so it is not handed over; the
// command's process group is stopped, the journal records the call as
// interrupted (not as "Command aborted", which would be the run's abort),
// and the model gets pi's text for an interrupted call at once, not after
// the heartbeat timeout.
func TestSigtermWorkerWhileBashRuns(t *testing.T) {
	e := newEnv(t)
	const grace = 500 * time.Millisecond
	w1 := e.startWorker("w1", "-journal", "-stop-timeout", grace.String())
	id := "bash-sigterm"
	e.start(id, e.input(crashtest.ModelLongBash, tools.BashToolName))
	e.waitBashStarted("bash command running on w1")
	e.startWorker("w2", "-journal")
	sent, _ := e.term(w1, "while bash waits for its release")

	res := e.result(id, runTimeout)
	e.logf("run ended %v after the SIGTERM", time.Since(sent).Round(100*time.Millisecond))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, 2, res.Turns, "the model got the interrupted call's result and answered")
	r := oneResultPerCall(t, res.Messages)["call-bash"]
	require.True(t, r.IsError)
	require.Equal(t, "No result provided", agent.TextOf(r.Content), "pi's text for an interrupted tool call")
	require.Contains(t, string(r.Details), "interrupted")
	// Reported at once, not after the 30 s heartbeat timeout: the attempt's
	// outcome below is the interruption, not a timeout. (The run's end
	// also waits for the next model turn, which a loaded machine delays.)

	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1, "bash was not scheduled again")
	require.Equal(t, int32(1), exec[0].Attempt, "bash was not retried")
	require.Contains(t, exec[0].Outcome, "the worker is shutting down")
	require.Len(t, lines(e.path(crashtest.Started), "started"), 1, "bash ran once")
	require.Empty(t, lines(e.path(crashtest.Marker), "done"), "the command was stopped before its end")

	j, err := journal.Open(filepath.Join(e.dir, "journal"))
	require.NoError(t, err)
	recs, err := j.Records()
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, journal.StateInterrupted, recs[0].State)
}

// A worker SIGTERM'd while bash runs, with a grace longer than the
// command: the command finishes on the stopping worker, its result is
// reported, and the next turn runs on the other worker.
func TestSigtermWorkerLetsBashFinish(t *testing.T) {
	e := newEnv(t)
	w1 := e.startWorker("w1", "-journal", "-stop-timeout", "10s")
	id := "bash-finishes"
	e.start(id, e.input(crashtest.ModelBash, tools.BashToolName))
	e.waitBashStarted("bash command running on w1")
	e.startWorker("w2", "-journal")
	_, exited := e.term(w1, "while bash sleeps 2 s")
	require.Less(t, exited, 10*time.Second, "the worker exits once its activity is done")

	res := e.result(id, runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	okText(t, res.Messages, "call-bash")
	require.Len(t, lines(e.path(crashtest.Marker), "done"), 1, "the command ran to its end once")
	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1)
	require.Equal(t, "completed", exec[0].Outcome)
	require.Contains(t, exec[0].Identity, itoa(w1.pid()), "the stopping worker finished it")
}

// A worker SIGTERM'd while a retry-safe tool runs: the attempt is
// interrupted after the grace and the other worker runs the tool again at
// once; the call has one result. The tool runs until the test writes
// crashtest.Release, which it does once the first worker is gone.
func TestSigtermWorkerWhileReadOnlyToolRuns(t *testing.T) {
	e := newEnv(t)
	const grace = 300 * time.Millisecond
	w1 := e.startWorker("w1", "-stop-timeout", grace.String(), "-slow-read-timeout", "30s")
	id := "readonly-sigterm"
	e.start(id, e.input(crashtest.ModelLongRead, crashtest.SlowReadTool))
	log := e.path(crashtest.SlowReadLog)
	e.waitFor("slow_read attempt 1 running on w1", reachTimeout, func() bool { return len(lines(log, "start")) == 1 })
	w2 := e.startWorker("w2", "-slow-read-timeout", "30s")
	sent, _ := e.term(w1, "while slow_read waits for its release")
	release(t, e)

	res := e.result(id, runTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, notes, okText(t, res.Messages, "call-read"))
	onW2 := 0
	for _, l := range lines(log, "start") {
		if w2.wrote(l) {
			onW2++
		}
	}
	require.Equal(t, 1, onW2, "the tool ran again on w2, once")
	require.Len(t, lines(log, "end"), 1)
	exec := ofType(e.logActivities(id), executeActivity)
	require.Len(t, exec, 1)
	if lostToStoppingPoll(t, e, exec[0]) {
		return
	}
	require.Equal(t, int32(2), exec[0].Attempt)
	require.Contains(t, exec[0].LastFailure, "the worker is shutting down")
	started := eventTime(e.history(id), func(ev *historypb.HistoryEvent) bool {
		return ev.GetActivityTaskStartedEventAttributes().GetAttempt() == 2
	})
	e.logf("attempt 2 started %v after the interruption", started.Sub(sent.Add(grace)).Round(time.Millisecond))
	require.Less(t, started.Sub(sent.Add(grace)), handOverLimit, "handed over at once, not after the 30 s start-to-close timeout")
}

// lostToStoppingPoll reports an attempt after the interrupted one that
// went to the stopping worker: the server handed the retry to a poll the
// stopping worker had in flight. Either the SDK dropped it (the server
// cannot complete polls on shutdown; 1.29 cannot), so it came back only
// after its timeout, or the worker started it within its grace and
// interrupted it too. Seen on loaded machines; the test then checks what
// still holds.
func lostToStoppingPoll(t *testing.T, e *env, a *attempt) bool {
	t.Helper()
	if a.Attempt <= 2 {
		return false
	}
	e.logf("attempt %d: the retry went to the stopping worker's last poll (%s)", a.Attempt, a.LastFailure)
	require.True(t, strings.Contains(a.LastFailure, "timeout") || strings.Contains(a.LastFailure, "the worker is shutting down"),
		"the attempt before the last one timed out or was interrupted: %s", a.LastFailure)
	return true
}

// release lets the held tools (crashtest.ModelLongRead, ModelLongBash) go on.
func release(t *testing.T, e *env) {
	t.Helper()
	require.NoError(t, os.WriteFile(e.path(crashtest.Release), nil, 0o644))
	e.logf("wrote %s", crashtest.Release)
}

// runningOn is the worker, of those given, that runs the run's pending
// activity of the given type.
func (e *env) runningOn(id, activityType string, workers []*proc) *proc {
	e.t.Helper()
	d, err := e.c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(e.t, err)
	for _, pa := range d.RawResponse.GetPendingActivities() {
		if pa.GetActivityType().GetName() != activityType {
			continue
		}
		for _, w := range workers {
			if strings.HasSuffix(pa.GetLastWorkerIdentity(), "-"+itoa(w.pid())) {
				e.logf("%s runs on worker %s", activityType, w.name)
				return w
			}
		}
		e.t.Fatalf("%s runs on %q, none of the test's workers", activityType, pa.GetLastWorkerIdentity())
	}
	e.t.Fatalf("run %s has no pending %s", id, activityType)
	return nil
}
