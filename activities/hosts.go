package activities

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
)

// HostPollWindow is how recently a worker must have polled a host queue for
// its host to count as live. A live worker's activity pollers poll again as
// soon as the server ends a long poll, at least every minute or so; a host
// silent for longer is gone (killed, or rescheduled under another id).
const HostPollWindow = 90 * time.Second

// RunHostInput asks which host queue a run's workspace tools should use
// from now on.
type RunHostInput struct {
	// HostQueue is the run's host queue now.
	HostQueue string `json:"hostQueue"`
	Workspace string `json:"workspace,omitempty"`
	// Unavailable is set when a call on HostQueue found no worker within
	// its schedule-to-start timeout: the host is not asked about again.
	Unavailable bool `json:"unavailable,omitempty"`
}

// RunHostOutput is the run's host queue from now on.
type RunHostOutput struct {
	HostQueue string `json:"hostQueue,omitempty"`
	// Replaced is set when HostQueue is no longer the input's; Reason
	// says why.
	Replaced bool   `json:"replaced,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// CheckRunHost is the run-start host check, a local activity on the
// workflow's worker: a run keeps its host while a worker polls the host's
// queue; a host that nobody polled within HostPollWindow (or that let a
// call wait out its schedule-to-start timeout) is replaced by this
// worker's own host when it holds the run's workspace, else by "" (the
// run's task queue). When the server cannot be asked, the run keeps its
// host: the tool calls' schedule-to-start timeout still bounds the wait.
func (a *Activities) CheckRunHost(ctx context.Context, in RunHostInput) (RunHostOutput, error) {
	keep := RunHostOutput{HostQueue: in.HostQueue}
	if in.HostQueue == "" || (in.HostQueue == a.HostQueue && !in.Unavailable) {
		return keep, nil // no host, or this very worker's: live
	}
	reason := "a tool call on it waited out its schedule-to-start timeout"
	if !in.Unavailable {
		resp, err := a.Client.DescribeTaskQueue(ctx, in.HostQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return keep, nil
		}
		for _, p := range resp.GetPollers() {
			if time.Since(p.GetLastAccessTime().AsTime()) < HostPollWindow {
				return keep, nil
			}
		}
		reason = "no worker polled its queue within " + HostPollWindow.String()
	}
	next := a.hostQueueFor(in.Workspace)
	if next == in.HostQueue {
		next = ""
	}
	return RunHostOutput{HostQueue: next, Replaced: true, Reason: reason}, nil
}
