package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/hooks"
)

// ErrHookFailed is the non-retryable ApplicationError type of a remote
// hook that failed for good: a refused or malformed URL, a 4xx answer, an
// answer that is not a hook result. A worker without the webhook's secret
// fails retryably: another worker of the task queue may hold it. The workflow treats
// it as pi treats a hook that throws.
const ErrHookFailed = "HookFailed"

// The events a remote hook is called for: the "hook" field of its request
// and the webhook's X-Agentloop-Hook header.
const (
	HookBefore = "beforeToolCall"
	HookAfter  = "afterToolCall"
)

// BeforeHookRequest is what a remote beforeToolCall hook receives, as JSON
// (an activity hook's one argument, a webhook's body): pi's
// BeforeToolCallContext without the transcript, and whether the run was
// aborted before the hook began (pi hands hooks the aborted signal).
type BeforeHookRequest struct {
	Hook string `json:"hook"`
	hooks.BeforeContext
	Aborted bool `json:"aborted,omitempty"`
}

// AfterHookRequest is what a remote afterToolCall hook receives: pi's
// AfterToolCallContext without the transcript. The result's large blocks
// are inline for a webhook; an activity hook gets them as the stubs history
// holds ({"$blob": ...}), readable from the codec server (docs/api.md).
type AfterHookRequest struct {
	Hook string `json:"hook"`
	hooks.AfterContext
	Aborted bool `json:"aborted,omitempty"`
}

// WebhookInput is one webhook hook call, scheduled by the workflow on its
// own task queue so that its attempts and answer are in history.
type WebhookInput struct {
	Hook   agent.WebhookHook  `json:"hook"`
	Before *BeforeHookRequest `json:"before,omitempty"`
	After  *AfterHookRequest  `json:"after,omitempty"`
	// StoreID is the run's content store id (after hooks).
	StoreID string `json:"storeId,omitempty"`
}

// WebhookOutput is a before hook's answer, or an after hook's result with
// its override applied (large content stored, as history holds it).
type WebhookOutput struct {
	Before  *hooks.BeforeResult `json:"before,omitempty"`
	Result  *agent.ToolResult   `json:"result,omitempty"`
	IsError bool                `json:"isError,omitempty"`
}

// CallWebhook POSTs a hook request to a webhook, signed with the secret
// this worker holds for it, and reads pi's hook result from the answer. A
// failure a retry may mend (no connection, 5xx, 429) is a retryable error,
// for Temporal to retry within the hook's timeout; any other is
// ErrHookFailed.
func (a *Activities) CallWebhook(ctx context.Context, in WebhookInput) (WebhookOutput, error) {
	if a.Webhooks == nil {
		return WebhookOutput{}, temporal.NewApplicationError(fmt.Sprintf("worker %s calls no webhooks", a.workerName()), "WebhookUnreachable")
	}
	if err := a.checkStore(ctx, in.StoreID); err != nil {
		return WebhookOutput{}, err
	}
	info := activity.GetInfo(ctx)
	delivery := info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + info.ActivityID
	switch {
	case in.Before != nil:
		body, err := json.Marshal(in.Before)
		if err != nil {
			return WebhookOutput{}, hookFailed(err)
		}
		answer, err := a.Webhooks.Post(ctx, in.Hook, HookBefore, delivery, body)
		if err != nil {
			return WebhookOutput{}, webhookError(err)
		}
		res, err := DecodeBeforeResult(answer)
		if err != nil {
			return WebhookOutput{}, hookFailed(fmt.Errorf("webhook %s: %w", in.Hook.URL, err))
		}
		return WebhookOutput{Before: res}, nil
	case in.After != nil:
		req := *in.After
		result, err := a.resolveResult(ctx, req.Result)
		if err != nil {
			return WebhookOutput{}, err
		}
		req.Result = result
		body, err := json.Marshal(req)
		if err != nil {
			return WebhookOutput{}, hookFailed(err)
		}
		answer, err := a.Webhooks.Post(ctx, in.Hook, HookAfter, delivery, body)
		if err != nil {
			return WebhookOutput{}, webhookError(err)
		}
		override, err := DecodeAfterResult(answer)
		if err != nil {
			return WebhookOutput{}, hookFailed(fmt.Errorf("webhook %s: %w", in.Hook.URL, err))
		}
		if override == nil {
			// Unchanged: the result as history already holds it.
			return WebhookOutput{Result: &in.After.Result, IsError: in.After.IsError}, nil
		}
		merged, isError := hooks.Apply(result, req.IsError, override)
		stored, err := a.offloadResult(ctx, capResult(merged))
		if err != nil {
			return WebhookOutput{}, err
		}
		return WebhookOutput{Result: &stored, IsError: isError}, nil
	}
	return WebhookOutput{}, hookFailed(errors.New("a webhook call without a request"))
}

// DecodeBeforeResult reads pi's BeforeToolCallResult; an empty answer or
// null is undefined: the call goes on.
func DecodeBeforeResult(b []byte) (*hooks.BeforeResult, error) {
	if isUndefined(b) {
		return nil, nil
	}
	var r hooks.BeforeResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the answer is not a beforeToolCall result {block?, reason?}: %v", err)
	}
	return &r, nil
}

// DecodeAfterResult reads pi's AfterToolCallResult; an empty answer or
// null is undefined: the result stays as it is.
func DecodeAfterResult(b []byte) (*hooks.AfterResult, error) {
	if isUndefined(b) {
		return nil, nil
	}
	var r hooks.AfterResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the answer is not an afterToolCall result {content?, details?, isError?, terminate?}: %v", err)
	}
	return &r, nil
}

func isUndefined(b []byte) bool {
	s := strings.TrimSpace(string(b))
	return s == "" || s == "null"
}

func hookFailed(err error) error {
	return temporal.NewNonRetryableApplicationError(capText(err.Error()), ErrHookFailed, nil)
}

// webhookError keeps a failure a retry may mend retryable.
func webhookError(err error) error {
	var p *hooks.PermanentError
	if errors.As(err, &p) {
		return hookFailed(err)
	}
	return temporal.NewApplicationError(capText(err.Error()), "WebhookUnreachable")
}
