package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
)

// abortFailureChange is the change after which a model call that fails
// after the run was aborted ends its turn aborted, as the person asked,
// rather than with the call's error. The abort cancels the ModelTurn
// activity, but an attempt already under way (a provider that is down,
// being retried) can fail before the cancellation reaches it, and its
// failure, not a cancellation, then ends the activity: `starter run`
// reported "stopReason error" for a Ctrl-C on a loaded machine.
const abortFailureChange = "abort-wins-over-failure"

// abortedFailure is the aborted end of a turn whose model call failed after
// the abort, keeping what the failure carried (billed attempts, partial
// content); ok is false when the run was not aborted, or started before
// the change. The version is asked only in that case, so the histories of
// all other runs are as they were.
func (l *loop) abortedFailure(ctx workflow.Context, err error) (m agent.Message, ok bool) {
	if !l.aborted || workflow.GetVersion(ctx, abortFailureChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return agent.Message{}, false
	}
	m = l.failedMessage(ctx, err)
	m.StopReason, m.ErrorMessage = agent.StopReasonAborted, agent.AbortedErrorMessage
	return m, true
}
