package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/workflows"
)

// The worker throttles the SDK's own heartbeats (a compaction's) to
// AbortLatency. The agent loop's tools and model turns heartbeat through
// the client, for liveness only, and learn of aborts from their run's
// history (activities/cancelfeed.go).
func TestHeartbeatThrottle(t *testing.T) {
	require.Equal(t, workflows.AbortLatency, workflows.WorkerOptions().MaxHeartbeatThrottleInterval)
}
