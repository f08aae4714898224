package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
)

// ModelTurn makes one model call with the run's context and returns the
// final assistant message. The context comes as a reference plus the new
// messages (see ContextRef); while the model answers, the new messages are
// stored as a segment, so the next turn on any worker can read them. Provider failures become ApplicationErrors whose
// type is the llm.ErrorKind: retryable for rate limits and outages (with the
// provider's retry-after as the next delay), non-retryable otherwise. An
// aborted call is a message with stopReason aborted, not an error.
func (a *Activities) ModelTurn(ctx context.Context, in ModelTurnInput) (ModelTurnOutput, error) {
	model, err := a.Models.Model(in.Model)
	if err != nil {
		return ModelTurnOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrUnknownModel, nil)
	}
	// A worker that shuts down interrupts the turn after its grace; the
	// retry streams it again on another worker at once.
	ctx, stopWork := a.interruptible(ctx)
	defer stopWork()
	tc, err := a.loadContext(ctx, in.Context)
	if err != nil {
		return ModelTurnOutput{}, err
	}
	type saved struct {
		segs []agent.Segment
		err  error
	}
	saving := make(chan saved, 1)
	go func() {
		segs, err := a.saveSegments(ctx, in.Context, tc.t)
		saving <- saved{segs, err}
	}()
	req := llm.Request{
		SystemPrompt: tc.t.SystemPrompt,
		Messages:     tc.resolved,
		Tools:        a.modelTools(in.Tools),
		Options:      in.Options,
	}

	prior := priorBilled(ctx)
	streamCtx, live := a.startLiveStream(ctx, in.Turn, prior)
	msg, err := model.Stream(streamCtx, req, live.emit)
	live.close()
	s := <-saving
	if interrupted(streamCtx) && (err != nil || msg.StopReason == agent.StopReasonAborted) {
		a.recordBilled(ctx, live, prior, &msg)
		return ModelTurnOutput{}, shutdownError("the model turn")
	}
	if err != nil {
		if e, ok := llm.AsError(err); !ok || e.Kind.Retryable() {
			// The next attempt finds this one's usage (billed.go).
			a.recordBilled(ctx, live, prior, &msg)
		}
		if stub, oerr := a.offloadMessage(ctx, msg); oerr == nil {
			msg = stub
		} else {
			msg.Content = nil
		}
		return ModelTurnOutput{}, modelError(err, msg, prior)
	}
	if s.err != nil {
		return ModelTurnOutput{}, s.err
	}
	if msg.Timestamp == 0 {
		msg.Timestamp = time.Now().UnixMilli()
	}
	if msg.Role == "" {
		msg.Role = agent.RoleAssistant
	}
	stub, err := a.offloadMessage(ctx, msg)
	if err != nil {
		return ModelTurnOutput{}, err
	}
	tc.storedAs(s.segs)
	tc.t.Append(stub)
	tc.resolved = append(tc.resolved, msg)
	a.remember(ctx, tc)
	return ModelTurnOutput{Message: stub, Segments: s.segs, Retried: usagePtr(prior)}, nil
}

// modelTools describes the run's tools to the model; a name ending in
// "*" stands for the tools it is a prefix of (an MCP server's).
func (a *Activities) modelTools(names []string) []llm.Tool {
	names = a.Tools.Expand(names)
	out := make([]llm.Tool, 0, len(names))
	for _, n := range names {
		t, ok := a.Tools.Get(n)
		if !ok {
			continue
		}
		d := t.Definition()
		params := d.Parameters
		if len(params) == 0 {
			params = []byte(`{"type":"object","properties":{}}`)
		}
		out = append(out, llm.Tool{Name: d.Name, Description: d.Description, Parameters: params})
	}
	return out
}

// modelError turns a provider failure into an error Temporal can act on.
// What the provider had returned (api, usage, partial content) goes along
// as the error's details: when retries are exhausted, the workflow ends
// the turn with it, as pi-ai ends a failed stream. The second detail is
// what earlier attempts were billed (billed.go).
func modelError(err error, partial agent.Message, retried agent.Usage) error {
	e, ok := llm.AsError(err)
	if !ok {
		return temporal.NewApplicationErrorWithOptions(err.Error(), string(llm.ErrUnavailable),
			temporal.ApplicationErrorOptions{Cause: err, Details: []any{partial, retried}})
	}
	opts := temporal.ApplicationErrorOptions{NonRetryable: !e.Kind.Retryable(), Details: []any{partial, retried}}
	if e.RetryAfter > 0 {
		opts.NextRetryDelay = e.RetryAfter
	}
	if e.Kind == llm.ErrWorkerShutdown {
		opts.NextRetryDelay = shutdownRetryDelay
	}
	return temporal.NewApplicationErrorWithOptions(e.Message, string(e.Kind), opts)
}
