package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// Model-turn activity policy. Temporal owns retries: providers run with
// their own retries off, rate limits and outages come back as retryable
// errors (with the provider's retry-after), the rest as non-retryable ones.
// Attempts are unlimited: the run's ModelRetryTimeout (hours by default)
// bounds them, so a provider's outage is waited out. An attempt may stream
// for an hour, as long reasoning does; a worker that dies mid-stream is
// caught by the heartbeat timeout (a streaming turn beats at least every
// 10 s, silent model or not), not by the attempt's timeout.
const (
	modelTurnTimeout   = time.Hour
	modelHeartbeat     = 30 * time.Second
	modelRetryInterval = 30 * time.Second
)

// modelTurn is pi's streamAssistantResponse: one model call whose message
// joins the context. After an abort no call is made: the turn ends as pi's
// providers end it for an aborted signal.
//
// message_start comes before the call, so that clients showing the live
// stream (message_update, from the activity's heartbeats) see it first;
// nothing else happens between the two, so the order is pi's.
//
// overBudget, when set, is why the budget does not allow the call: the
// turn ends as an aborted one does, with stopReason budget.
func (l *loop) modelTurn(ctx workflow.Context, overBudget string) agent.Message {
	start := l.assistantShell(ctx)
	start.Usage = nil
	l.emit(agent.Event{Type: agent.EventMessageStart, Message: &start})
	var msg agent.Message
	l.turnPrepared = nil
	switch {
	case l.aborted:
		msg = l.abortedMessage(ctx)
	case overBudget != "":
		msg = l.budgetMessage(ctx, overBudget)
	default:
		msg = l.callModel(ctx)
	}
	if msg.Usage != nil {
		l.usage = l.usage.Add(*msg.Usage)
	}
	l.emit(agent.Event{Type: agent.EventMessageEnd, Message: &msg})
	l.push(msg)
	l.lastAssistant = msg
	l.reportTurn(ctx, msg)
	return msg
}

func (l *loop) callModel(ctx workflow.Context) agent.Message {
	base := agent.SegmentsLen(l.segments)
	ref := activities.ContextRef{
		Segments: l.segments,
		BaseLen:  base,
		BaseHash: l.context.HashAt(base),
		Delta:    l.context.Since(base),
		StoreID:  l.storeID,
	}
	if base == 0 {
		ref.SystemPrompt = l.context.SystemPrompt
	}
	opts := modelActivityOptions(l.cfg)
	opts.Summary = fmt.Sprintf("%s turn %d", l.cfg.Model, l.turn)
	actx := workflow.WithActivityOptions(l.activityCtx(), opts)
	prepare := l.prepareInTurn(ctx)
	events := l.logExcerpt()
	var f workflow.Future
	var drift driftWait
	for {
		f = workflow.ExecuteActivity(actx, a.ModelTurn, activities.ModelTurnInput{
			Model:   l.cfg.Model,
			Options: l.cfg.ModelOptions,
			Tools:   l.cfg.Tools,
			// Only runs with remote tools send them: the inputs of
			// others are as before.
			RemoteTools: l.remoteSchemas(),
			Defined:     l.definedTools(),
			Context:     ref,
			Turn:        l.turn,
			Prepare:     prepare,
			Events:      events,
		})
		l.wait(ctx, f)
		if !l.driftAgain(ctx, &drift, f.Get(ctx, nil), true) {
			break
		}
		if l.aborted {
			// Aborted while waiting for a worker that has the model.
			return l.abortedMessage(ctx)
		}
	}
	var out activities.ModelTurnOutput
	if err := f.Get(ctx, &out); err != nil {
		var cancelled *temporal.CanceledError
		if errors.As(err, &cancelled) {
			// Cancelled before the activity could answer: the call never
			// reached the model, which is what an aborted signal gives.
			return l.abortedMessage(ctx)
		}
		if m, ok := l.abortedFailure(ctx, err); ok {
			return m
		}
		if isOverflow(err) && !l.compact.overflowRetried && !l.aborted {
			// pi's overflow recovery: compact and send the turn again,
			// once; a second overflow ends the turn with the provider's
			// error.
			l.compact.overflowRetried = true
			defer func() { l.compact.overflowRetried = false }()
			if ok, _ := l.compactContext(ctx, l.activityCtx(), agent.CompactionOverflow, "", l.contextTokens()); ok {
				return l.callModel(ctx)
			}
		}
		return l.failedMessage(ctx, err)
	}
	if out.Retried != nil {
		l.usage = l.usage.Add(*out.Retried)
	}
	if prepare {
		l.turnPrepared = out.Prepared
	}
	l.watched = out.Watched
	// The store now holds the context this turn sent (an activity of an
	// older version returns no segments: the next turn sends it all again).
	if agent.SegmentsLen(out.Segments) > agent.SegmentsLen(l.segments) && agent.SegmentsLen(out.Segments) <= l.context.Len() {
		l.segments = out.Segments
		l.forget()
	}
	return out.Message
}

