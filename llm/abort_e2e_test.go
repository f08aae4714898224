package llm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/fakeprovider"
)

// An abort that comes while a model call is under way ends the turn
// aborted even when the call then fails (a provider that is down) before
// the cancellation reaches the attempt: the person asked to stop, and
// Ctrl-C in the starter must say "aborted". Reproduced on the workflow
// before abort-wins-over-failure: the 503 that came after the abort ended
// the turn with stopReason error.
func TestWorkflowAbortWinsOverAFailureInFlight(t *testing.T) {
	t.Parallel()
	inFlight, release := make(chan struct{}, 1), make(chan struct{})
	f := newFakeServer(t)
	f.Next = func(fakeprovider.Request) fakeprovider.Reply {
		select {
		case inFlight <- struct{}{}:
		default:
		}
		<-release
		return fakeprovider.Reply{Status: 503, Body: `{"error": {"message": "upstream connect error", "type": "server_error"}}`}
	}
	r := newRig(t, map[string]string{"OPENAI_COMPATIBLE_BASE_URL": f.URL, "OPENAI_COMPATIBLE_API_KEY": "none"})
	run := r.start(input("openai-compatible/down", "are you there?"))
	<-inFlight
	// The abort is accepted (the workflow asked for the call's
	// cancellation) while the attempt waits for the provider; then the
	// provider fails it.
	_, err := agentclient.Abort(context.Background(), r.c, run.GetID(), "stop")
	require.NoError(t, err)
	close(release)
	res := r.result(run)
	final := lastMessage(res)
	require.Equal(t, agent.StopReasonAborted, final.StopReason, final.ErrorMessage)
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
}
