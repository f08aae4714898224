package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// Tool execution defaults; a tool's Durability overrides them.
const (
	toolTimeout     = 10 * time.Minute
	toolHeartbeat   = 30 * time.Second
	toolMaxAttempts = 3
	// abortedToolStartTimeout bounds how long a tool started after an
	// abort waits for a worker.
	abortedToolStartTimeout = 30 * time.Second
)

// toolRetryPolicy is how a tool call's activity, built-in or remote, is
// retried: after a second, then twice as long each time up to 30 s.
func toolRetryPolicy(maxAttempts int32, nonRetryable ...string) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        maxAttempts,
		NonRetryableErrorTypes: nonRetryable,
	}
}

// prepare is pi's prepareToolCall for the call at pos among its message's
// tool calls. A call naming a tool the run does not have is answered here,
// one the model turn prepared (prepared.go) from what it found; everything
// else runs the PrepareToolCall local activity.
func (l *loop) prepare(ctx workflow.Context, call agent.Content, pos int) activities.PrepareOutput {
	if why := l.budgetToolCall(); why != "" {
		return activities.PrepareOutput{Immediate: true, IsError: true,
			Result: agent.ErrorResult(agent.BudgetErrorMessage(why))}
	}
	sub := l.subAgentCall(call.Name)
	if _, ok := l.tools[call.Name]; !ok && !sub {
		return activities.PrepareOutput{Immediate: true, IsError: true,
			Result: agent.ErrorResult(fmt.Sprintf("Tool %s not found", call.Name))}
	}
	// Only the run's registry tools are prepared in the turn: a remote
	// or sub-agent tool of the same name as a worker's registry tool is
	// not that tool.
	if _, remote := l.remote[call.Name]; !remote && !sub {
		if out, ok := l.preparedInTurn(call, pos); ok {
			return out
		}
	}
	in := l.prepareInput(call)
	if sub {
		if why := l.fanOutRefusal(call); why != "" {
			return activities.PrepareOutput{Immediate: true, IsError: true, Result: agent.ErrorResult(why)}
		}
		spec := l.cfg.SubAgentToolSpec()
		in.Defined = &spec
	}
	f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.PrepareToolCall, in)
	l.wait(ctx, f)
	if g, ok := l.elsewhere(ctx, f.Get(ctx, nil), a.PrepareToolCall, in); ok {
		f = g
		l.wait(ctx, f)
	}
	var out activities.PrepareOutput
	if err := f.Get(ctx, &out); err != nil {
		return activities.PrepareOutput{Immediate: true, IsError: true, Result: agent.ErrorResult(failureText(err))}
	}
	return l.remoteBefore(ctx, call, out)
}

// startExecute schedules the ExecuteToolCall activity for a prepared call,
// at position pos among its message's tool calls.
func (l *loop) startExecute(call agent.Content, pos int, args map[string]any) workflow.Future {
	if t, ok := l.remote[call.Name]; ok {
		return l.startRemote(t, call, pos, args)
	}
	if l.subAgentCall(call.Name) {
		return l.startSubAgent(call, pos, args)
	}
	info := l.tools[call.Name]
	opts := workflow.ActivityOptions{
		TaskQueue:           l.toolQueue(call.Name),
		StartToCloseTimeout: toolTimeout,
		HeartbeatTimeout:    toolHeartbeat,
		WaitForCancellation: true,
		Summary:             callSummary(call.Name, args),
		RetryPolicy:         toolRetryPolicy(toolMaxAttempts, activities.ErrUnknownTool),
	}
	if info.Timeout > 0 {
		opts.StartToCloseTimeout = info.Timeout
	}
	if info.MaxAttempts > 0 {
		opts.RetryPolicy.MaximumAttempts = int32(info.MaxAttempts)
	}
	if info.HeartbeatTimeout > 0 {
		opts.HeartbeatTimeout = info.HeartbeatTimeout
	}
	if l.onHostQueue(call.Name) && l.hostStartOn() {
		// The host may be gone for good (hosts.go).
		opts.ScheduleToStartTimeout = l.callStartTimeout()
	} else if l.aborted {
		// After an abort nothing can cancel this activity, so it must not
		// wait forever for a worker that never comes.
		opts.ScheduleToStartTimeout = abortedToolStartTimeout
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(l.activityCtx(), opts), a.ExecuteToolCall,
		activities.ExecuteInput{
			ToolCallID: call.ID,
			Position:   pos,
			ToolName:   call.Name,
			Args:       args,
			Workspace:  l.cfg.Workspace,
			Aborted:    l.aborted,
			AgentRun:   l.runNumber,
			Sandbox:    l.cfg.Sandbox,
			StoreID:    l.storeID,
			// A call with siblings running beside it signals its partial
			// results as they come, so that the batch can put them in
			// pi's order among the siblings' events within its window.
			DeferUpdates: l.batch == nil || len(l.batch.chains) == 1,
		})
}

// recordUpdates records the partial results a call returned with its
// result (activities/deferred.go), before its end, as their signals would
// have been.
func (l *loop) recordUpdates(out *activities.ExecuteOutput) {
	for _, u := range out.Updates {
		l.toolUpdate(u)
	}
	out.Updates = nil
}

