package agentclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// Start starts an AgentLoop run.
func Start(ctx context.Context, c client.Client, id, taskQueue string, in agentapi.AgentLoopInput) (client.WorkflowRun, error) {
	return start(ctx, c, id, taskQueue, in, RunSummary(in))
}

// start starts an AgentLoop run with the Web UI's summary of it.
func start(ctx context.Context, c client.Client, id, taskQueue string, in agentapi.AgentLoopInput, summary string) (client.WorkflowRun, error) {
	if taskQueue == "" {
		taskQueue = agentapi.TaskQueue
	}
	// The Web UI's list shows the static summary (a session's: StartSession).
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:            id,
		TaskQueue:     taskQueue,
		StaticSummary: summary,
	}, agentapi.AgentLoopWorkflow, in)
}

// RunSummary is the Web UI's summary of an AgentLoop run: its prompt's
// title (the first line a session list shows), else "agent run".
func RunSummary(in agentapi.AgentLoopInput) string {
	prompts := in.Prompts
	if in.Prompt != "" {
		prompts = append([]agent.Message{agent.UserText(in.Prompt, 0)}, prompts...)
	}
	if title := agentapi.Title(prompts); title != "" {
		return title
	}
	return "agent run"
}

// Follow calls fn for every event of a run after sequence number after, as
// they are recorded, until the run has ended and every event was seen. An
// empty runID follows the latest run of the workflow id; a session that
// continues as new is followed into its next run, without a gap.
func Follow(ctx context.Context, c client.Client, workflowID, runID string, after int64, fn func(agent.Event)) error {
	return Watch(ctx, c, workflowID, runID, WatchOptions{After: after}, fn)
}

// Steer queues a steering message and returns the queue length.
func Steer(ctx context.Context, c client.Client, workflowID, text string) (agentapi.QueueStatus, error) {
	return queue(ctx, c, workflowID, agentapi.UpdateSteer, text)
}

// FollowUp queues a follow-up message and returns the queue length.
func FollowUp(ctx context.Context, c client.Client, workflowID, text string) (agentapi.QueueStatus, error) {
	return queue(ctx, c, workflowID, agentapi.UpdateFollowUp, text)
}

func queue(ctx context.Context, c client.Client, workflowID, update, text string) (agentapi.QueueStatus, error) {
	var st agentapi.QueueStatus
	err := Update(ctx, c, workflowID, update, agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text(text)}}, &st)
	return st, err
}

// Abort aborts a run.
func Abort(ctx context.Context, c client.Client, workflowID, reason string) (agentapi.AbortStatus, error) {
	var st agentapi.AbortStatus
	err := Update(ctx, c, workflowID, agentapi.UpdateAbort, agentapi.AbortRequest{Reason: reason}, &st)
	return st, err
}

// SetRemoteTools replaces a session's remote tools from its next run on
// (the setRemoteTools Update); none removes them. The session refuses a
// malformed declaration or a name its worker's tools already have.
func SetRemoteTools(ctx context.Context, c client.Client, sessionID string, tools []agent.RemoteTool) error {
	if tools == nil {
		tools = []agent.RemoteTool{} // [] removes them; null is refused
	}
	return Update(ctx, c, sessionID, agentapi.UpdateSetRemoteTools, agentapi.RemoteToolsRequest{RemoteTools: &tools}, nil)
}

// SetHooks replaces a session's beforeToolCall and afterToolCall hooks
// from its next run on (the setHooks Update): a nil list stays as it is,
// an empty one removes that event's hooks. The session refuses a
// malformed hook or a Go hook its worker does not have.
func SetHooks(ctx context.Context, c client.Client, sessionID string, before, after []agent.Hook) error {
	var req agentapi.HooksRequest
	if before != nil {
		req.BeforeToolCall = &before
	}
	if after != nil {
		req.AfterToolCall = &after
	}
	return Update(ctx, c, sessionID, agentapi.UpdateSetHooks, req, nil)
}

// State returns a run's state.
func State(ctx context.Context, c client.Client, workflowID string) (agentapi.RunState, error) {
	var st agentapi.RunState
	resp, err := c.QueryWorkflow(ctx, workflowID, "", agentapi.QueryState)
	if err != nil {
		return st, err
	}
	return st, resp.Get(&st)
}

// Update sends an Update to a run (the latest of the workflow id), waits for
// its result and decodes it into result (which may be nil). A nil arg sends
// no argument. It gives the Update a new ID and sends it again with that
// ID after failures unrelated to the Update (see UpdateWithOptions).
func Update(ctx context.Context, c client.Client, workflowID, name string, arg, result any) error {
	return UpdateWithOptions(ctx, c, workflowID, name, arg, result, UpdateOptions{})
}

// UpdateOptions say how an Update is sent.
type UpdateOptions struct {
	// ID is the Update's ID. A run applies an ID once however often it is
	// sent, within one workflow run (the server) and across
	// continue-as-new (the run carries the latest IDs): a client that
	// does not know whether its Update arrived sends it again with the
	// same ID. Empty means a new ID (NewUpdateID), kept across this
	// call's own retries.
	ID string
	// RetryFor bounds how long failures unrelated to the Update (the
	// server restarting, a worker being replaced, the run continuing as
	// new meanwhile) are retried; 0 means DefaultUpdateRetryFor. An Update
	// the run refuses or fails is never retried.
	RetryFor time.Duration
	// Store, when set, is the workers' content store: the argument's
	// large content is stored there before the Update is sent
	// (StoreContent), so history holds a stub.
	Store store.Blobs
}

