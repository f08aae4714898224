package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
)

// lazyHeartbeatExecute is a what-if, not the project's code: the
// ExecuteToolCall activity as activities.ExecuteToolCall runs the bench's
// scenario tools (no partial results, no run control, results far under the
// payload cap), except that its first heartbeat goes out one
// HeartbeatInterval after the start instead of at once, and its end does
// not wait for a heartbeat in flight. A tool that finishes within the
// interval then costs no heartbeat RPC, and none delays its result. The
// loop benchmark registers it in place of ExecuteToolCall with
// -what-if-lazy-heartbeat to measure what that change to activities would
// gain.
type lazyHeartbeatExecute struct {
	acts *activities.Activities
}

func (l lazyHeartbeatExecute) ExecuteToolCall(ctx context.Context, in activities.ExecuteInput) (activities.ExecuteOutput, error) {
	tool, ok := l.acts.Tools.Get(in.ToolName)
	if !ok {
		return activities.ExecuteOutput{Result: agent.ErrorResult("unknown tool " + in.ToolName), IsError: true}, nil
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(l.acts.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	if in.Args == nil {
		in.Args = map[string]any{}
	}
	start := time.Now()
	var reported *time.Duration
	result, err := tool.Execute(ctx, tools.Call{
		ID: in.ToolCallID, Name: in.ToolName, Args: in.Args, Workspace: in.Workspace,
		ReportDuration: func(d time.Duration) { reported = &d },
	})
	took := time.Since(start)
	if reported != nil {
		took = *reported
	}
	if err != nil {
		return activities.ExecuteOutput{Result: agent.ErrorResult(err.Error()), IsError: true, Duration: took}, nil
	}
	return activities.ExecuteOutput{Result: result, Duration: took}, nil
}
