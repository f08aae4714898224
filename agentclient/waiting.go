package agentclient

import (
	"context"
	"fmt"
	"slices"
	"strings"

	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/sdk/client"
)

// WhyWaiting explains why no worker has taken a run's first workflow task:
// no worker polls its task queue, or the workers that poll it are of a
// build the task queue does not route new runs to (deployed but not made
// current). started says that a worker took the task, or the run ended:
// there is nothing to explain any more. An empty reason with started false
// means the task waits for no reason this can tell (the workers may be
// busy). It costs two reads: DescribeWorkflowExecution and
// DescribeTaskQueue.
func WhyWaiting(ctx context.Context, c client.Client, workflowID, runID string) (reason string, started bool, err error) {
	d, err := c.DescribeWorkflow(ctx, workflowID, runID)
	if err != nil {
		return "", false, err
	}
	desc := d.RawResponse
	info := desc.GetWorkflowExecutionInfo()
	// A run whose first workflow task a worker took has at least three
	// events: started, task scheduled, task started.
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetHistoryLength() > 2 {
		return "", true, nil
	}
	queue := info.GetTaskQueue()
	if queue == "" {
		queue = desc.GetExecutionConfig().GetTaskQueue().GetName()
	}
	tq, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return "", false, err
	}
	return routingReason(queue, tq.GetPollers(), tq.GetVersioningInfo()), false, nil
}

// routingReason says why a workflow task on queue may find no worker: no
// pollers at all, or none of the version the queue routes new runs to (the
// deployment's current or ramping version, or unversioned workers when it
// has no current version).
func routingReason(queue string, pollers []*taskqueuepb.PollerInfo, vi *taskqueuepb.TaskQueueVersioningInfo) string {
	if len(pollers) == 0 {
		return fmt.Sprintf("no worker polls %s: the run waits until one does (start a worker on that task queue)", queue)
	}
	current, ramping := vi.GetCurrentDeploymentVersion(), vi.GetRampingDeploymentVersion()
	target := "an unversioned worker (the worker deployment has no current version)"
	if current.GetBuildId() != "" {
		target = fmt.Sprintf("a worker of build %s, the current version of deployment %s", current.GetBuildId(), current.GetDeploymentName())
	}
	var others []*deploymentpb.WorkerDeploymentOptions
	unversioned := 0
	for _, p := range pollers {
		o := p.GetDeploymentOptions()
		if o.GetBuildId() == "" || o.GetWorkerVersioningMode() == enumspb.WORKER_VERSIONING_MODE_UNVERSIONED {
			unversioned++
			continue
		}
		if sameVersion(o, current) || sameVersion(o, ramping) {
			continue
		}
		if !slices.ContainsFunc(others, func(x *deploymentpb.WorkerDeploymentOptions) bool { return sameVersion(x, versionOf(o)) }) {
			others = append(others, o)
		}
	}
	if len(others) > 0 {
		var builds, commands []string
		for _, o := range others {
			builds = append(builds, o.GetBuildId())
			commands = append(commands, fmt.Sprintf("temporal worker deployment set-current-version --deployment-name %s --build-id %s",
				o.GetDeploymentName(), o.GetBuildId()))
		}
		return fmt.Sprintf("the run waits for %s; workers of build %s poll %s, but that version is not current. "+
			"If it is the build you deployed, make it current:\n  %s",
			target, strings.Join(builds, ", "), queue, strings.Join(commands, "\n  "))
	}
	if current.GetBuildId() != "" && unversioned == len(pollers) {
		return fmt.Sprintf("the run waits for %s, but only unversioned workers poll %s: start workers of that build, or route new runs to unversioned workers:\n"+
			"  temporal worker deployment set-current-version --deployment-name %s --unversioned",
			target, queue, current.GetDeploymentName())
	}
	return ""
}

func versionOf(o *deploymentpb.WorkerDeploymentOptions) *deploymentpb.WorkerDeploymentVersion {
	return &deploymentpb.WorkerDeploymentVersion{DeploymentName: o.GetDeploymentName(), BuildId: o.GetBuildId()}
}

func sameVersion(o *deploymentpb.WorkerDeploymentOptions, v *deploymentpb.WorkerDeploymentVersion) bool {
	return v.GetBuildId() != "" && o.GetBuildId() == v.GetBuildId() && o.GetDeploymentName() == v.GetDeploymentName()
}
