package workflows

import (
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agentapi"
)

// Register registers the agent loop workflows and their activities on a
// worker, with their versioning behaviours (versioning.go), which apply
// when the worker uses Worker Deployment Versioning.
// A worker of one's own also wants WorkerOptions, and WorkerDialOptions on
// its client's connection (rejections.go).
func Register(w worker.Registry, acts *activities.Activities) {
	RegisterWorkflows(w)
	w.RegisterActivity(acts)
}

// RegisterWorkflows registers AgentLoop and AgentSession alone (a replayer
// needs no activities).
func RegisterWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(AgentLoop, workflow.RegisterOptions{Name: agentapi.AgentLoopWorkflow, VersioningBehavior: AgentLoopVersioning})
	w.RegisterWorkflowWithOptions(AgentSession, workflow.RegisterOptions{Name: agentapi.SessionWorkflow, VersioningBehavior: SessionVersioning})
}

// AbortLatency is the worker's MaxHeartbeatThrottleInterval default. An
// activity that heartbeats with the SDK's RecordHeartbeat (a compaction's
// summary) learns of an abort in a heartbeat's answer, at most one per
// throttle interval. Tools and model turns heartbeat through the client for
// liveness only and learn of an abort from their run's history
// (activities/cancelfeed.go).
const AbortLatency = 200 * time.Millisecond

// EagerToolCalls is how many activities one workflow task may hand
// straight back to this worker. A parallel batch schedules all its tool
// calls in one task; beyond the SDK's default of 3, the rest waited for a
// poll (measured: a 16-call batch took 11-14 workflow tasks instead of 4-5).
const EagerToolCalls = 32

// DeadlockDetectionTimeout is how long workflow code may run without
// yielding before the SDK fails the workflow task. The SDK decodes an
// Update's argument inside the workflow before any validator runs:
// decoding a 3 MB steering message, which the validator then refuses, took
// over the SDK's 1 s default on a machine running three test suites at
// once, and the failed task dropped the Update. Still well inside the 10 s workflow task
// timeout.
const DeadlockDetectionTimeout = 5 * time.Second

// WorkerOptions are the worker options the agent loop needs.
func WorkerOptions() worker.Options {
	eager := EagerToolCalls
	return worker.Options{
		MaxHeartbeatThrottleInterval:                AbortLatency,
		MaxEagerActivityReservationsPerWorkflowTask: &eager,
		DeadlockDetectionTimeout:                    DeadlockDetectionTimeout,
	}
}