// executeResult reads an execute future. ok is false when the activity was
// cancelled before it ran; the caller then runs it again with the abort in
// its input, because pi still runs a tool after an abort, with an aborted
// signal, and lets the tool decide.
func executeResult(ctx workflow.Context, f workflow.Future) (out activities.ExecuteOutput, ok bool) {
	err := f.Get(ctx, &out)
	if err == nil {
		return out, true
	}
	var cancelled *temporal.CanceledError
	if errors.As(err, &cancelled) {
		return out, false
	}
	if interruptedAttempt(err) {
		return interruptedOutput(), true
	}
	return activities.ExecuteOutput{Result: agent.ErrorResult(toolFailureText(err)), IsError: true}, true
}

// toolQueue is the task queue of a tool's ExecuteToolCall (and of the
// lookup of a lost attempt): the run's toolTaskQueue when it names one;
// else, for a tool that touches the workspace, the queue of the host that
// holds it (found when the run was resolved, kept across continue-as-new);
// else the run's own task queue.
func (l *loop) toolQueue(name string) string {
	if l.cfg.ToolTaskQueue != "" {
		return l.cfg.ToolTaskQueue
	}
	if l.tools[name].Workspace {
		return l.hostQueue
	}
	return ""
}

// execute runs a prepared call to its result.
func (l *loop) execute(ctx workflow.Context, call agent.Content, pos int, args map[string]any) activities.ExecuteOutput {
	var drift driftWait
	for {
		l.rehost(ctx)
		f := l.startExecute(call, pos, args)
		l.wait(ctx, f)
		if out, gone := l.hostUnavailable(call.Name, f.Get(ctx, nil)); gone {
			return out
		}
		if l.driftAgain(ctx, &drift, f.Get(ctx, nil), true) {
			continue
		}
		if id, lost := l.lostAttempt(call, f.Get(ctx, nil)); lost {
			lf := l.startLookup(ctx, call, id)
			if lf != nil {
				l.wait(ctx, lf)
			}
			l.lookupHostGone(ctx, call.Name, lf)
			return lookupResult(ctx, lf, f.Get(ctx, nil))
		}
		if out, ok := executeResult(ctx, f); ok {
			l.recordUpdates(&out)
			return out
		}
	}
}

// finalize is pi's finalizeExecutedToolCall: the after hooks, when the run
// names any, in the FinalizeToolCall local activity.
func (l *loop) finalize(ctx workflow.Context, call agent.Content, args map[string]any, result agent.ToolResult, isError bool) finalized {
	if len(l.cfg.AfterToolCall) == 0 {
		return finalized{call: call, result: result, isError: isError}
	}
	if agent.HasRemoteHook(l.cfg.AfterToolCall) {
		return l.finalizeStages(ctx, call, args, result, isError, func(f workflow.Future) { l.wait(ctx, f) })
	}
	in := l.finalizeInput(call, args, result, isError)
	f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.FinalizeToolCall, in)
	l.wait(ctx, f)
	if g, ok := l.elsewhere(ctx, f.Get(ctx, nil), a.FinalizeToolCall, in); ok {
		f = g
		l.wait(ctx, f)
	}
	return finalizeResult(ctx, f, call)
}

func (l *loop) finalizeInput(call agent.Content, args map[string]any, result agent.ToolResult, isError bool) activities.FinalizeInput {
	return activities.FinalizeInput{
		ToolCall:      call,
		Args:          args,
		Result:        result,
		IsError:       isError,
		AfterToolCall: agent.GoHookNames(l.cfg.AfterToolCall),
		Aborted:       l.aborted,
		StoreID:       l.storeID,
	}
}

func finalizeResult(ctx workflow.Context, f workflow.Future, call agent.Content) finalized {
	var out activities.FinalizeOutput
	if err := f.Get(ctx, &out); err != nil {
		return finalized{call: call, result: agent.ErrorResult(failureText(err)), isError: true}
	}
	return finalized{call: call, result: out.Result, isError: out.IsError}
}

// toolFailureText explains a tool activity that failed for good.
func toolFailureText(err error) string {
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) {
		return "Tool execution failed: " + timeoutText(timeoutErr)
	}
	return failureText(err)
}

// callSummary is the one line the Web UI shows for a tool activity, such as
// `bash: npm test`.
func callSummary(name string, args map[string]any) string {
	detail := ""
	for _, key := range []string{"command", "path", "pattern"} {
		if v, ok := args[key].(string); ok && v != "" {
			detail = v
			break
		}
	}
	if detail == "" && len(args) > 0 {
		b, _ := json.Marshal(args)
		detail = string(b)
	}
	if detail == "" {
		return name
	}
	const max = 80
	if r := []rune(detail); len(r) > max {
		detail = string(r[:max-1]) + "…"
	}
	return name + ": " + detail
}

// timeoutText says which timeout fired, in words: a tool call's here, a
// model call's in turn.go.
func timeoutText(err *temporal.TimeoutError) string {
	switch err.TimeoutType() {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "the worker running it stopped responding (heartbeat timeout)"
	case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return "timed out (start-to-close timeout)"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "no worker picked it up in time (schedule-to-start timeout)"
	default:
		return fmt.Sprintf("timed out (%v)", err.TimeoutType())
	}
}
