package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// ModelTurn makes one model call with the run's context and returns the
// final assistant message. The context comes as a reference plus the new
// messages (see ContextRef); while the model answers, the new messages are
// stored as a segment, so the next turn on any worker can read them. Provider failures become ApplicationErrors whose
// type is the llm.ErrorKind: retryable for rate limits and outages (with the
// provider's retry-after as the next delay), non-retryable otherwise. An
// aborted call is a message with stopReason aborted, not an error. A worker
// that lacks the run's model or tools fails with the retryable ConfigDrift.
func (a *Activities) ModelTurn(ctx context.Context, in ModelTurnInput) (ModelTurnOutput, error) {
	// The run resolved its model and tools (on some worker): what this
	// worker lacks of them is drift, never a reason to answer without them.
	model, err := a.Models.Model(in.Model)
	if err != nil {
		return ModelTurnOutput{}, a.lacks("model %s: %v", in.Model, err)
	}
	if missing := a.missingTools(in.Tools); len(missing) > 0 {
		return ModelTurnOutput{}, a.lacks("tools %q", missing)
	}
	// A worker that shuts down interrupts the turn after its grace; the
	// retry streams it again on another worker at once.
	ctx, stopWork := a.interruptible(ctx)
	defer stopWork()
	ctx, prior := keepBilled(ctx)
	tc, err := a.loadContext(ctx, in.Context)
	if err != nil {
		return ModelTurnOutput{}, err
	}
	saving := make(chan saved, 1)
	saveCtx, stopSaving := context.WithCancel(ctx)
	defer stopSaving()
	go func() {
		segs, err := a.saveSegments(saveCtx, in.Context, tc.t)
		saving <- saved{segs, err}
	}()
	req := llm.Request{
		SystemPrompt: tc.t.SystemPrompt,
		Messages:     tc.resolved,
		Tools:        append(append(a.modelTools(in.Tools), remoteModelTools(in.RemoteTools)...), definedTools(in.Defined)...),
		Options:      in.Options,
	}

	streamCtx, live := a.startLiveStream(ctx, in.Turn, prior)
	msg, err := model.Stream(streamCtx, req, live.emit)
	live.close()
	s := awaitSave(saving, stopSaving)
	if interrupted(streamCtx) && (err != nil || msg.StopReason == agent.StopReasonAborted) {
		a.recordBilled(ctx, live, prior, &msg)
		return ModelTurnOutput{}, shutdownError("the model turn")
	}
	if err != nil {
		if e, ok := llm.AsError(err); !ok || e.Kind.Retryable() {
			// The next attempt finds this one's usage (billed.go).
			a.recordBilled(ctx, live, prior, &msg)
		}
		if stub, oerr := a.offloadAnswer(ctx, msg); oerr == nil {
			msg = stub
		} else {
			msg.Content = nil
		}
		return ModelTurnOutput{}, modelError(err, msg, prior)
	}
	if s.err != nil {
		// The answer is kept: the segments stay as they were, and the next
		// turn sends the context this one could not store.
		activity.GetLogger(ctx).Warn("Could not store the turn's context; the next turn sends it again", "Error", s.err)
		s.segs = nil
	}
	if msg.Timestamp == 0 {
		msg.Timestamp = time.Now().UnixMilli()
	}
	if msg.Role == "" {
		msg.Role = agent.RoleAssistant
	}
	stub, err := a.offloadAnswer(ctx, msg)
	if err != nil {
		// The answer is too large to return without the store: the retry
		// asks again, and this call's usage goes with it.
		a.recordBilled(ctx, live, prior, &msg)
		return ModelTurnOutput{}, err
	}
	if err := answerTooLarge(stub, prior); err != nil {
		return ModelTurnOutput{}, err
	}
	tc.storedAs(s.segs)
	tc.t.Append(stub)
	tc.resolved = append(tc.resolved, msg)
	a.remember(ctx, tc)
	out := ModelTurnOutput{Message: stub, Segments: s.segs, Retried: usagePtr(prior), Watched: live.leased()}
	if in.Prepare {
		out.Prepared = a.prepareCalls(stub)
	}
	return out, nil
}

// saveGrace is how long a finished model call waits for its context's
// segment when the store is slow or down. The segment was being written
// while the model answered; past the grace the answer is worth more than
// the segment, which the next turn writes again. With the stream's last
// heartbeat at most half the 30 s heartbeat timeout before (livenessOf),
// it stays under the timeout even when a slow store sends no heartbeat.
const saveGrace = 10 * time.Second

// awaitSave waits for the segment save up to saveGrace, then stops it.
func awaitSave(saving <-chan saved, stop context.CancelFunc) saved {
	t := time.NewTimer(saveGrace)
	defer t.Stop()
	select {
	case s := <-saving:
		return s
	case <-t.C:
		stop()
		return <-saving
	}
}

// inlineAnswerMax bounds an answer returned whole because the store could
// not take its large parts: well under Temporal's 2 MB payload limit.
const inlineAnswerMax = 256 << 10

// offloadAnswer stores the answer's large parts, waiting at most saveGrace
// for a store that does not answer; an answer of up to inlineAnswerMax is
// then returned whole rather than lost.
func (a *Activities) offloadAnswer(ctx context.Context, msg agent.Message) (agent.Message, error) {
	octx, cancel := context.WithTimeout(ctx, saveGrace)
	defer cancel()
	stub, err := a.offloadMessage(octx, msg)
	if err == nil || ctx.Err() != nil || jsonSize(&msg) > inlineAnswerMax {
		return stub, err
	}
	activity.GetLogger(ctx).Warn("Could not store the answer's large parts; it goes whole into history", "Error", err)
	return msg, nil
}

// maxAnswerBytes bounds an answer once its text and images are in the
// store: what stays (tool calls' arguments) must fit the activity's result,
// which Temporal refuses over 2 MB, with room for the rest of the output.
const maxAnswerBytes = 3 << 19

// ErrAnswerTooLarge is the ApplicationError type of an answer over
// maxAnswerBytes. Asking again would likely get the same answer.
const ErrAnswerTooLarge = "AnswerTooLarge"

// answerTooLarge ends the turn with a clear error, the answer's usage
// kept, when the answer cannot be returned; Temporal's own failure
// ("Complete result exceeds size limit.") names neither the model nor why.
func answerTooLarge(stub agent.Message, prior agent.Usage) error {
	n := jsonSize(&stub)
	if n <= maxAnswerBytes {
		return nil
	}
	partial := stub
	partial.Content = nil
	text := fmt.Sprintf("The model's answer is too large: %s of it (tool calls' arguments) must stay in history, over the %s a model turn may return",
		tools.FormatSize(n), tools.FormatSize(maxAnswerBytes))
	return temporal.NewNonRetryableApplicationError(text, ErrAnswerTooLarge, nil, partial, prior)
}

// saved is what a segment save ended with.
type saved struct {
	segs []agent.Segment
	err  error
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

// remoteModelTools describes the run's remote tools to the model.
func remoteModelTools(ts []ToolSchema) []llm.Tool {
	out := make([]llm.Tool, 0, len(ts))
	for _, t := range ts {
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = []byte(`{"type":"object","properties":{}}`)
		}
		out = append(out, llm.Tool{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out
}

// definedTools describes the tools the run defines itself.
func definedTools(specs []agent.ToolSpec) []llm.Tool {
	out := make([]llm.Tool, 0, len(specs))
	for _, s := range specs {
		out = append(out, llm.Tool{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
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
