package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/tools"
)

// A missing workspace is found when the run resolves, before any model
// turn is paid for, rather than when its first tool call fails. In a fleet
// the worker resolving the run may not be the host that holds the
// workspace (host affinity), so a worker that lacks it says so with the
// retryable ConfigDrift and another worker of the task queue resolves the
// run; only a worker that is the one polling the run's task queue can
// tell that no worker holds it, and the run fails at once. ResolveRun, a
// local activity, reports what it found (ResolveRunOutput.WorkspaceMissing)
// for the workflow to decide (workflows/workspace.go); the resolve the
// workflow then runs on the task queue requires the workspace and fails
// where it is missing.

// checkWorkspace is ResolveRun's check of the run's workspace, when the
// run asks for it and has workspace tools. missing is "" when the
// directory is here; else it says what is wrong, and elsewhere whether
// another worker of the run's task queue may hold it.
func (a *Activities) checkWorkspace(ctx context.Context, in ResolveRunInput, defs []tools.Definition) (missing string, elsewhere bool) {
	if !in.CheckWorkspace && !in.RequireWorkspace || !slices.ContainsFunc(defs, func(d tools.Definition) bool { return d.Workspace }) {
		return "", false
	}
	dir := in.Workspace
	if dir == "" {
		dir = a.DefaultWorkspace
	}
	if dir == "" {
		return "", false // the tools work in the worker's directory
	}
	st, err := os.Stat(dir)
	switch {
	case err == nil && st.IsDir():
		return "", false
	case err == nil:
		missing = "is not a directory"
	case errors.Is(err, fs.ErrNotExist):
		missing = "does not exist"
	default:
		// Not readable here (permissions, a stale mount): another
		// worker may do better.
		return fmt.Sprintf("workspace %s: %v", dir, err), true
	}
	queue := activity.GetInfo(ctx).TaskQueue
	if a.othersMayHold(ctx, queue) {
		return fmt.Sprintf("workspace %s (it %s here)", dir, missing), true
	}
	return fmt.Sprintf("workspace %s %s on any worker of task queue %s (this worker, %s, is the only one polling it)",
		dir, missing, queue, a.workerName()), false
}

// workspaceError is the error of a resolve that requires the workspace
// (ResolveRunInput.RequireWorkspace) where checkWorkspace found it
// missing: ConfigDrift while another worker may hold it, else the
// non-retryable ErrWorkspaceMissing.
func (a *Activities) workspaceError(missing string, elsewhere bool) error {
	if elsewhere {
		return a.lacks("%s", missing)
	}
	return temporal.NewNonRetryableApplicationError(missing, ErrWorkspaceMissing, nil)
}

// othersMayHold reports whether a worker other than this one may serve the
// run's task queue: one polled it for activities within HostPollWindow, or
// the server's answer cannot tell (it failed, or does not list this very
// worker, whose pollers are known to poll it: then the listing is not to be
// trusted).
func (a *Activities) othersMayHold(ctx context.Context, queue string) bool {
	resp, err := a.Client.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return true
	}
	self, seen := a.identity(), false
	for _, p := range resp.GetPollers() {
		if time.Since(p.GetLastAccessTime().AsTime()) >= HostPollWindow {
			continue
		}
		if p.GetIdentity() != self {
			return true
		}
		seen = true
	}
	return !seen
}

// identity is the identity this worker's pollers show: Identity, else the
// SDK's default for a client and its workers, pid@hostname@.
func (a *Activities) identity() string {
	if a.Identity != "" {
		return a.Identity
	}
	host, err := os.Hostname()
	if err != nil {
		host = "Unknown"
	}
	return fmt.Sprintf("%d@%s@", os.Getpid(), host)
}
