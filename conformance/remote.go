package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/hooks"
)

// RemoteActivityType is the activity type the scenario's remote tools are
// served under.
const RemoteActivityType = "ScenarioRemoteTool"

// defaultRemoteQueue is the task queue Input names for remote tools; Run
// replaces it with a queue of the run's own.
const defaultRemoteQueue = "conformance-remote"

// The activity types the scenario's remote hooks are served under, when
// the scenario has remoteHooks.
const (
	RemoteBeforeHookType = "ScenarioBeforeHook"
	RemoteAfterHookType  = "ScenarioAfterHook"
)

// remoteHookTimeout bounds a remote hook's answer. A hook that gives none
// in time blocks its call with a text pi's trace does not have, so the
// bound only has to be far above a hook's trip on a loaded machine.
const remoteHookTimeout = "1m"

// RemoteWorker starts a worker serving a scenario's remote tools (and
// remote hooks, with remoteHooks) on queue, as a worker in another SDK
// language would: it knows only the contract, nothing of the loop's
// worker. It returns a function that stops it.
type RemoteWorker func(c client.Client, s Scenario, queue string) (stop func(), err error)

// usesRemoteWorker reports whether the scenario needs a remote worker.
func usesRemoteWorker(s Scenario) bool {
	for _, t := range s.Tools {
		if t.Remote {
			return true
		}
	}
	return s.RemoteHooks && (len(s.Hooks.BeforeToolCall) > 0 || len(s.Hooks.AfterToolCall) > 0)
}

// declareRemote declares the scenario's remote tools, and its hooks when
// they are remote, on queue.
func declareRemote(in *agentapi.AgentLoopInput, s Scenario, queue string) {
	in.RemoteTools = remoteTools(s, queue)
	if !s.RemoteHooks {
		return
	}
	hook := func(activityType string) []agent.Hook {
		return []agent.Hook{{Activity: &agent.ActivityHook{TaskQueue: queue, ActivityType: activityType, Timeout: remoteHookTimeout}}}
	}
	if len(s.Hooks.BeforeToolCall) > 0 {
		in.BeforeToolCall = hook(RemoteBeforeHookType)
	}
	if len(s.Hooks.AfterToolCall) > 0 {
		in.AfterToolCall = hook(RemoteAfterHookType)
	}
}

// remoteTools declares the scenario's remote tools on queue.
func remoteTools(s Scenario, queue string) []agent.RemoteTool {
	var out []agent.RemoteTool
	for _, t := range s.Tools {
		if !t.Remote {
			continue
		}
		desc := "test tool " + t.Name
		if t.Description != nil {
			desc = *t.Description
		}
		out = append(out, agent.RemoteTool{Name: t.Name, Description: desc, Parameters: t.Parameters,
			TaskQueue: queue, ActivityType: RemoteActivityType, ExecutionMode: agent.ExecutionMode(t.ExecutionMode),
			Replay: agent.ReplayNever})
	}
	return out
}

// StartGoRemoteWorker is a RemoteWorker in Go: a worker of the Go SDK
// holding the scenario's remote tools and remote hooks.
func StartGoRemoteWorker(c client.Client, s Scenario, queue string) (func(), error) {
	w := worker.New(c, queue, worker.Options{})
	w.RegisterActivityWithOptions(remoteTool{c: c, s: s}.execute, activity.RegisterOptions{Name: RemoteActivityType})
	before, after := beforeHook(s.Hooks.BeforeToolCall), afterHook(s.Hooks.AfterToolCall)
	w.RegisterActivityWithOptions(func(ctx context.Context, req activities.BeforeHookRequest) (*hooks.BeforeResult, error) {
		res, err := before(ctx, req.BeforeContext)
		return res, hookThrew(err)
	}, activity.RegisterOptions{Name: RemoteBeforeHookType})
	w.RegisterActivityWithOptions(func(ctx context.Context, req activities.AfterHookRequest) (*hooks.AfterResult, error) {
		res, err := after(ctx, req.AfterContext)
		return res, hookThrew(err)
	}, activity.RegisterOptions{Name: RemoteAfterHookType})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start remote tool worker: %w", err)
	}
	return w.Stop, nil
}

// hookThrew is a remote hook's thrown error as the contract has it: a
// failure not to retry (activities.ErrHookFailed), whose message is pi's
// thrown message.
func hookThrew(err error) error {
	if err == nil {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrHookFailed, nil)
}

type remoteTool struct {
	c client.Client
	s Scenario
}

// execute plays the tool's behaviour: partial results and queued messages
// at the call's start (offset 0, pi's instant), then the result, with the
// scripted delay as its duration (scenarioTool.Execute says why).
func (r remoteTool) execute(ctx context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
	var spec *ToolSpec
	for i := range r.s.Tools {
		if r.s.Tools[i].Name == in.ToolName {
			spec = &r.s.Tools[i]
		}
	}
	if spec == nil {
		return agentapi.RemoteToolResult{}, fmt.Errorf("no remote tool %q in scenario %s", in.ToolName, r.s.Name)
	}
	b, err := spec.behaviorFor(in.ToolCallID)
	if err != nil {
		return agentapi.RemoteToolResult{}, err
	}
	attempt := activity.GetInfo(ctx).Attempt
	for _, u := range b.Updates {
		content, err := textContent(u)
		if err != nil {
			return agentapi.RemoteToolResult{}, err
		}
		err = r.c.SignalWorkflow(ctx, in.WorkflowID, in.RunID, agentapi.SignalToolUpdate, agentapi.ToolUpdate{
			ToolCallID: in.ToolCallID, Position: in.Position, Attempt: attempt,
			Results: []agent.ToolResult{{Content: content, Details: json.RawMessage("{}")}}, Offsets: []time.Duration{0}})
		if err != nil {
			return agentapi.RemoteToolResult{}, err
		}
	}
	queue := func(text string, followUp bool) error {
		return r.c.SignalWorkflow(ctx, in.WorkflowID, in.RunID, agentapi.SignalToolQueue, agentapi.ToolQueue{
			Message: agent.UserText(text, 0), FollowUp: followUp, ToolCallID: in.ToolCallID, Position: in.Position, Attempt: attempt})
	}
	for _, s := range b.Steer {
		if err := queue(s, false); err != nil {
			return agentapi.RemoteToolResult{}, err
		}
	}
	for _, s := range b.FollowUp {
		if err := queue(s, true); err != nil {
			return agentapi.RemoteToolResult{}, err
		}
	}
	if b.Abort {
		return agentapi.RemoteToolResult{}, errors.New("a remote scenario tool cannot abort its run")
	}
	delay := b.DelayMs
	if err := sleep(ctx, time.Duration(delay*float64(time.Millisecond))); err != nil {
		return agentapi.RemoteToolResult{}, err
	}
	if b.Throw != "" {
		// pi's thrown tool: an error result with the message.
		return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text(b.Throw)}, Details: json.RawMessage("{}"),
			IsError: true, DurationMs: &delay}, nil
	}
	content := []agent.Content{agent.Text(spec.Name + " ok")}
	switch {
	case b.EchoArgs:
		content = []agent.Content{agent.Text(canonicalJSON(in.Args))}
	case len(b.Result) > 0 && string(b.Result) != "null":
		if content, err = textContent(b.Result); err != nil {
			return agentapi.RemoteToolResult{}, err
		}
	}
	details := b.Details
	if len(details) == 0 || string(details) == "null" {
		details = json.RawMessage("{}")
	}
	return agentapi.RemoteToolResult{Content: content, Details: details, Terminate: b.Terminate, DurationMs: &delay}, nil
}
