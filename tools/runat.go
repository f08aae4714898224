package tools

import (
	"context"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// TimedRunControl is a RunControl that also queues a message at a given
// offset from the call's start, in a tool's simulated time, as UpdateAt
// emits a partial result. The worker's RunControl implements it; Steer
// and FollowUp stamp the wall clock. A parallel batch queues its calls'
// messages in pi's order: the offset, then the call order.
type TimedRunControl interface {
	RunControl
	SteerAt(ctx context.Context, m agent.Message, at time.Duration) error
	FollowUpAt(ctx context.Context, m agent.Message, at time.Duration) error
}

// SteerAt queues a steering message at a simulated offset when the run
// control takes one, else as Run.Steer does.
func (c Call) SteerAt(ctx context.Context, m agent.Message, at time.Duration) error {
	if t, ok := c.Run.(TimedRunControl); ok {
		return t.SteerAt(ctx, m, at)
	}
	return c.Run.Steer(ctx, m)
}

// FollowUpAt queues a follow-up at a simulated offset when the run control
// takes one, else as Run.FollowUp does.
func (c Call) FollowUpAt(ctx context.Context, m agent.Message, at time.Duration) error {
	if t, ok := c.Run.(TimedRunControl); ok {
		return t.FollowUpAt(ctx, m, at)
	}
	return c.Run.FollowUp(ctx, m)
}
