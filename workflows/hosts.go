package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Host affinity that survives hosts. A run's workspace tools go to the
// queue of the host that holds its workspace (toolQueue). That host may be
// gone for good: a pod rescheduled, a machine lost. So:
//
//   - a tool call on a host queue waits at most hostStartTimeout for a
//     worker there; then it ends with a pi-shaped error result the model
//     sees ("Tool bash did not run: host h1 is unavailable ..."), the run
//     goes on, and its later tools go to a host resolved again
//     (rehost);
//   - at the start of each run of a session (each prompt, each
//     continue-as-new) and of an AgentLoop's continued run, a host whose
//     queue nobody polls is replaced by a live one (checkHost).
const (
	// hostStartChange guards the schedule-to-start timeout of tool calls
	// on a host queue, their "host unavailable" result and the rehost.
	hostStartChange = "host-start-timeout"
	// hostCheckChange guards the run-start host check.
	hostCheckChange = "host-check-at-run-start"
	// DefaultHostStartTimeout is the worker's default -host-start-timeout:
	// long enough for a host that restarts in place (a deploy, a crash)
	// to come back, short enough that a prompt whose host died just before
	// it (a dead host looks live for up to HostPollWindow) is still
	// answered within 2 minutes.
	DefaultHostStartTimeout = 90 * time.Second
)

// hostStartOn says whether this history bounds host-queue calls.
func (l *loop) hostStartOn() bool {
	return workflow.GetVersion(l.baseCtx, hostStartChange, workflow.DefaultVersion, 1) == 1
}

// onHostQueue says whether a tool's calls go to the run's host queue.
func (l *loop) onHostQueue(name string) bool {
	return l.hostQueue != "" && l.cfg.ToolTaskQueue == "" && l.tools[name].Workspace
}

// hostStartTimeout is the run's hostStartTimeout, else the worker's
// (ResolveRun), else DefaultHostStartTimeout.
func (l *loop) hostStartTimeout() time.Duration {
	if d, err := time.ParseDuration(l.cfg.HostStartTimeout); err == nil && d > 0 {
		return d
	}
	if l.hostStartDefault > 0 {
		return l.hostStartDefault
	}
	return DefaultHostStartTimeout
}

// callStartTimeout is the schedule-to-start timeout of a tool call on the
// host queue: hostStartTimeout, or less after an abort.
func (l *loop) callStartTimeout() time.Duration {
	d := l.hostStartTimeout()
	if l.aborted && abortedToolStartTimeout < d {
		d = abortedToolStartTimeout
	}
	return d
}

// hostUnavailable reports whether err is a call of the named tool that no
// worker on the run's host queue took in time; it then marks the host
// lost (the run's next tools go elsewhere) and returns the call's result.
func (l *loop) hostUnavailable(name string, err error) (activities.ExecuteOutput, bool) {
	var timeoutErr *temporal.TimeoutError
	if err == nil || !l.onHostQueue(name) || !errors.As(err, &timeoutErr) ||
		timeoutErr.TimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START || !l.hostStartOn() {
		return activities.ExecuteOutput{}, false
	}
	l.hostLost = l.hostQueue
	text := fmt.Sprintf("Tool %s did not run: host %s is unavailable (no worker took the call within %v)",
		name, hostOf(workflow.GetInfo(l.baseCtx).TaskQueueName, l.hostQueue), l.callStartTimeout())
	return activities.ExecuteOutput{Result: agent.ErrorResult(text), IsError: true}, true
}

// lookupHostGone marks the run's host lost when the lookup of a lost call
// on it found no worker in time.
func (l *loop) lookupHostGone(ctx workflow.Context, name string, f workflow.Future) {
	if f == nil {
		return
	}
	var timeoutErr *temporal.TimeoutError
	if errors.As(f.Get(ctx, nil), &timeoutErr) && timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START &&
		l.onHostQueue(name) && l.hostStartOn() {
		l.hostLost = l.hostQueue
	}
}

// hostOf is the host id in the name of a host queue of taskQueue (see
// HostQueue), or the queue's name when it is not named so.
func hostOf(taskQueue, queue string) string {
	if id, ok := strings.CutPrefix(queue, taskQueue+agentapi.HostQueueInfix); ok && id != "" {
		return id
	}
	if i := strings.Index(queue, agentapi.HostQueueInfix); i >= 0 {
		return queue[i+len(agentapi.HostQueueInfix):]
	}
	return queue
}

// rehost resolves the run's host again after a call found it unavailable,
// before the run's next tool calls are scheduled.
func (l *loop) rehost(ctx workflow.Context) {
	if l.hostLost == "" || l.hostLost != l.hostQueue {
		return
	}
	l.hostLost = ""
	l.askHost(ctx, true)
}

// checkHost is the run-start host check: the run keeps its host while a
// worker polls the host's queue, else moves to a live one.
func (l *loop) checkHost(ctx workflow.Context) {
	if l.hostQueue == "" || l.cfg.ToolTaskQueue != "" {
		return
	}
	if !l.hostResolvedAt.IsZero() && workflow.Now(ctx).Sub(l.hostResolvedAt) < time.Minute {
		// The worker that resolved the run just now is its host: live.
		return
	}
	if workflow.GetVersion(ctx, hostCheckChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	l.askHost(ctx, false)
}

// askHost runs the CheckRunHost local activity on this worker. When it
// fails the run keeps its host: the calls' schedule-to-start timeout still
// bounds the wait.
func (l *loop) askHost(ctx workflow.Context, unavailable bool) {
	f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.CheckRunHost, activities.RunHostInput{
		HostQueue:   l.hostQueue,
		Workspace:   l.cfg.Workspace,
		Unavailable: unavailable,
	})
	l.wait(ctx, f)
	var out activities.RunHostOutput
	if err := f.Get(ctx, &out); err != nil {
		workflow.GetLogger(ctx).Warn("cannot check the run's host; it keeps it", "hostQueue", l.hostQueue, "error", err)
		return
	}
	if out.Replaced {
		workflow.GetLogger(ctx).Info("the run's host is gone: its workspace tools move",
			"from", l.hostQueue, "to", out.HostQueue, "reason", out.Reason)
		l.hostQueue = out.HostQueue
	}
}
