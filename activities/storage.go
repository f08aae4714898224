package activities

import (
	"context"
	"errors"
	"fmt"
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
			recordHeartbeat(ctx)
		}
		select {
		case <-ctx.Done():
			return temporal.NewApplicationError("content store: "+err.Error(), ErrContentUnavailable)
		case <-time.After(wait):
		}
		wait = min(2*wait, storeRetryMax)
	}
}

// ErrStoreMismatch is the retryable ApplicationError type of an activity
// whose run keeps its content in another store than this worker's.
const ErrStoreMismatch = "StoreMismatch"

// checkStore refuses an activity of a run whose content store id (carried
// from ResolveRun) is not this worker's: this worker would read the run's
// content as missing and write content the run's other workers cannot
// read. The error is retryable, so a worker with the run's store takes a
// later attempt; the log line tells the operator which worker is wrong.
func (a *Activities) checkStore(ctx context.Context, runStore string) error {
	if runStore == "" || a.StoreID == "" || runStore == a.StoreID {
		return nil
	}
	msg := fmt.Sprintf("content store mismatch: the run's content is in store %s, this worker's store is %s; "+
		"every worker and client of a run must use the same content store (-store or $AGENTLOOP_STORE), so another worker must take this activity",
		runStore, a.StoreID)
	activity.GetLogger(ctx).Error("Content store mismatch: refusing the activity", "RunStoreID", runStore, "WorkerStoreID", a.StoreID)
	return temporal.NewApplicationError(msg, ErrStoreMismatch)
}

// contentLost reports a blob the model's context lacks: an error log line
// and a metric an operator can alert on.
func (a *Activities) contentLost(ctx context.Context, ref agent.BlobRef) {
	activity.GetLogger(ctx).Error("Content missing from the content store; the model sees a placeholder",
		"SHA256", ref.SHA256, "Scope", ref.Scope, "Size", ref.Size)
	activity.GetMetricsHandler(ctx).Counter("agentloop.content.lost").Inc(1)
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
