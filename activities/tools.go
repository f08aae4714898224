package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/tools"
)

// ErrToolExecution is the ApplicationError type of a tool fault that
// Temporal retries under the tool's policy.
const ErrToolExecution = "ToolFault"

// PrepareToolCall runs pi's prepareToolCall for a tool the run knows:
// prepareArguments, validation with coercion, then the before hooks in order.
// Every failure is an immediate error result, never an activity error,
// except this worker lacking the tool or a hook (ConfigDrift).
func (a *Activities) PrepareToolCall(ctx context.Context, in PrepareInput) (PrepareOutput, error) {
	// A remote tool and the sub-agent tool are in no registry: the run
	// gives their schemas, and they have no prepareArguments.
	schema, preparer := in.Parameters, tools.ArgumentPreparer(nil)
	switch {
	case in.Defined != nil:
		// The sub-agent tool: the workflow executes it.
		schema = in.Defined.Parameters
	case !in.Remote:
		tool, ok := a.Tools.Get(in.ToolCall.Name)
		if !ok {
			// The workflow answers a call of a tool the run does not have
			// (Tool X not found) and asks this only for the run's own tools:
			// this worker lacks one another worker resolved.
			return PrepareOutput{}, a.lacks("tool %q", in.ToolCall.Name)
		}
		schema = tool.Definition().Parameters
		preparer, _ = tool.(tools.ArgumentPreparer)
	}
	ctx, cancel := abortable(ctx, in.Aborted)
	defer cancel()

	validated, err := validateCall(in.ToolCall, schema, preparer)
	if err != nil {
		return immediate(err.Error()), nil
	}
	return a.beforeHooks(ctx, in, validated)
}

// validateCall is the part of pi's prepareToolCall before the hooks:
// prepareArguments (preparer, nil for none), then validation with coercion
// against schema. It depends on nothing but the call and its tool, so a
// model turn may run it for its answer's calls (prepared.go).
func validateCall(call agent.Content, schema json.RawMessage, preparer tools.ArgumentPreparer) (map[string]any, error) {
	if len(call.RawArguments) > 0 {
		return validateNonObject(call, schema)
	}
	args := call.Arguments
	if preparer != nil {
		prepared, err := callSafely(func() (map[string]any, error) { return preparer.PrepareArguments(cloneArgs(args)) })
		if err != nil {
			return nil, err
		}
		args = prepared
	}
	return tools.ValidateArguments(call.Name, schema, args)
}

// beforeHooks runs the run's beforeToolCall hooks in order on validated
// arguments.
func (a *Activities) beforeHooks(ctx context.Context, in PrepareInput, validated map[string]any) (PrepareOutput, error) {
	run := runOf(ctx)
	for _, name := range in.BeforeToolCall {
		hook, ok := a.Hooks.Before(name)
		if !ok {
			return PrepareOutput{}, a.lacks("beforeToolCall hook %q", name)
		}
		res, err := callSafely(func() (*hooks.BeforeResult, error) {
			return hook(ctx, hooks.BeforeContext{Run: run, ToolCall: in.ToolCall, Args: validated})
		})
		if err != nil {
			return immediate(err.Error()), nil
		}
		if res != nil && res.Block {
			reason := res.Reason
			if reason == "" {
				reason = "Tool execution was blocked"
			}
			return immediate(reason), nil
		}
	}
	return PrepareOutput{Args: validated}, nil
}

// RunBeforeHooks runs Go before hooks that come after a remote one in the
// run's list (workflows/remotehooks.go) on the arguments prepare
// validated.
func (a *Activities) RunBeforeHooks(ctx context.Context, in BeforeHooksInput) (PrepareOutput, error) {
	ctx, cancel := abortable(ctx, in.Aborted)
	defer cancel()
	if in.Args == nil {
		in.Args = map[string]any{}
	}
	return a.beforeHooks(ctx, PrepareInput{ToolCall: in.ToolCall, BeforeToolCall: in.BeforeToolCall, Aborted: in.Aborted}, in.Args)
}

