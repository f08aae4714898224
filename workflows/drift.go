package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
)

// Config drift: a worker of the fleet lacks a model, a provider's key, a
// tool, an MCP server or a hook the run needs, and fails the stage with the
// retryable ConfigDrift (activities/drift.go). The stage must then move to
// a worker that has it, within the run's ConfigDriftTimeout:
//
//   - A local activity (ResolveRun, PrepareToolCall, FinalizeToolCall) and
//     its retries stay on the worker running the workflow task, and sticky
//     execution keeps the workflow there. So the stage runs again as a
//     regular activity on the run's task queue, where any worker may take
//     an attempt, retried until one that has what it needs answers or the
//     timeout passes (elsewhere).
//   - A regular activity (ModelTurn, ExecuteToolCall, CompactContext) may
//     reach the lacking worker on each of its attempts, and a single-attempt
//     tool has one. So the workflow schedules it again after a backoff while
//     it fails with ConfigDrift (driftAgain); the attempt that failed ran
//     nothing, so even a single-attempt tool may run again.

// driftChange guards both: histories recorded before it never met
// ConfigDrift, and a run that met ToolsUnavailable failed where it did.
const driftChange = "config-drift-elsewhere"

// Backoff between the schedules of a regular activity that met drift.
const (
	driftFirstDelay = time.Second
	driftMaxDelay   = 10 * time.Second
)

// isDrift reports whether err says the worker that ran a stage lacks
// configuration another worker may have.
func isDrift(err error) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return false
	}
	return appErr.Type() == activities.ErrConfigDrift || appErr.Type() == activities.ErrToolsUnavailable
}

// elsewhere runs a local activity that failed with err again as a regular
// activity on the run's task queue, when err is drift. ok is false when it
// is not, or in a history recorded before driftChange.
func (l *loop) elsewhere(ctx workflow.Context, err error, activity, in any) (f workflow.Future, ok bool) {
	if !isDrift(err) || workflow.GetVersion(ctx, driftChange, workflow.DefaultVersion, 1) < 1 {
		return nil, false
	}
	workflow.GetLogger(ctx).Warn("this worker lacks what the run needs: another worker takes the stage", "error", failureText(err))
	opts := l.elsewhereOptions("on a worker that has it: " + shorten(failureText(err), 100))
	return workflow.ExecuteActivity(workflow.WithActivityOptions(l.baseCtx, opts), activity, in), true
}

// elsewhereOptions are the options of an activity that waits, within the
// run's drift timeout, for a worker that has what this one lacks.
func (l *loop) elsewhereOptions(summary string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		ScheduleToCloseTimeout: l.cfg.DriftTimeout(),
		StartToCloseTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    driftFirstDelay,
			BackoffCoefficient: 2,
			MaximumInterval:    driftMaxDelay,
		},
		Summary: summary,
	}
}

// driftError is the run's error when no worker that has what it needs
// answered within its ConfigDriftTimeout; err, any other error, is
// returned as it is.
func (l *loop) driftError(err error) error {
	if !isDrift(err) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("no worker that has what the run needs answered within %v: %s", l.cfg.DriftTimeout(), failureText(err)),
		activities.ErrConfigDrift, nil)
}

// driftWait is a regular activity's wait for a worker that has what the
// run needs, from its first ConfigDrift.
type driftWait struct {
	since time.Time
	tries int
}

// driftDelay reports whether a regular activity that failed with err is to
// be scheduled again, and after what backoff: err is drift and the run's
// ConfigDriftTimeout has not passed since the first.
func (l *loop) driftDelay(ctx workflow.Context, w *driftWait, err error) (time.Duration, bool) {
	if !isDrift(err) || workflow.GetVersion(ctx, driftChange, workflow.DefaultVersion, 1) < 1 {
		return 0, false
	}
	now := workflow.Now(ctx)
	if w.tries == 0 {
		w.since = now
	}
	if now.Sub(w.since) >= l.cfg.DriftTimeout() {
		return 0, false
	}
	delay := driftMaxDelay
	if w.tries < 4 {
		delay = min(driftFirstDelay<<w.tries, driftMaxDelay)
	}
	w.tries++
	workflow.GetLogger(ctx).Warn("a worker lacks what the run needs: scheduling the stage again", "error", failureText(err), "try", w.tries)
	return delay, true
}

// driftAgain waits out driftDelay and reports true when the activity is to
// be scheduled again. The main coroutine (handleSignals) handles signals
// while it waits; an abort ends the wait early, and the caller decides
// what the aborted run does next.
func (l *loop) driftAgain(ctx workflow.Context, w *driftWait, err error, handleSignals bool) bool {
	delay, ok := l.driftDelay(ctx, w, err)
	if !ok {
		return false
	}
	t := workflow.NewTimer(l.activityCtx(), delay)
	if handleSignals {
		l.wait(ctx, t)
	} else {
		_ = t.Get(ctx, nil)
	}
	return true
}

// executeAfter is a parallel call's execute scheduled again after delay,
// as a future the batch waits on like any execute.
func (l *loop) executeAfter(ctx workflow.Context, c *chain, delay time.Duration) workflow.Future {
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(gctx workflow.Context) {
		// An abort ends the wait: the call then runs with it, as pi's do.
		_ = workflow.NewTimer(l.activityCtx(), delay).Get(gctx, nil)
		set.Chain(l.startExecute(c.call, c.index+1, c.args))
	})
	return f
}

// shorten cuts s to at most n runes.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
