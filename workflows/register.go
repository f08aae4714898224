package workflows

import (
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
)

// Register registers the agent loop workflow and its activities on a worker.
func Register(w worker.Registry, acts *activities.Activities) {
	w.RegisterWorkflowWithOptions(AgentLoop, workflow.RegisterOptions{Name: AgentLoopWorkflow})
	w.RegisterWorkflowWithOptions(Session, workflow.RegisterOptions{Name: SessionWorkflow})
	w.RegisterActivity(acts)
}

// AbortLatency is the worker's MaxHeartbeatThrottleInterval default. An
// abort reaches a running activity only in the answer to a heartbeat, and
// the SDK sends at most one heartbeat per throttle interval, so this is how
// long a running tool or model call may take to see an abort.
const AbortLatency = 200 * time.Millisecond

// EagerToolCalls is how many activities one workflow task may hand
// straight back to this worker. A parallel batch schedules all its tool
// calls in one task; beyond the SDK's default of 3, the rest waited for a
// poll (measured: a 16-call batch took 11-14 workflow tasks instead of 4-5).
const EagerToolCalls = 32

// WorkerOptions are the worker options the agent loop needs.
func WorkerOptions() worker.Options {
	eager := EagerToolCalls
	return worker.Options{
		MaxHeartbeatThrottleInterval:                AbortLatency,
		MaxEagerActivityReservationsPerWorkflowTask: &eager,
	}
}