// validateNonObject validates arguments that are valid JSON but not an
// object as pi does: with the value as received, so a tool whose schema
// wants an object fails with pi's "Validation failed" text even when it
// requires no field. pi would give a tool whose schema accepts such a
// value that value, and would pass it to prepareArguments first; a tool
// here takes an object (tools.Tool), so such a call ends with an error
// that says so, and prepareArguments is not called.
func validateNonObject(call agent.Content, schema json.RawMessage) (map[string]any, error) {
	var v any
	if err := json.Unmarshal(call.RawArguments, &v); err != nil {
		return nil, fmt.Errorf("tool %q: arguments: %w", call.Name, err)
	}
	validated, err := tools.ValidateValue(call.Name, schema, v)
	if err != nil {
		return nil, err
	}
	if m, ok := validated.(map[string]any); ok {
		return m, nil
	}
	return nil, fmt.Errorf("tool %q takes its arguments as a JSON object, got %s", call.Name, call.RawArguments)
}

func immediate(text string) PrepareOutput {
	return PrepareOutput{Immediate: true, Result: capResult(agent.ErrorResult(text)), IsError: true}
}

// ExecuteToolCall runs the tool. Its partial results reach watchers live
// in the heartbeat details (toolprogress.go) and go to the workflow as
// signals, coalesced (signals.go), all sent before this activity completes
// so that they precede its result in history; or, while nobody watches,
// with its result (deferred.go). A tool error is an error
// result (pi's throw); only a tools.Fault fails the activity, for Temporal
// to retry.
func (a *Activities) ExecuteToolCall(ctx context.Context, in ExecuteInput) (ExecuteOutput, error) {
	tool, ok := a.Tools.Get(in.ToolName)
	if !ok {
		// Nothing ran: another worker may run the call (drift).
		return ExecuteOutput{}, a.lacks("tool %q", in.ToolName)
	}
	if err := a.checkStore(ctx, in.StoreID); err != nil {
		return ExecuteOutput{}, err
	}
	info := activity.GetInfo(ctx)
	// A worker that shuts down interrupts the tool after its grace.
	workCtx, stopWork := a.interruptible(ctx)
	defer stopWork()
	// The heartbeat carries the tool's latest partial result to watchers;
	// an abort, read from the run's history (cancelfeed.go) or a
	// heartbeat's answer, cancels liveCtx.
	liveCtx, progress := a.startToolHeartbeat(workCtx, in.ToolCallID)
	defer progress.close()
	toolCtx, cancel := abortable(liveCtx, in.Aborted)
	defer cancel()
	runKey := fmt.Sprintf("%s/%s/%d", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, in.AgentRun)
	defer a.tools.add(runKey, cancel)()
	if in.Args == nil {
		in.Args = map[string]any{}
	}

	workspace := in.Workspace
	if workspace == "" {
		workspace = a.DefaultWorkspace
	}
	start := time.Now()
	var reported *time.Duration
	updates := newUpdateSender(a.Client, a.partialStore(), info, in.ToolCallID, in.Position, start, activity.GetLogger(ctx))
	updates.deferOK, updates.watched = in.DeferUpdates, progress.watch.now
	call := tools.Call{
		ID:             in.ToolCallID,
		Name:           in.ToolName,
		Args:           in.Args,
		Workspace:      workspace,
		Sandbox:        in.Sandbox,
		IdempotencyKey: IdempotencyKey(info.WorkflowExecution.ID, in.ToolCallID, info.WorkflowExecution.RunID, info.ActivityID),
		Scope:          info.Namespace + "/" + info.WorkflowExecution.ID,
		Update:         func(r agent.ToolResult) { progress.update(r); updates.send(r) },
		UpdateAt:       func(r agent.ToolResult, at time.Duration) { progress.update(r); updates.sendAt(r, at) },
		Run:            runControl{a: a, info: info, callID: in.ToolCallID, position: in.Position, start: start, cancelTools: func() { a.tools.cancel(runKey) }},
		ReportDuration: func(d time.Duration) { reported = &d },
	}
	result, err := callSafely(func() (agent.ToolResult, error) { return tool.Execute(toolCtx, call) })
	took := time.Since(start)
	if reported != nil {
		took = *reported
	}
	updates.close(ctx)
	kept := updates.takeKept()
	if err != nil && (tools.IsInterrupted(err) || interrupted(workCtx) || tools.IsFault(err)) {
		// No result carries them: they go as the signals they were.
		for _, k := range kept {
			updates.signal(k)
		}
		kept = nil
	}
	if err != nil {
		if tools.IsInterrupted(err) || interrupted(workCtx) {
			// Not an outcome: another worker runs a retry-safe tool again
			// at once; the workflow reports a single-attempt tool
			// interrupted.
			return ExecuteOutput{}, shutdownError(in.ToolName)
		}
		if tools.IsFault(err) {
			return ExecuteOutput{}, temporal.NewApplicationError(capText(err.Error()), ErrToolExecution)
		}
		return ExecuteOutput{Result: capResult(agent.ErrorResult(err.Error())), IsError: true, Duration: took, Updates: kept}, nil
	}
	// Large output goes to the content store; history gets its stub.
	stored, err := a.offloadResult(ctx, capResult(result))
	if err != nil {
		for _, k := range kept {
			updates.signal(k)
		}
		return ExecuteOutput{}, err
	}
	return ExecuteOutput{Result: stored, Duration: took, Updates: kept}, nil
}

