package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// The "host ... is unavailable" result names the host id, which is what
// follows the task queue and "-host-" in the host queue's name, even when
// the id itself has "-host-" in it.
func TestHostOf(t *testing.T) {
	require.Equal(t, "host-a", hostOf(agentapi.TaskQueue, agentapi.HostQueue(agentapi.TaskQueue, "host-a")))
	require.Equal(t, "pod-3", hostOf(agentapi.TaskQueue, agentapi.HostQueue(agentapi.TaskQueue, "pod-3")))
	require.Equal(t, "h1", hostOf("other", agentapi.HostQueue(agentapi.TaskQueue, "h1")), "a queue of another task queue's host")
	require.Equal(t, "gpu-box", hostOf(agentapi.TaskQueue, "gpu-box"), "a -host-queue named otherwise")
}

// A run's hostStartTimeout beats the worker's, which beats the default;
// after an abort a call waits no longer than an aborted call does.
func TestHostStartTimeout(t *testing.T) {
	l := &loop{}
	require.Equal(t, DefaultHostStartTimeout, l.hostStartTimeout())
	l.hostStartDefault = 5 * time.Minute
	require.Equal(t, 5*time.Minute, l.hostStartTimeout())
	l.cfg = agent.LoopConfig{HostStartTimeout: "45s"}
	require.Equal(t, 45*time.Second, l.hostStartTimeout())
	require.Equal(t, 45*time.Second, l.callStartTimeout())
	l.aborted = true
	require.Equal(t, abortedToolStartTimeout, l.callStartTimeout())

	bad := agent.LoopConfig{Model: agent.ModelRef{Provider: "p", ID: "m"}, HostStartTimeout: "soon"}
	require.ErrorContains(t, bad.Normalize(), `hostStartTimeout "soon": want a positive Go duration`)
}
