package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Remote tools (agent.RemoteTool): tools served by an activity on a task
// queue of their own, by a worker in any SDK language. A call of one goes
// through the same stages as a built-in tool's (prepare with the run's
// schema, approval, before hooks, finalize with the after hooks, pi's event
// order in a parallel batch); only its execute stage is the tool's own
// activity, scheduled by its activity type on its task queue, with
// agentapi.RemoteToolInput, and returning agentapi.RemoteToolResult. Runs
// without remote tools schedule exactly what they did before, so no
// history changes its commands and nothing here needs a version.

// setRemoteTools makes the run's remote tools (l.cfg.RemoteTools) the
// ones its calls find, replacing those of an earlier run of a session.
func (l *loop) setRemoteTools() {
	for _, name := range slices.Sorted(maps.Keys(l.remote)) {
		delete(l.tools, name)
	}
	l.remote = map[string]agent.RemoteTool{}
	for _, t := range l.cfg.RemoteTools {
		l.remote[t.Name] = t
		l.tools[t.Name] = activities.ToolInfo{Name: t.Name, ExecutionMode: t.ExecutionMode, Retry: string(t.Replay)}
	}
}

// remoteNames are the names of the run's remote tools, in order.
func (l *loop) remoteNames() []string {
	var names []string
	for _, t := range l.cfg.RemoteTools {
		names = append(names, t.Name)
	}
	return names
}

