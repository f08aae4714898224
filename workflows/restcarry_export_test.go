package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// LogAfterRestWorkflow is a run, for the external tests, in which a
// coroutine woken by the same workflow task as a rest logs an event after
// the rest's excerpt (restcarry.go): the loop's own log, handlers and
// carryAtRest, driven by hand. It logs agent_start, waits for the
// activity "ReleaseRest", then in that activity's workflow task logs
// turn_start, rests (carryAtRest, as someone watched), and wakes a
// coroutine that logs turn_end. It ends with agent_end at the Signal
// "end".
func LogAfterRestWorkflow(ctx workflow.Context) error {
	l := newLoop(ctx, agent.LoopConfig{}, nil)
	if err := l.registerHandlers(ctx); err != nil {
		return err
	}
	l.status = agentapi.StatusRunning
	l.watched = true
	l.emit(agent.Event{Type: agent.EventAgentStart})
	wake := workflow.NewBufferedChannel(ctx, 1)
	workflow.Go(ctx, func(gctx workflow.Context) {
		wake.Receive(gctx, nil)
		l.emit(agent.Event{Type: agent.EventTurnEnd})
	})
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 5 * time.Minute})
	if err := workflow.ExecuteActivity(actx, "ReleaseRest").Get(ctx, nil); err != nil {
		return err
	}
	l.emit(agent.Event{Type: agent.EventTurnStart})
	l.carryAtRest(ctx, false)
	wake.SendAsync(nil)
	workflow.GetSignalChannel(ctx, "end").Receive(ctx, nil)
	l.emit(agent.Event{Type: agent.EventAgentEnd})
	l.status = agentapi.StatusEnded
	return nil
}
