package agent_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// TestSubAgentCheckInterval: checkInterval parses as a Go duration of at
// least a second; nothing given (or no limits) is the default.
func TestSubAgentCheckInterval(t *testing.T) {
	var none *agent.SubAgentLimits
	require.Equal(t, 10*time.Minute, none.CheckEvery(10*time.Minute))
	require.Equal(t, 10*time.Minute, (&agent.SubAgentLimits{}).CheckEvery(10*time.Minute))
	require.Equal(t, 30*time.Second, (&agent.SubAgentLimits{CheckInterval: "30s"}).CheckEvery(10*time.Minute))
	for _, bad := range []string{"soon", "10ms", "-1m"} {
		c := agent.LoopConfig{Model: agent.ModelRef{Provider: "p", ID: "m"}, SubAgentLimits: &agent.SubAgentLimits{CheckInterval: bad}}
		require.ErrorContains(t, c.Normalize(), "subAgentLimits.checkInterval", bad)
	}
}
