package agentclient

import (
	"testing"

	"github.com/stretchr/testify/require"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
)

// routingReason's cases the end-to-end test (TestStarterSaysWhyARunWaits)
// does not reach: a ramping build takes runs too, unversioned workers
// cannot take a versioned queue's runs, and workers of the routed version
// say nothing is wrong.
func TestRoutingReason(t *testing.T) {
	poller := func(build string) *taskqueuepb.PollerInfo {
		if build == "" {
			return &taskqueuepb.PollerInfo{Identity: "unversioned"}
		}
		return &taskqueuepb.PollerInfo{Identity: build, DeploymentOptions: &deploymentpb.WorkerDeploymentOptions{
			DeploymentName: "agentloop", BuildId: build, WorkerVersioningMode: enumspb.WORKER_VERSIONING_MODE_VERSIONED}}
	}
	version := func(build string) *deploymentpb.WorkerDeploymentVersion {
		return &deploymentpb.WorkerDeploymentVersion{DeploymentName: "agentloop", BuildId: build}
	}
	current := &taskqueuepb.TaskQueueVersioningInfo{CurrentDeploymentVersion: version("v1")}
	ramping := &taskqueuepb.TaskQueueVersioningInfo{CurrentDeploymentVersion: version("v1"), RampingDeploymentVersion: version("v2")}

	require.Equal(t, "no worker polls agent-loop: the run waits until one does (start a worker on that task queue)",
		routingReason("agent-loop", nil, current))
	require.Empty(t, routingReason("agent-loop", []*taskqueuepb.PollerInfo{poller("v1")}, current), "the current build polls")
	require.Empty(t, routingReason("agent-loop", []*taskqueuepb.PollerInfo{poller("v2")}, ramping), "a ramping build takes runs")
	require.Empty(t, routingReason("agent-loop", []*taskqueuepb.PollerInfo{poller("")}, nil), "unversioned workers, no current version")

	why := routingReason("agent-loop", []*taskqueuepb.PollerInfo{poller("v2"), poller("v3"), poller("v2")}, current)
	require.Contains(t, why, "the run waits for a worker of build v1, the current version of deployment agentloop")
	require.Contains(t, why, "workers of build v2, v3 poll agent-loop")
	require.Contains(t, why, "temporal worker deployment set-current-version --deployment-name agentloop --build-id v2\n")
	require.Contains(t, why, "temporal worker deployment set-current-version --deployment-name agentloop --build-id v3")

	why = routingReason("agent-loop", []*taskqueuepb.PollerInfo{poller("")}, current)
	require.Contains(t, why, "only unversioned workers poll agent-loop")
	require.Contains(t, why, "temporal worker deployment set-current-version --deployment-name agentloop --unversioned")
}
