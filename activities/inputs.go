package activities

import (
	"context"

	"github.com/durable-agents/agentloop/agent"
)

// StoreInputsInput are messages that reached a workflow inline: an Update,
// a Signal or a start input from a client that did not store their large
// content itself (the Temporal CLI, the Web UI, a client of its own).
type StoreInputsInput struct {
	Messages []agent.Message `json:"messages"`
}

// StoreInputsOutput are the same messages with a stub in place of every
// block (and details) over store.InlineLimit.
type StoreInputsOutput struct {
	Messages []agent.Message `json:"messages"`
}

// StoreInputs is a local activity: it stores the large content of a
// workflow's inline input under the workflow's id, so that the workflow
// holds, queues, carries and sends on stubs. A local activity's input is
// not recorded; its result, stubs, is. A store that does not answer holds
// it (retryStore) until its timeout, then the workflow's retry policy.
func (a *Activities) StoreInputs(ctx context.Context, in StoreInputsInput) (StoreInputsOutput, error) {
	out := StoreInputsOutput{Messages: make([]agent.Message, len(in.Messages))}
	for i, m := range in.Messages {
		stored, err := a.offloadMessage(ctx, m)
		if err != nil {
			return StoreInputsOutput{}, err
		}
		out.Messages[i] = stored
	}
	return out, nil
}
