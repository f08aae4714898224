package agentclient

import (
	"context"
	"fmt"
	"slices"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// StoreContent stores the large content of what a client sends a run (an
// Update's or Signal's argument, a start input) in the workers' content
// store, under the workflow id as the workers do, and returns it with a
// stub in place of every block over store.InlineLimit. History, the
// workflow and every model turn's input then hold about 200 bytes for it:
// a run refuses what its queues have no room for (agentapi.MaxQueuedBytes)
// counting stubs, not content. It knows agent.Message,
// agentapi.PromptRequest, agentapi.AgentLoopInput and
// agentapi.SessionInput; anything else is returned as it is. A workflow
// stores what arrives inline itself, with a local activity: this saves
// history the bytes and the workflow the round trip.
func StoreContent(ctx context.Context, st store.Blobs, workflowID string, arg any) (any, error) {
	if st == nil {
		return arg, nil
	}
	switch v := arg.(type) {
	case agent.Message:
		return store.OffloadMessage(ctx, st, workflowID, v)
	case agentapi.PromptRequest:
		return storePrompt(ctx, st, workflowID, v)
	case agentapi.AgentLoopInput:
		if v.Prompt != "" {
			// A prompt of its own would stay inline: it becomes the last
			// of the prompts, where the run puts it.
			v.Prompts = append(slices.Clone(v.Prompts), agent.UserText(v.Prompt, 0))
			v.Prompt = ""
		}
		for _, g := range []*[]agent.Message{&v.Messages, &v.Prompts, &v.Steering, &v.FollowUps} {
			ms, err := storeMessages(ctx, st, workflowID, *g)
			if err != nil {
				return nil, err
			}
			*g = ms
		}
		return v, nil
	case agentapi.SessionInput:
		ms, err := storeMessages(ctx, st, workflowID, v.Messages)
		if err != nil {
			return nil, err
		}
		v.Messages = ms
		return v, nil
	}
	return arg, nil
}

func storeMessages(ctx context.Context, st store.Blobs, workflowID string, ms []agent.Message) ([]agent.Message, error) {
	if len(ms) == 0 {
		return ms, nil
	}
	out := make([]agent.Message, len(ms))
	for i, m := range ms {
		stored, err := store.OffloadMessage(ctx, st, workflowID, m)
		if err != nil {
			return nil, fmt.Errorf("store the content of message %d: %w", i, err)
		}
		out[i] = stored
	}
	return out, nil
}

// storePrompt stores a prompt's large content. Its text and images become
// its last message (where the session puts them) when they are large.
func storePrompt(ctx context.Context, st store.Blobs, workflowID string, r agentapi.PromptRequest) (agentapi.PromptRequest, error) {
	if r.Text != "" || len(r.Images) > 0 {
		m := agent.UserText(r.Text, 0)
		m.Content = append(m.Content, r.Images...)
		stored, err := store.OffloadMessage(ctx, st, workflowID, m)
		if err != nil {
			return r, err
		}
		if store.HasStubs(stored) {
			r.Messages = append(slices.Clone(r.Messages), stored)
			r.Text, r.Images = "", nil
		}
	}
	ms, err := storeMessages(ctx, st, workflowID, r.Messages)
	r.Messages = ms
	return r, err
}

// StartOptions say how a run is started.
type StartOptions struct {
	// Store, when set, is the workers' content store: the input's large
	// content is stored there before it is sent (StoreContent).
	Store store.Blobs
}

// StartWithOptions is Start with the input's large content stored first.
func StartWithOptions(ctx context.Context, c client.Client, id, taskQueue string, in agentapi.AgentLoopInput, o StartOptions) (client.WorkflowRun, error) {
	if id == "" && o.Store != nil {
		return nil, fmt.Errorf("start: a workflow id is needed to store the input's content under")
	}
	summary := RunSummary(in) // from the prompt as it is, not its stubs
	stored, err := StoreContent(ctx, o.Store, id, in)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	return start(ctx, c, id, taskQueue, stored.(agentapi.AgentLoopInput), summary)
}

// Signal sends a Signal (steer, followUp, prompt: the twins of the
// Updates, for clients that cannot wait for an answer) to the latest run of
// a workflow id, its argument's large content stored in st first (nil:
// sent as it is). A Signal cannot be refused: what a run cannot take it
// drops, with a note in QueryState's dropped.
func Signal(ctx context.Context, c client.Client, st store.Blobs, workflowID, name string, arg any) error {
	stored, err := StoreContent(ctx, st, workflowID, arg)
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, workflowID, err)
	}
	if _, err := updateArgs(workflowID, name, stored); err != nil {
		return err
	}
	return c.SignalWorkflow(ctx, workflowID, "", name, stored)
}