// remoteSchemas describe the run's remote tools to the model.
func (l *loop) remoteSchemas() []activities.ToolSchema {
	var out []activities.ToolSchema
	for _, t := range l.cfg.RemoteTools {
		out = append(out, activities.ToolSchema{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// prepareInput is the PrepareToolCall input of a call: for a remote tool
// it carries the tool's schema, which no worker's registry has.
func (l *loop) prepareInput(call agent.Content) activities.PrepareInput {
	in := activities.PrepareInput{ToolCall: call, BeforeToolCall: leadingGoHooks(l.cfg.BeforeToolCall), Aborted: l.aborted}
	if t, ok := l.remote[call.Name]; ok {
		in.Remote, in.Parameters = true, t.Parameters
	}
	return in
}

// startRemote schedules a remote tool's activity and returns a future of
// its ExecuteOutput, as startExecute's for a built-in tool.
func (l *loop) startRemote(t agent.RemoteTool, call agent.Content, pos int, args map[string]any) workflow.Future {
	startToClose, heartbeat, scheduleToStart := t.Timeouts()
	attempts := int32(1)
	if t.Replay == agent.ReplaySafe {
		attempts = agent.RemoteSafeAttempts
	}
	opts := workflow.ActivityOptions{
		TaskQueue:              t.TaskQueue,
		StartToCloseTimeout:    startToClose,
		HeartbeatTimeout:       heartbeat,
		ScheduleToStartTimeout: scheduleToStart,
		WaitForCancellation:    true,
		Summary:                callSummary(call.Name, args),
		RetryPolicy:            toolRetryPolicy(attempts),
	}
	if l.aborted && (scheduleToStart == 0 || scheduleToStart > abortedToolStartTimeout) {
		// After an abort nothing can cancel this activity, so it must not
		// wait forever for a worker that never comes.
		opts.ScheduleToStartTimeout = abortedToolStartTimeout
	}
	if args == nil {
		args = map[string]any{}
	}
	info := workflow.GetInfo(l.baseCtx)
	in := agentapi.RemoteToolInput{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Args:       args,
		Position:   pos,
		WorkflowID: info.WorkflowExecution.ID,
		RunID:      info.WorkflowExecution.RunID,
		Aborted:    l.aborted,
	}
	af := workflow.ExecuteActivity(workflow.WithActivityOptions(l.activityCtx(), opts), t.ActivityType, in)
	started := workflow.Now(l.baseCtx)
	f, set := workflow.NewFuture(l.baseCtx)
	workflow.Go(l.baseCtx, func(ctx workflow.Context) {
		var r agentapi.RemoteToolResult
		err := af.Get(ctx, &r)
		// How long the call took, as the batch orders ends by it: from
		// its schedule, since the tool's worker reports no duration.
		took := workflow.Now(ctx).Sub(started)
		out, err := l.remoteOutput(ctx, t, r, err)
		out.Duration = took
		if r.DurationMs != nil && *r.DurationMs >= 0 && err == nil {
			out.Duration = time.Duration(*r.DurationMs * float64(time.Millisecond))
		}
		set.Set(out, err)
	})
	return f
}

// remoteOutput turns a remote activity's result or error into the call's
// ExecuteOutput, or the error execute handles as a built-in tool's.
//
//   - A result: pi's, its large content stored (history keeps stubs after
//     the activity's own completion event, as for a built-in tool).
//   - A lost attempt (heartbeat or start-to-close timeout) of a tool whose
//     replay class is never: pi's "No result provided" error result, its
//     details saying why; the call is not run again.
//   - A cancelled attempt (the run's abort) of such a tool: an error
//     result; a safe one runs again with the abort in its input, as a
//     built-in tool does.
//   - Anything else (a thrown error, after the safe class's retries; no
//     worker in the schedule-to-start timeout): the caller's error result.
func (l *loop) remoteOutput(ctx workflow.Context, t agent.RemoteTool, r agentapi.RemoteToolResult, err error) (activities.ExecuteOutput, error) {
	if err != nil {
		if t.Replay != agent.ReplayNever {
			return activities.ExecuteOutput{}, err
		}
		var timeoutErr *temporal.TimeoutError
		if errors.As(err, &timeoutErr) && timeoutErr.TimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
			res := agent.ErrorResult(interruptedText)
			why := fmt.Sprintf("the worker running remote tool %s on task queue %s was lost: %s; its replay class is never, so it was not run again",
				t.Name, t.TaskQueue, timeoutText(timeoutErr))
			res.Details, _ = json.Marshal(map[string]string{"lost": why})
			return activities.ExecuteOutput{Result: res, IsError: true}, nil
		}
		var cancelled *temporal.CanceledError
		if errors.As(err, &cancelled) {
			return activities.ExecuteOutput{Result: agent.ErrorResult(fmt.Sprintf(
				"Tool %s was cancelled by the run's abort; its replay class is never, so it was not run again", t.Name)), IsError: true}, nil
		}
		return activities.ExecuteOutput{}, err
	}
	for _, c := range r.Content {
		if c.Type != agent.ContentText && c.Type != agent.ContentImage {
			return activities.ExecuteOutput{Result: agent.ErrorResult(fmt.Sprintf(
				"Tool %s returned a content block of type %q: a tool result holds text and image blocks", t.Name, c.Type)), IsError: true}, nil
		}
	}
	msg := agent.Message{Role: agent.RoleToolResult, Content: r.Content, Details: r.Details}
	if stored, err := l.storeInputs(ctx, []agent.Message{msg}, false); err == nil {
		msg = stored[0]
	} else {
		workflow.GetLogger(ctx).Error("A remote tool's large result was not stored; it stays inline", "Tool", t.Name, "Error", err)
	}
	res := agent.ToolResult{Content: msg.Content, Details: agent.DetailsOrEmpty(msg.Details), Terminate: r.Terminate}
	if res.Content == nil {
		res.Content = []agent.Content{}
	}
	return activities.ExecuteOutput{Result: res, IsError: r.IsError}, nil
}

// checkRemoteTools is a session's check of remote tools set for its next
// run.
func checkRemoteTools(r agentapi.RemoteToolsRequest, tools []string) error {
	if err := r.FieldError(); err != nil {
		return err
	}
	if r.RemoteTools == nil {
		return errors.New(`want {"remoteTools": [{"name": ..., "taskQueue": ..., "activityType": ..., "replay": "never"}]}; [] removes them`)
	}
	return agent.CheckRemoteTools(*r.RemoteTools, tools, agent.BuiltinToolNames)
}
