package workflows

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

type signalChannels struct {
	steer, followUp, abort, approve, prompt, toolUpdate, toolQueue, subAgent workflow.ReceiveChannel
}

// registerHandlers installs the Updates, Signals and Queries before the run
// can block, so nothing sent early is refused.
func (l *loop) registerHandlers(ctx workflow.Context) error {
	l.signals = signalChannels{
		steer:      workflow.GetSignalChannel(ctx, agentapi.SignalSteer),
		followUp:   workflow.GetSignalChannel(ctx, agentapi.SignalFollowUp),
		abort:      workflow.GetSignalChannel(ctx, agentapi.SignalAbort),
		approve:    workflow.GetSignalChannel(ctx, agentapi.SignalApprove),
		prompt:     workflow.GetSignalChannel(ctx, agentapi.SignalPrompt),
		toolUpdate: workflow.GetSignalChannel(ctx, agentapi.SignalToolUpdate),
		toolQueue:  workflow.GetSignalChannel(ctx, agentapi.SignalToolQueue),
		subAgent:   workflow.GetSignalChannel(ctx, agentapi.SignalSubAgent),
	}
	queueUpdate := func(q *queue) (func(workflow.Context, messageArg) (agentapi.QueueStatus, error), func(workflow.Context, messageArg) error) {
		validate := func(ctx workflow.Context, arg messageArg) error {
			if l.applied(ctx) {
				return nil
			}
			if err := arg.FieldError(); err != nil {
				return err
			}
			m := arg.Message
			if l.status == agentapi.StatusEnded || l.status == agentapi.StatusFailed {
				return errors.New("the run has ended; start a new run to send more messages")
			}
			if err := checkQueuedMessage(&m, false); err != nil {
				return err
			}
			if err := checkOwnStubs(ctx, []agent.Message{m}); err != nil {
				return err
			}
			return l.checkRoom(l.inlineBytes(m))
		}
		handle := func(ctx workflow.Context, arg messageArg) (agentapi.QueueStatus, error) {
			m := arg.Message
			return once(l, ctx, func() (agentapi.QueueStatus, error) {
				_ = checkQueuedMessage(&m, false) // fills the default role the validator allowed
				if err := l.enqueue(ctx, q, m); err != nil {
					return agentapi.QueueStatus{}, err
				}
				return agentapi.QueueStatus{Queued: len(q.items)}, nil
			})
		}
		return handle, validate
	}
	for _, u := range []struct {
		name string
		q    *queue
	}{{agentapi.UpdateSteer, &l.steering}, {agentapi.UpdateFollowUp, &l.followUps}} {
		handle, validate := queueUpdate(u.q)
		if err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, handle,
			workflow.UpdateHandlerOptions{Validator: validate}); err != nil {
			return err
		}
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, agentapi.UpdateAbort, func(ctx workflow.Context, r abortArg) (agentapi.AbortStatus, error) {
		return once(l, ctx, func() (agentapi.AbortStatus, error) {
			already := l.aborted
			l.abort(abortReason(r.Reason))
			return agentapi.AbortStatus{AlreadyAborted: already}, nil
		})
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, r abortArg) error {
		if l.applied(ctx) {
			return nil
		}
		return r.FieldError()
	}}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, agentapi.UpdateApprove,
		func(ctx workflow.Context, r agentapi.ApproveRequest) (agentapi.ApprovalStatus, error) {
			return once(l, ctx, func() (agentapi.ApprovalStatus, error) {
				l.decide(r)
				return agentapi.ApprovalStatus{Pending: len(l.pendingApprovals())}, nil
			})
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, r agentapi.ApproveRequest) error {
			if l.applied(ctx) {
				return nil
			}
			if err := r.FieldError(); err != nil {
				return err
			}
			return l.checkApproval(r)
		}},
	); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, agentapi.UpdateSetBudget,
		func(ctx workflow.Context, b budgetArg) (agentapi.BudgetState, error) {
			return l.setBudget(ctx, b.Budget)
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, b budgetArg) error {
			if l.applied(ctx) {
				return nil
			}
			if err := b.FieldError(); err != nil {
				return err
			}
			return l.checkSetBudget(ctx, b.Budget)
		}}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, agentapi.QueryEvents, func(q agentapi.EventsQuery) (agentapi.EventsPage, error) {
		return agentapi.EventsPage{
			Events:         l.events.page(q),
			First:          l.events.first,
			Last:           l.events.last(),
			Done:           l.status == agentapi.StatusEnded || l.status == agentapi.StatusFailed || l.status == agentapi.StatusContinued,
			ContinuedAsNew: l.status == agentapi.StatusContinued,
			PreviousRunID:  workflow.GetInfo(ctx).ContinuedExecutionRunID,
		}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, agentapi.QueryState, func() (agentapi.RunState, error) { return l.state(), nil }); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, agentapi.QueryContext, l.contextPage); err != nil {
		return err
	}
	return nil
}

