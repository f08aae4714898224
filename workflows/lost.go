package workflows

import (
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools/journal"
)

// Recovery of a single-attempt tool (tools.RetryOnce: bash, edit) whose
// attempt timed out, usually because its worker was lost. Temporal
// must not run it again, but it may have finished: the tool's worker
// journals each outcome under the call's idempotency key before reporting
// it, and the workflow asks that host with the LookupToolOutcome activity
// on the tool's task queue. A recorded outcome becomes the call's result;
// anything else keeps the lost-worker error.
const (
	// lostToolLookupChange guards the lookup's command for histories that
	// recorded a lost single-attempt tool before it existed.
	lostToolLookupChange = "lost-tool-lookup"
	lookupTimeout        = 10 * time.Second
	// lookupStartTimeout bounds the wait for a worker on the tool's queue.
	lookupStartTimeout = time.Minute
)

// lostAttempt says whether err is a timed-out attempt of a single-attempt
// tool, and returns the attempt's activity id.
func (l *loop) lostAttempt(call agent.Content, err error) (string, bool) {
	if err == nil || l.tools[call.Name].MaxAttempts != 1 {
		return "", false
	}
	var timeoutErr *temporal.TimeoutError
	var actErr *temporal.ActivityError
	if !errors.As(err, &timeoutErr) || !errors.As(err, &actErr) {
		return "", false
	}
	return actErr.ActivityID(), true
}

// startLookup asks the tool's host what became of a lost attempt. It
// returns nil when replaying a history recorded before the lookup existed.
func (l *loop) startLookup(ctx workflow.Context, call agent.Content, activityID string) workflow.Future {
	if workflow.GetVersion(ctx, lostToolLookupChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	info := workflow.GetInfo(ctx)
	key := activities.IdempotencyKey(info.WorkflowExecution.ID, call.ID, info.WorkflowExecution.RunID, activityID)
	opts := workflow.ActivityOptions{
		TaskQueue:              l.toolQueue(call.Name),
		ScheduleToStartTimeout: lookupStartTimeout,
		StartToCloseTimeout:    lookupTimeout,
		Summary:                "lookup " + call.Name + " outcome",
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3},
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(l.baseCtx, opts), journal.LookupActivity, journal.LookupInput{Key: key})
}

// lookupResult is the recorded outcome, or the lost-worker error.
func lookupResult(ctx workflow.Context, f workflow.Future, lost error) activities.ExecuteOutput {
	var o journal.Outcome
	if f != nil {
		if err := f.Get(ctx, &o); err == nil && o.State == journal.StateCompleted {
			return activities.ExecuteOutput{Result: o.Result, IsError: o.IsError}
		}
	}
	return activities.ExecuteOutput{Result: agent.ErrorResult(toolFailureText(lost)), IsError: true}
}

// A single-attempt tool whose worker shut down before it finished is not
// run again (activities.ErrShutdown is retryable, but the tool has one
// attempt): the model gets pi's result for a tool call that was
// interrupted, the text pi-ai gives a call left without a result, and the
// details say why.
const interruptedText = "No result provided"

// interruptedAttempt reports whether err is a tool attempt interrupted by
// its worker's shutdown.
func interruptedAttempt(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == activities.ErrShutdown
}

func interruptedOutput() activities.ExecuteOutput {
	r := agent.ErrorResult(interruptedText)
	r.Details = json.RawMessage(`{"interrupted":"the worker running the tool shut down before it finished; it was not run again"}`)
	return activities.ExecuteOutput{Result: r, IsError: true}
}
