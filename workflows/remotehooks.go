package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/hooks"
)

// Remote hooks: beforeToolCall and afterToolCall entries that name an
// activity on a task queue of the user's own or a webhook. Each runs as an
// activity of its own, scheduled by the workflow in the hook list's order,
// between the Go hooks (which stay in the PrepareToolCall and
// FinalizeToolCall local activities, or in RunBeforeHooks after a remote
// one): its attempts, timeout and answer are in history and visible in
// the Web UI, and the event order is pi's, because every hook of a call
// still runs after the call's tool_execution_start and before its
// execution (before hooks) or its tool_execution_end (after hooks). A
// remote hook that does not answer within its timeout (all retries
// included) is a hook that threw: a before hook blocks the call (fails
// closed), an after hook turns the result into an error result; an answer
// after the timeout is never read.

// remoteHooksChange marks the first remote hook a run calls. No history
// recorded before remote hooks can name one (its input would not have
// decoded), so the marker guards nothing old; it records which code path
// a run took.
const remoteHooksChange = "remote-hooks"

// Retries of a remote hook within its timeout.
const (
	hookFirstRetry = 500 * time.Millisecond
	hookMaxRetry   = 5 * time.Second
)

// leadingGoHooks are the names of the Go hooks before the first remote one:
// the hooks PrepareToolCall runs, all of them for a run without remote
// hooks.
func leadingGoHooks(hs []agent.Hook) []string {
	var names []string
	for _, h := range hs {
		if !h.IsGo() {
			break
		}
		names = append(names, h.Name)
	}
	return names
}

// remoteHooksOn records the remote hooks' marker (remoteHooksChange).
func remoteHooksOn(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, remoteHooksChange, workflow.DefaultVersion, 1) == 1
}

// remoteBefore runs the before hooks from the first remote one on, in
// order, after PrepareToolCall ran those before it. The first block ends
// the call.
func (l *loop) remoteBefore(ctx workflow.Context, call agent.Content, out activities.PrepareOutput) activities.PrepareOutput {
	rest := l.cfg.BeforeToolCall[len(leadingGoHooks(l.cfg.BeforeToolCall)):]
	if out.Immediate || len(rest) == 0 {
		return out
	}
	if !remoteHooksOn(ctx) {
		return blocked("this run's remote hooks cannot run on the build that started it")
	}
	for i := 0; i < len(rest); {
		if !rest[i].IsGo() {
			out = l.callBefore(ctx, call, out.Args, rest[i])
			i++
		} else {
			var names []string
			for ; i < len(rest) && rest[i].IsGo(); i++ {
				names = append(names, rest[i].Name)
			}
			out = l.goBefore(ctx, call, out.Args, names)
		}
		if out.Immediate {
			return out
		}
	}
	return out
}

// goBefore runs Go before hooks in the RunBeforeHooks local activity.
func (l *loop) goBefore(ctx workflow.Context, call agent.Content, args map[string]any, names []string) activities.PrepareOutput {
	in := activities.BeforeHooksInput{ToolCall: call, Args: args, BeforeToolCall: names, Aborted: l.aborted}
	f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.RunBeforeHooks, in)
	l.wait(ctx, f)
	if g, ok := l.elsewhere(ctx, f.Get(ctx, nil), a.RunBeforeHooks, in); ok {
		f = g
		l.wait(ctx, f)
	}
	var out activities.PrepareOutput
	if err := f.Get(ctx, &out); err != nil {
		return blocked(failureText(err))
	}
	return out
}

// callBefore runs one remote before hook.
func (l *loop) callBefore(ctx workflow.Context, call agent.Content, args map[string]any, h agent.Hook) activities.PrepareOutput {
	req := activities.BeforeHookRequest{Hook: activities.HookBefore, Aborted: l.aborted,
		BeforeContext: hooks.BeforeContext{Run: l.hookRun(ctx), ToolCall: call, Args: args}}
	var res *hooks.BeforeResult
	var err error
	if h.Webhook != nil {
		f := l.startHook(h, call, a.CallWebhook, activities.WebhookInput{Hook: *h.Webhook, Before: &req})
		l.wait(ctx, f)
		var out activities.WebhookOutput
		err = f.Get(ctx, &out)
		res = out.Before
	} else {
		f := l.startHook(h, call, h.Activity.ActivityType, req)
		l.wait(ctx, f)
		var raw json.RawMessage
		if err = f.Get(ctx, &raw); err == nil {
			res, err = activities.DecodeBeforeResult(raw)
		}
	}
	if err != nil {
		return blocked(hookFailureText(activities.HookBefore, h, err))
	}
	if res != nil && res.Block {
		reason := res.Reason
		if reason == "" {
			reason = "Tool execution was blocked"
		}
		return blocked(reason)
	}
	return activities.PrepareOutput{Args: args}
}

// startHook schedules a remote hook's activity: a webhook's CallWebhook on
// the run's own task queue, an activity hook on its queue. Abort does not
// cancel it: like a Go hook, it decides, and its timeout bounds it.
func (l *loop) startHook(h agent.Hook, call agent.Content, activity, in any) workflow.Future {
	timeout := h.TimeoutOrDefault()
	opts := workflow.ActivityOptions{
		ScheduleToCloseTimeout: timeout,
		StartToCloseTimeout:    timeout,
		Summary:                fmt.Sprintf("%s for %s", h, call.Name),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        hookFirstRetry,
			BackoffCoefficient:     2,
			MaximumInterval:        hookMaxRetry,
			NonRetryableErrorTypes: []string{activities.ErrHookFailed},
		},
	}
	if h.Activity != nil {
		opts.TaskQueue = h.Activity.TaskQueue
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(l.baseCtx, opts), activity, in)
}

