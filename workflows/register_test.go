package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/workflows"
)

// A tool's first heartbeat waits one interval. An interval shorter than the
// worker's heartbeat throttle would add heartbeat RPCs to short tools
// without making aborts reach them any sooner; a longer one would slow
// aborts down.
func TestHeartbeatIntervalMatchesTheThrottle(t *testing.T) {
	require.Equal(t, workflows.AbortLatency, activities.DefaultHeartbeatInterval)
	require.Equal(t, workflows.AbortLatency, workflows.WorkerOptions().MaxHeartbeatThrottleInterval)
}