// logExcerpt is what the model turn about to be scheduled carries of the event
// log for watchers: the events since the last model turn was scheduled,
// when someone watched that turn (its worker read the watch lease). A
// watcher who has read the log up to there reads these from the history
// it long-polls, with no Query (agentclient/feed.go); nobody watching,
// history holds nothing more.
func (l *loop) logExcerpt() []agent.Event {
	after := l.carriedUpTo
	l.carriedUpTo = l.events.last()
	if !l.watched {
		return nil
	}
	return l.events.excerpt(after, maxExcerptBytes)
}

// assistantShell is an assistant message for this run's model with no
// content, as pi-ai builds its error and aborted messages.
func (l *loop) assistantShell(ctx workflow.Context) agent.Message {
	return agent.Message{
		Role:      agent.RoleAssistant,
		Content:   []agent.Content{},
		Provider:  l.cfg.Model.Provider,
		Model:     l.cfg.Model.ID,
		Usage:     &agent.Usage{},
		Timestamp: workflow.Now(ctx).UnixMilli(),
	}
}

func (l *loop) abortedMessage(ctx workflow.Context) agent.Message {
	m := l.assistantShell(ctx)
	m.StopReason = agent.StopReasonAborted
	m.ErrorMessage = agent.AbortedErrorMessage
	return m
}

// failedMessage ends the turn as pi ends a failed call: an assistant message
// with stopReason error and the provider's error text, keeping what the
// provider had returned (api, usage, partial content) when the activity
// passed it along.
func (l *loop) failedMessage(ctx workflow.Context, err error) agent.Message {
	m := l.assistantShell(ctx)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.HasDetails() {
		partial, retried := failureDetails(appErr)
		l.usage = l.usage.Add(retried)
		if partial.Role == agent.RoleAssistant {
			m.API, m.ResponseID, m.ResponseModel = partial.API, partial.ResponseID, partial.ResponseModel
			m.Content = append(m.Content, partial.Content...)
			if partial.Usage != nil {
				m.Usage = partial.Usage
			}
		}
	}
	m.StopReason = agent.StopReasonError
	m.ErrorMessage = failureText(err)
	return m
}

// failureText is the innermost message of an activity failure: the
// provider's or tool's own words rather than Temporal's wrapping.
func failureText(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) {
		return "model call " + timeoutText(timeoutErr)
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// failureDetails reads a model activity's error details: what the provider
// had returned, and what earlier attempts were billed (a second detail
// that failures recorded before budgets lack).
func failureDetails(appErr *temporal.ApplicationError) (agent.Message, agent.Usage) {
	var partial agent.Message
	var retried agent.Usage
	if appErr.Details(&partial, &retried) != nil {
		partial, retried = agent.Message{}, agent.Usage{}
		_ = appErr.Details(&partial)
	}
	return partial, retried
}
