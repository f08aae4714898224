package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
)

// AdoptInput names the blobs of other scopes a run received in its input:
// stubs of another run's content (pi's continue-from-messages with that
// run's result). StoreID is the run's content store id.
type AdoptInput struct {
	Refs    []agent.BlobRef `json:"refs"`
	StoreID string          `json:"storeId,omitempty"`
}

// AdoptContent copies each blob into the calling workflow's scope, so that
// the run no longer depends on the other run's content: once that run is
// deleted, a content sweep deletes its scope (store.Sweep). The workflow
// then names the copies (the same hashes under its own scope). A blob that
// is missing already cannot be copied: the input is refused, non-retryable,
// naming it.
func (a *Activities) AdoptContent(ctx context.Context, in AdoptInput) error {
	if err := a.checkStore(ctx, in.StoreID); err != nil {
		return err
	}
	scope := activity.GetInfo(ctx).WorkflowExecution.ID
	for _, ref := range in.Refs {
		var data []byte
		err := a.retryStore(ctx, func() (err error) {
			data, err = a.Store.Get(ctx, ref)
			return err
		})
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == ErrContentMissing {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"the input holds content of workflow %q that is missing from the content store (sha256:%s): "+
					"that run was deleted and its content swept, or the store is not the one it used; send the content inline",
				ref.Scope, ref.SHA256), ErrContentMissing, nil)
		}
		if err != nil {
			return err
		}
		err = a.retryStore(ctx, func() error {
			_, err := a.Store.Put(ctx, scope, data)
			return err
		})
		if err != nil {
			return err
		}
		activity.RecordHeartbeat(ctx)
	}
	return nil
}