func abortReason(r string) string {
	if r == "" {
		return "aborted by request"
	}
	return r
}

// onSignal is a selector case that hands fn the signal its channel holds,
// decoded as a T, when there is one.
func onSignal[T any](fn func(T)) func(workflow.ReceiveChannel, bool) {
	return func(c workflow.ReceiveChannel, _ bool) {
		var v T
		if c.ReceiveAsync(&v) {
			fn(v)
		}
	}
}

// addSignalCases adds the signal channels and the workflow's cancellation to
// a selector. They are added before any future, and only the main coroutine
// selects on them: the SDK's Select takes the first ready case in order, and
// every event of a workflow task is delivered before coroutines run, so a
// signal that precedes an activity result in history is handled before it.
func (l *loop) addSignalCases(s workflow.Selector) {
	s.AddReceive(l.signals.abort, onSignal(func(v any) {
		// Any payload aborts: {"reason": ...}, a bare string, or nothing.
		reason, _ := v.(string)
		if m, ok := v.(map[string]any); ok {
			reason, _ = m["reason"].(string)
		}
		l.abort(abortReason(reason))
	}))
	if l.promptSignal != nil {
		s.AddReceive(l.signals.prompt, onSignal(func(r agentapi.PromptRequest) { l.promptSignal(r) }))
	}
	s.AddReceive(l.signals.approve, onSignal(func(r agentapi.ApproveRequest) {
		if err := l.checkApproval(r); err != nil {
			workflow.GetLogger(l.rootCtx).Warn("Dropped an invalid approve signal", "Error", err)
			return
		}
		l.decide(r)
	}))
	s.AddReceive(l.signals.toolUpdate, onSignal(l.toolUpdate))
	s.AddReceive(l.signals.subAgent, onSignal(func(m agentapi.SubAgentSignal) { l.subAgentSignal(l.baseCtx, m) }))
	s.AddReceive(l.signals.steer, func(c workflow.ReceiveChannel, _ bool) { l.receiveQueued(c, &l.steering) })
	s.AddReceive(l.signals.followUp, func(c workflow.ReceiveChannel, _ bool) { l.receiveQueued(c, &l.followUps) })
	s.AddReceive(l.signals.toolQueue, onSignal(func(q agentapi.ToolQueue) {
		if err := checkQueuedMessage(&q.Message, true); err != nil {
			workflow.GetLogger(l.rootCtx).Warn("Dropped an invalid message queued by a tool", "Error", err)
			return
		}
		l.toolQueued(q)
	}))
	if !l.cancelled {
		s.AddReceive(l.rootCtx.Done(), func(workflow.ReceiveChannel, bool) {
			// A cancellation from the CLI or UI ends the run as an abort.
			l.cancelled = true
			l.abort("workflow cancelled")
		})
	}
}

// wait blocks until f is ready, handling signals meanwhile, then handles
// the signals delivered with it.
func (l *loop) wait(ctx workflow.Context, f workflow.Future) {
	for !f.IsReady() {
		s := workflow.NewSelector(ctx)
		l.addSignalCases(s)
		s.AddFuture(f, func(workflow.Future) {})
		s.Select(ctx)
	}
	l.drainSignals(ctx)
}

// drainSignals handles every signal already delivered. It runs before each
// decision of the loop: scheduling a stage, emitting a tool's end, polling
// a queue.
func (l *loop) drainSignals(ctx workflow.Context) {
	for {
		s := workflow.NewSelector(ctx)
		l.addSignalCases(s)
		if !s.HasPending() {
			return
		}
		s.Select(ctx)
	}
}