// finalizeStages is finalize for a run whose after hooks include a remote
// one: each run of Go hooks in a FinalizeToolCall local activity, each
// remote hook in an activity of its own, in order, each seeing the result
// of the one before. wait waits for a stage (l.wait in the loop's own
// coroutine; a plain Get in a parallel chain's).
func (l *loop) finalizeStages(ctx workflow.Context, call agent.Content, args map[string]any, result agent.ToolResult, isError bool, wait func(workflow.Future)) finalized {
	fin := finalized{call: call, result: result, isError: isError}
	if !remoteHooksOn(ctx) {
		fin.result, fin.isError = agent.ErrorResult("this run's remote hooks cannot run on the build that started it"), true
		return fin
	}
	hs := l.cfg.AfterToolCall
	for i := 0; i < len(hs); {
		if !hs[i].IsGo() {
			fin = l.callAfter(ctx, fin, args, hs[i], wait)
			i++
			continue
		}
		var names []string
		for ; i < len(hs) && hs[i].IsGo(); i++ {
			names = append(names, hs[i].Name)
		}
		in := l.finalizeInput(call, args, fin.result, fin.isError)
		in.AfterToolCall = names
		f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.FinalizeToolCall, in)
		wait(f)
		if g, ok := l.elsewhere(ctx, f.Get(ctx, nil), a.FinalizeToolCall, in); ok {
			f = g
			wait(f)
		}
		fin = finalizeResult(ctx, f, call)
	}
	return fin
}

// callAfter runs one remote after hook on the result so far.
func (l *loop) callAfter(ctx workflow.Context, fin finalized, args map[string]any, h agent.Hook, wait func(workflow.Future)) finalized {
	req := activities.AfterHookRequest{Hook: activities.HookAfter, Aborted: l.aborted,
		AfterContext: hooks.AfterContext{Run: l.hookRun(ctx), ToolCall: fin.call, Args: args, Result: fin.result, IsError: fin.isError}}
	if h.Webhook != nil {
		f := l.startHook(h, fin.call, a.CallWebhook, activities.WebhookInput{Hook: *h.Webhook, After: &req, StoreID: l.storeID})
		wait(f)
		var out activities.WebhookOutput
		if err := f.Get(ctx, &out); err != nil {
			return thrownAfter(fin, hookFailureText(activities.HookAfter, h, err))
		}
		if out.Result != nil {
			fin.result, fin.isError = *out.Result, out.IsError
		}
		return fin
	}
	f := l.startHook(h, fin.call, h.Activity.ActivityType, req)
	wait(f)
	var raw json.RawMessage
	err := f.Get(ctx, &raw)
	var override *hooks.AfterResult
	if err == nil {
		override, err = activities.DecodeAfterResult(raw)
	}
	if err != nil {
		return thrownAfter(fin, hookFailureText(activities.HookAfter, h, err))
	}
	fin.result, fin.isError = hooks.Apply(fin.result, fin.isError, override)
	return fin
}

// finalizeAsync runs finalizeStages in a coroutine of its own, for a chain
// of a parallel batch, whose loop waits for its future among its
// siblings'. The future's value is an activities.FinalizeOutput, as the
// FinalizeToolCall local activity's.
func (l *loop) finalizeAsync(c *chain, result agent.ToolResult, isError bool) workflow.Future {
	f, set := workflow.NewFuture(l.baseCtx)
	workflow.Go(l.baseCtx, func(gctx workflow.Context) {
		fin := l.finalizeStages(gctx, c.call, c.args, result, isError, func(f workflow.Future) { _ = f.Get(gctx, nil) })
		set.Set(activities.FinalizeOutput{Result: fin.result, IsError: fin.isError}, nil)
	})
	return f
}

// hookRun names the run for a remote hook, as hooks.Run does for Go ones.
func (l *loop) hookRun(ctx workflow.Context) hooks.Run {
	info := workflow.GetInfo(ctx)
	return hooks.Run{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}
}

func blocked(text string) activities.PrepareOutput {
	return activities.PrepareOutput{Immediate: true, IsError: true, Result: agent.ErrorResult(text)}
}

// thrownAfter is pi's afterToolCall that throws: an error result with the
// hook's message.
func thrownAfter(fin finalized, text string) finalized {
	fin.result, fin.isError = agent.ErrorResult(text), true
	return fin
}

// hookFailureText is the message of a remote hook that failed. A hook
// that gave no answer within its timeout (it timed out, or its retries ran
// out of time) says so and names the hook; a hook that failed for good
// answers with its own message, as pi's throw does.
func hookFailureText(event string, h agent.Hook, err error) string {
	var timeoutErr *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	hasApp := errors.As(err, &appErr)
	if !errors.As(err, &timeoutErr) && (!hasApp || appErr.NonRetryable() || appErr.Type() == activities.ErrHookFailed) {
		return failureText(err)
	}
	text := fmt.Sprintf("%s hook %s did not answer within %v", event, h, h.TimeoutOrDefault())
	if hasApp {
		text += " (last error: " + appErr.Message() + ")"
	}
	if event == activities.HookBefore {
		text += "; the tool call is blocked"
	}
	return text
}
