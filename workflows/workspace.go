package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
)

// A missing workspace is refused when the run first resolves, before any
// model turn, instead of at its first tool call (activities/workspace.go).
// The resolving worker reports it; when no other worker polls the run's
// task queue the run fails, else the resolve runs again on the task queue,
// requiring the workspace, until a worker that holds it answers (it then
// becomes the run's host) or the run's ConfigDriftTimeout passes.

// workspaceChange guards what the workflow does with a missing workspace.
// It is asked only when the resolving worker found one missing, so the
// histories of all other runs are as they were; histories recorded
// before it never had the answer.
const workspaceChange = "check-workspace-at-resolve"

// checksWorkspace says whether the run's resolve asks about its
// workspace: a first start (a continued run's workspace was there, and
// checkHost checks its host) of a run with tools that run on its own task
// queue (a toolTaskQueue's workers hold the workspace, not this one's).
func (l *loop) checksWorkspace() bool {
	return !l.resolvedBefore && l.cfg.ToolTaskQueue == "" && len(l.cfg.Tools) > 0
}

// resolveWorkspace acts on a resolve that found the run's workspace
// missing: it returns the resolve of a worker that holds it, or the run's
// error. Where there is nothing to do (the workspace is there, or the
// history predates workspaceChange) it returns resolved.
func (l *loop) resolveWorkspace(ctx workflow.Context, in activities.ResolveRunInput, resolved activities.ResolveRunOutput) (activities.ResolveRunOutput, error) {
	if resolved.WorkspaceMissing == "" || workflow.GetVersion(ctx, workspaceChange, workflow.DefaultVersion, 1) < 1 {
		return resolved, nil
	}
	if !resolved.WorkspaceElsewhere {
		return resolved, temporal.NewNonRetryableApplicationError(resolved.WorkspaceMissing, activities.ErrWorkspaceMissing, nil)
	}
	workflow.GetLogger(ctx).Warn("this worker lacks the run's workspace: a worker that holds it resolves the run",
		"workspace", resolved.WorkspaceMissing)
	in.CheckWorkspace, in.RequireWorkspace = false, true
	opts := l.elsewhereOptions("on a worker that holds it: " + shorten(resolved.WorkspaceMissing, 100))
	f := workflow.ExecuteActivity(workflow.WithActivityOptions(l.baseCtx, opts), a.ResolveRun, in)
	l.wait(ctx, f)
	var out activities.ResolveRunOutput
	if err := f.Get(ctx, &out); err != nil {
		return out, l.driftError(err)
	}
	return out, nil
}
