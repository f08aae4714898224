// Package agentclient is the client side of agent runs: start one, follow
// its event log, and send it steering, follow-up and abort. The starter
// command is a thin shell over it.
package agentclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/workflows"
)

// Start starts an AgentLoop run.
func Start(ctx context.Context, c client.Client, id, taskQueue string, in workflows.AgentLoopInput) (client.WorkflowRun, error) {
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: taskQueue,
	}, workflows.AgentLoopWorkflow, in)
}

// Follow calls fn for every event of a run after sequence number after, as
// they are recorded, until the run has ended and every event was seen. An
// empty runID follows the latest run of the workflow id; a session that
// continues as new is followed into its next run, without a gap.
func Follow(ctx context.Context, c client.Client, workflowID, runID string, after int64, fn func(agent.Event)) error {
	return Watch(ctx, c, workflowID, runID, WatchOptions{After: after}, fn)
}

// Steer queues a steering message and returns the queue length.
func Steer(ctx context.Context, c client.Client, workflowID, text string) (workflows.QueueStatus, error) {
	return queue(ctx, c, workflowID, workflows.UpdateSteer, text)
}

// FollowUp queues a follow-up message and returns the queue length.
func FollowUp(ctx context.Context, c client.Client, workflowID, text string) (workflows.QueueStatus, error) {
	return queue(ctx, c, workflowID, workflows.UpdateFollowUp, text)
}

func queue(ctx context.Context, c client.Client, workflowID, update, text string) (workflows.QueueStatus, error) {
	var st workflows.QueueStatus
	err := updateAndWait(ctx, c, workflowID, update, agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text(text)}}, &st)
	return st, err
}

// Abort aborts a run.
func Abort(ctx context.Context, c client.Client, workflowID, reason string) (workflows.AbortStatus, error) {
	var st workflows.AbortStatus
	err := updateAndWait(ctx, c, workflowID, workflows.UpdateAbort, activities.AbortRequest{Reason: reason}, &st)
	return st, err
}

// State returns a run's state.
func State(ctx context.Context, c client.Client, workflowID string) (workflows.RunState, error) {
	var st workflows.RunState
	resp, err := c.QueryWorkflow(ctx, workflowID, "", workflows.QueryState)
	if err != nil {
		return st, err
	}
	return st, resp.Get(&st)
}

// Update sends an Update to a run (the latest of the workflow id), waits for
// its result and decodes it into result (which may be nil). A nil arg sends
// no argument.
func Update(ctx context.Context, c client.Client, workflowID, name string, arg, result any) error {
	return updateAndWait(ctx, c, workflowID, name, arg, result)
}

// maxPayloadBytes is Temporal's default limit on one payload.
const maxPayloadBytes = 2 << 20

func updateAndWait(ctx context.Context, c client.Client, workflowID, name string, arg, result any) error {
	var args []any
	if arg != nil {
		args = []any{arg}
		// The server answers an oversized Update with a vague workflow task
		// failure; say what is wrong before sending.
		if b, err := json.Marshal(arg); err == nil && len(b) > maxPayloadBytes {
			return fmt.Errorf("%s %s: the argument is %d bytes; Temporal's payload limit is %d", name, workflowID, len(b), maxPayloadBytes)
		}
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   name,
		Args:         args,
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, workflowID, err)
	}
	if err := h.Get(ctx, result); err != nil {
		return fmt.Errorf("%s %s: %w", name, workflowID, err)
	}
	return nil
}

// Events reads one run's event log as it stands, with the events Query
// page by page; unlike Follow it neither waits for the end nor follows
// continue-as-new. Transient failures are retried for DefaultRetryFor.
func Events(ctx context.Context, c client.Client, workflowID, runID string) ([]agent.Event, error) {
	var all []agent.Event
	var after int64
	for {
		page, err := eventsPage(ctx, c, workflowID, runID, after, 0)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Events...)
		if len(page.Events) == 0 || page.Events[len(page.Events)-1].Seq >= page.Last {
			return all, nil
		}
		after = page.Events[len(page.Events)-1].Seq
	}
}

// ResolveEvents resolves the stubs of large content in events from the
// content store the workers use.
func ResolveEvents(ctx context.Context, st store.Blobs, events []agent.Event) ([]agent.Event, error) {
	out := make([]agent.Event, len(events))
	for i, e := range events {
		r, err := resolveEvent(ctx, st, e, 0)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// resolveEvent resolves one event, retrying a store that does not answer
// for retryFor; missing or corrupt content fails at once.
func resolveEvent(ctx context.Context, st store.Blobs, e agent.Event, retryFor time.Duration) (agent.Event, error) {
	var out agent.Event
	err := retry(ctx, retryFor, func() (err error) {
		out, err = store.ResolveEvent(ctx, st, e)
		if err != nil && store.IsPermanent(err) {
			return final{fmt.Errorf("event %d: %w", e.Seq, err)}
		}
		return err
	})
	return out, err
}

// ResolveMessages resolves the stubs of large content in messages, such
// as an AgentLoopResult's.
func ResolveMessages(ctx context.Context, st store.Blobs, ms []agent.Message) ([]agent.Message, error) {
	return store.ResolveMessages(ctx, st, ms)
}

// eventsPage reads the events after a sequence number, retrying transient
// failures for retryFor.
func eventsPage(ctx context.Context, c client.Client, workflowID, runID string, after int64, retryFor time.Duration) (workflows.EventsPage, error) {
	var page workflows.EventsPage
	err := retry(ctx, retryFor, func() error {
		resp, err := c.QueryWorkflow(ctx, workflowID, runID, workflows.QueryEvents, workflows.EventsQuery{After: after})
		if err != nil {
			return fmt.Errorf("query events of %s: %w", workflowID, err)
		}
		page = workflows.EventsPage{}
		if err := resp.Get(&page); err != nil {
			return final{fmt.Errorf("decode events of %s: %w", workflowID, err)}
		}
		return nil
	})
	return page, err
}