// IdempotencyKey names one tool execution across its retries: the workflow
// and tool call ids, then the run and activity ids, because a model may
// reuse a tool call id and a session continues as new under one workflow
// id. The workflow builds the same key to ask a tool's host what became of
// a lost execution.
func IdempotencyKey(workflowID, callID, runID, activityID string) string {
	return workflowID + "/" + callID + "/" + runID + "/" + activityID
}

// FinalizeToolCall runs the after hooks in order, each seeing the result of
// the one before, with pi's field-by-field override. A failing hook turns the
// result into an error result with its message.
func (a *Activities) FinalizeToolCall(ctx context.Context, in FinalizeInput) (FinalizeOutput, error) {
	if err := a.checkStore(ctx, in.StoreID); err != nil {
		return FinalizeOutput{}, err
	}
	result, err := a.resolveResult(ctx, in.Result)
	if err != nil {
		return FinalizeOutput{}, err
	}
	isError := in.IsError
	hookCtx, cancel := abortable(ctx, in.Aborted)
	defer cancel()
	run := runOf(ctx)
	for _, name := range in.AfterToolCall {
		hook, ok := a.Hooks.After(name)
		if !ok {
			return FinalizeOutput{}, a.lacks("afterToolCall hook %q", name)
		}
		override, err := callSafely(func() (*hooks.AfterResult, error) {
			return hook(hookCtx, hooks.AfterContext{Run: run, ToolCall: in.ToolCall, Args: in.Args, Result: result, IsError: isError})
		})
		if err != nil {
			result, isError = capResult(agent.ErrorResult(err.Error())), true
			continue
		}
		result, isError = hooks.Apply(result, isError, override)
	}
	stored, err := a.offloadResult(ctx, capResult(result))
	if err != nil {
		return FinalizeOutput{}, err
	}
	return FinalizeOutput{Result: stored, IsError: isError}, nil
}

// abortable returns ctx, or a cancelled child of it when the run was aborted
// before this stage began: tools and hooks then see what pi's see, an aborted
// signal.
func abortable(ctx context.Context, aborted bool) (context.Context, context.CancelFunc) {
	child, cancel := context.WithCancel(ctx)
	if aborted {
		cancel()
	}
	return child, cancel
}

func runOf(ctx context.Context) hooks.Run {
	info := activity.GetInfo(ctx)
	return hooks.Run{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}
}

// callSafely turns a panic in tool or hook code into an error, so a buggy
// tool gives the model an error result instead of failing the attempt.
func callSafely[T any](f func() (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %s", capText(fmt.Sprint(r)))
		}
	}()
	return f()
}

func cloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	maps.Copy(out, m)
	return out
}
