package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// RemoteActivityType is the activity type the scenario's remote tools are
// served under.
const RemoteActivityType = "ScenarioRemoteTool"

// defaultRemoteQueue is the task queue Input names for remote tools; Run
// replaces it with a queue of the run's own.
const defaultRemoteQueue = "conformance-remote"

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

// startRemoteWorker serves the scenario's remote tools on queue, as a
// worker in another SDK language would: it knows only the contract
// (agentapi.RemoteToolInput and RemoteToolResult, the toolUpdate and
// toolQueue Signals), nothing of the loop's worker.
func startRemoteWorker(c client.Client, s Scenario, queue string) (func(), error) {
	w := worker.New(c, queue, worker.Options{})
	w.RegisterActivityWithOptions(remoteTool{c: c, s: s}.execute, activity.RegisterOptions{Name: RemoteActivityType})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start remote tool worker: %w", err)
	}
	return w.Stop, nil
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