// toolUpdate records partial results of a running call, in order. In a
// parallel batch they wait their turn with the batch's other events.
// Updates for a call that has ended are dropped, as pi drops late onUpdate
// calls.
func (l *loop) toolUpdate(u agentapi.ToolUpdate) {
	call := l.running(u.ToolCallID, u.Position)
	if call == nil {
		return
	}
	for i := range u.Results {
		r := u.Results[i]
		e := agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: u.ToolCallID,
			ToolName: call.call.Name, Args: call.call.Arguments, RawArgs: call.call.RawArguments, PartialResult: &r}
		c := (*chain)(nil)
		if l.batch != nil {
			c = l.batch.chainOf(u.ToolCallID, call.pos)
		}
		if c == nil {
			l.emit(e)
			continue
		}
		at := int64(0)
		if i < len(u.Offsets) {
			at = u.Offsets[i].Milliseconds()
		}
		c.progress = max(c.progress, at)
		l.batch.hold(heldEvent{at: at, index: c.index, event: e})
	}
}

// toolQueued takes a message a running tool queued. In a parallel batch it
// waits its turn with the batch's events, so that the calls' messages are
// queued in pi's order whichever signal arrives first; elsewhere (one call
// at a time) arrival is pi's order.
func (l *loop) toolQueued(q agentapi.ToolQueue) {
	if !l.keepsAttempt(q) {
		return
	}
	if l.batch != nil && q.ToolCallID != "" {
		if c := l.batch.chainOf(q.ToolCallID, q.Position); c != nil {
			at := q.Offset.Milliseconds()
			c.progress = max(c.progress, at)
			l.batch.hold(heldEvent{at: at, index: c.index, queued: &q})
			return
		}
	}
	l.queueFromTool(q)
}

func (l *loop) queueFromTool(q agentapi.ToolQueue) {
	from := toolAttempt{callID: attemptKey(q.ToolCallID, q.Position), attempt: q.Attempt}
	if q.FollowUp {
		l.followUps.pushFrom(q.Message, from)
	} else {
		l.steering.pushFrom(q.Message, from)
	}
}

func (l *loop) state() agentapi.RunState {
	return agentapi.RunState{
		Status:           l.status,
		Turn:             l.turn,
		PendingToolCalls: l.pendingIDs(),
		Steering:         append([]agent.Message{}, l.steering.items...),
		FollowUps:        append([]agent.Message{}, l.followUps.items...),
		Aborted:          l.aborted,
		AbortReason:      l.abortReason,
		Messages:         l.context.Len(),
		LastEvent:        l.events.last(),
		StopReason:       l.stopReason,
		Usage:            l.usage,
		PendingApprovals: l.pendingApprovals(),
		AllowedTools:     slices.Sorted(maps.Keys(l.allowed)),
		Model:            l.settings.Model,
		ThinkingLevel:    thinkingLevel(l.settings.ModelOptions.Reasoning),
		ToolExecution:    l.settings.ToolExecution,
		SteeringMode:     l.steering.mode,
		FollowUpMode:     l.followUps.mode,
		ContextTokens:    l.contextTokens(),
		ContextWindow:    l.compact.window,
		Compactions:      l.compact.count,
		TokensSaved:      l.compact.tokensSaved,
		Budget:           l.budgetState(),
		Dropped:          append([]agentapi.DroppedMessage{}, l.inputs.dropped...),
	}
}

func thinkingLevel(reasoning string) string {
	if reasoning == "" {
		return "off"
	}
	return reasoning
}

// maxContextPageBytes bounds one QueryContext answer.
const maxContextPageBytes = 1 << 20

func (l *loop) contextPage(q agentapi.ContextQuery) (agentapi.ContextPage, error) {
	total := l.context.Len()
	if q.From < 0 || q.From > total {
		return agentapi.ContextPage{}, fmt.Errorf("from %d out of range [0, %d]", q.From, total)
	}
	to := q.To
	if to <= 0 || to > total {
		to = total
	}
	// Messages before the held tail are in the segments, which the
	// client reads from the content store.
	from := max(q.From, l.context.Offset)
	page := agentapi.ContextPage{SystemPrompt: l.context.SystemPrompt, Segments: l.segments,
		Offset: l.context.Offset, Total: total, Next: from, Messages: []agent.Message{}}
	size := 0
	for i := from; i < to; i++ {
		n := l.context.MessageSize(i)
		if i > from && size+n > maxContextPageBytes {
			break
		}
		size += n
		page.Messages = append(page.Messages, l.context.At(i))
		page.Next = i + 1
	}
	return page, nil
}
