package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/store"
)

// Stable ApplicationError types of content that cannot be read: no retry
// brings it back, so the stage fails at once and says which hash.
const (
	ErrContentMissing = "ContentMissing"
	ErrContentCorrupt = "ContentCorrupt"
)

// Backoff for a content store that does not answer: an outage of the store
// holds a stage up (heartbeating, so Temporal knows the worker is alive)
// until the stage's own timeout, then Temporal retries the stage. Nothing
// is lost, and the run goes on once the store is back.
const (
	storeRetryFirst = 100 * time.Millisecond
	storeRetryMax   = 5 * time.Second
)

// retryStore runs op until it succeeds, fails for good, or ctx ends.
func (a *Activities) retryStore(ctx context.Context, op func() error) error {
	wait := storeRetryFirst
	for {
		err := op()
		if err == nil {
			return nil
		}
		if store.IsPermanent(err) {
			kind := ErrContentCorrupt
			if errors.Is(err, store.ErrMissing) {
				kind = ErrContentMissing
			}
			return temporal.NewNonRetryableApplicationError(err.Error(), kind, nil)
		}
		if ctx.Err() != nil {
			return temporal.NewApplicationError("content store: "+err.Error(), ErrContentUnavailable)
		}
		activity.GetLogger(ctx).Warn("Content store unavailable; retrying", "Error", err, "Wait", wait)
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx)
		}
		select {
		case <-ctx.Done():
			return temporal.NewApplicationError("content store: "+err.Error(), ErrContentUnavailable)
		case <-time.After(wait):
		}
		wait = min(2*wait, storeRetryMax)
	}
}

// ErrContentUnavailable is the retryable ApplicationError type of a stage
// whose store stayed unreachable for the stage's whole timeout.
const ErrContentUnavailable = "ContentUnavailable"

// offloadResult stores the large parts of a tool result under the calling
// workflow's id.
func (a *Activities) offloadResult(ctx context.Context, r agent.ToolResult) (agent.ToolResult, error) {
	if a.NoOffload {
		return r, nil
	}
	scope := activity.GetInfo(ctx).WorkflowExecution.ID
	var out agent.ToolResult
	err := a.retryStore(ctx, func() (err error) {
		out, err = store.OffloadResult(ctx, a.Store, scope, r)
		return err
	})
	return out, err
}

// resolveResult reads back the large parts of a tool result.
func (a *Activities) resolveResult(ctx context.Context, r agent.ToolResult) (agent.ToolResult, error) {
	var out agent.ToolResult
	err := a.retryStore(ctx, func() (err error) {
		out, err = store.ResolveResult(ctx, a.Store, r)
		return err
	})
	return out, err
}

// offloadMessage stores the large parts of a message.
func (a *Activities) offloadMessage(ctx context.Context, m agent.Message) (agent.Message, error) {
	if a.NoOffload {
		return m, nil
	}
	scope := activity.GetInfo(ctx).WorkflowExecution.ID
	var out agent.Message
	err := a.retryStore(ctx, func() (err error) {
		out, err = store.OffloadMessage(ctx, a.Store, scope, m)
		return err
	})
	return out, err
}