// DefaultUpdateRetryFor is how long an Update is sent again after failures
// unrelated to it.
const DefaultUpdateRetryFor = time.Minute

// NewUpdateID returns a new random Update ID.
func NewUpdateID() string { return uuid.NewString() }

// UpdateWithOptions is Update with a given Update ID and retry bound.
func UpdateWithOptions(ctx context.Context, c client.Client, workflowID, name string, arg, result any, o UpdateOptions) error {
	arg, err := StoreContent(ctx, o.Store, workflowID, arg)
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, workflowID, err)
	}
	args, err := updateArgs(workflowID, name, arg)
	if err != nil {
		return err
	}
	if o.ID == "" {
		o.ID = NewUpdateID()
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultUpdateRetryFor
	}
	err = retryUpdate(ctx, o.RetryFor, func() error {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			UpdateID:     o.ID,
			WorkflowID:   workflowID,
			UpdateName:   name,
			Args:         args,
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err != nil {
			return err
		}
		return h.Get(ctx, result)
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, workflowID, err)
	}
	return nil
}

// maxPayloadBytes is Temporal's default limit on one payload.
const maxPayloadBytes = 2 << 20

func updateArgs(workflowID, name string, arg any) ([]any, error) {
	if arg == nil {
		return nil, nil
	}
	// The server answers an oversized Update with a vague workflow task
	// failure; say what is wrong before sending.
	if b, err := json.Marshal(arg); err == nil && len(b) > maxPayloadBytes {
		return nil, fmt.Errorf("%s %s: the argument is %d bytes; Temporal's payload limit is %d", name, workflowID, len(b), maxPayloadBytes)
	}
	return []any{arg}, nil
}

// StartSession starts a session and, when prompt is not nil, sends it its
// first prompt in the same request (Update-with-Start), returning the
// prompt's RunStatus. Sending it again with the same workflow id and
// o.ID starts nothing and applies the prompt once: the workflow id
// conflict policy is use-existing.
func StartSession(ctx context.Context, c client.Client, id, taskQueue string, in agentapi.SessionInput,
	prompt *agentapi.PromptRequest, o UpdateOptions) (client.WorkflowRun, agentapi.RunStatus, error) {
	if taskQueue == "" {
		taskQueue = agentapi.TaskQueue
	}
	// The Web UI's list shows the static summary; session list the memo.
	start := client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue, StaticSummary: "agent session"}
	if prompt != nil {
		if title := agentapi.Title([]agent.Message{{Content: []agent.Content{agent.Text(prompt.Text)}}}); title != "" {
			start.StaticSummary = title
			start.Memo = map[string]any{agentapi.MemoTitle: title}
		}
	}
	var st agentapi.RunStatus
	stored, err := StoreContent(ctx, o.Store, id, in)
	if err != nil {
		return nil, st, fmt.Errorf("start session %s: %w", id, err)
	}
	in = stored.(agentapi.SessionInput)
	if prompt != nil {
		p, err := StoreContent(ctx, o.Store, id, *prompt)
		if err != nil {
			return nil, st, fmt.Errorf("start session %s: %w", id, err)
		}
		r := p.(agentapi.PromptRequest)
		prompt = &r
	}
	if prompt == nil {
		run, err := c.ExecuteWorkflow(ctx, start, agentapi.SessionWorkflow, in)
		return run, st, err
	}
	args, err := updateArgs(id, agentapi.UpdatePrompt, *prompt)
	if err != nil {
		return nil, st, err
	}
	if o.ID == "" {
		o.ID = NewUpdateID()
	}
	if o.RetryFor <= 0 {
		o.RetryFor = DefaultUpdateRetryFor
	}
	start.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	var runID string
	err = retryUpdate(ctx, o.RetryFor, func() error {
		op := c.NewWithStartWorkflowOperation(start, agentapi.SessionWorkflow, in)
		h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: op,
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateID:     o.ID,
				WorkflowID:   id,
				UpdateName:   agentapi.UpdatePrompt,
				Args:         args,
				WaitForStage: client.WorkflowUpdateStageCompleted,
			},
		})
		if err != nil {
			return err
		}
		if err := h.Get(ctx, &st); err != nil {
			return err
		}
		runID = h.RunID()
		return nil
	})
	if err != nil {
		return nil, st, fmt.Errorf("start session %s with a prompt: %w", id, err)
	}
	return c.GetWorkflow(ctx, id, runID), st, nil
}

// retryUpdate sends an Update until the run answers it (its answer or its
// refusal), or it has failed for reasons unrelated to the Update for
// longer than retryFor.
func retryUpdate(ctx context.Context, retryFor time.Duration, send func() error) error {
	return retry(ctx, retryFor, func() error {
		err := send()
		var appErr *temporal.ApplicationError
		var canceled *temporal.CanceledError
		if errors.As(err, &appErr) || errors.As(err, &canceled) {
			return final{err} // the run's own answer: refused or failed
		}
		return err
	})
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
func eventsPage(ctx context.Context, c client.Client, workflowID, runID string, after int64, retryFor time.Duration) (agentapi.EventsPage, error) {
	var page agentapi.EventsPage
	err := retry(ctx, retryFor, func() error {
		resp, err := c.QueryWorkflow(ctx, workflowID, runID, agentapi.QueryEvents, agentapi.EventsQuery{After: after})
		if err != nil {
			return fmt.Errorf("query events of %s: %w", workflowID, err)
		}
		page = agentapi.EventsPage{}
		if err := resp.Get(&page); err != nil {
			return final{fmt.Errorf("decode events of %s: %w", workflowID, err)}
		}
		return nil
	})
	return page, err
}
