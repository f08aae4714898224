package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// prepareInTurnChange: a run with no beforeToolCall hooks has its model
// turn prepare the answer's tool calls (activities/prepared.go), so its
// tool batches run no PrepareToolCall local activity, a billable action per
// batch. Histories recorded before it run the local activity for every
// call, and so does a call the turn could not prepare.
const prepareInTurnChange = "prepare-in-model-turn"

// prepareInTurn says whether the model turn about to run prepares its
// calls.
func (l *loop) prepareInTurn(ctx workflow.Context) bool {
	if len(l.cfg.BeforeToolCall) > 0 || len(l.cfg.Tools) == 0 {
		return false
	}
	return workflow.GetVersion(ctx, prepareInTurnChange, workflow.DefaultVersion, 1) == 1
}

// preparedInTurn is what the last model turn found for the call at pos
// (1-based among its answer's tool calls), when it prepared that call.
func (l *loop) preparedInTurn(call agent.Content, pos int) (activities.PrepareOutput, bool) {
	if len(l.cfg.BeforeToolCall) > 0 || pos < 1 || pos > len(l.turnPrepared) {
		return activities.PrepareOutput{}, false
	}
	p := l.turnPrepared[pos-1]
	switch {
	case p.Invalid != nil:
		return activities.PrepareOutput{Immediate: true, IsError: true, Result: *p.Invalid}, true
	case p.Ready:
		args := call.Arguments
		if args == nil {
			args = map[string]any{}
		}
		return activities.PrepareOutput{Args: args}, true
	}
	return activities.PrepareOutput{}, false
}
