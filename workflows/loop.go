package workflows

import (
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// AgentLoop runs pi's agent loop (runAgentLoop / runAgentLoopContinue) as a
// workflow: each model turn and each prepare, execute and finalize stage of
// a tool call is an activity; events go to a durable log read with
// QueryEvents; steering, follow-up and abort arrive as Updates or Signals.
// A long run continues as new between two turns when the server suggests
// it or after ContinueAsNewAfterTurns turns; its events go on in the next
// workflow run of the same id without a gap.
func AgentLoop(ctx workflow.Context, in agentapi.AgentLoopInput) (agentapi.AgentLoopResult, error) {
	prompts, inputErr := checkInput(ctx, &in)
	l := newLoop(ctx, in.LoopConfig, in.Messages)
	l.steering.items = in.Steering
	l.followUps.items = in.FollowUps
	l.restore(in.Carry)
	l.continueAfterTurns = in.ContinueAsNewAfterTurns
	l.continueAfterEvents = in.ContinueAsNewAfterEvents
	l.adoptParent(in.Parent)
	if err := l.registerHandlers(ctx); err != nil {
		return agentapi.AgentLoopResult{}, err
	}
	if inputErr != nil {
		l.status = agentapi.StatusFailed
		return agentapi.AgentLoopResult{}, temporal.NewNonRetryableApplicationError("invalid input: "+inputErr.Error(), agentapi.ErrInvalidInput, nil)
	}
	if err := l.resolve(ctx); err != nil {
		l.status = agentapi.StatusFailed
		return agentapi.AgentLoopResult{}, err
	}
	msgs := in.Messages
	if in.Carry == nil {
		adopted, err := l.adoptInput(ctx, &msgs, &prompts, &l.steering.items, &l.followUps.items)
		if err != nil {
			l.status = agentapi.StatusFailed
			return agentapi.AgentLoopResult{}, temporal.NewNonRetryableApplicationError("invalid input: "+err.Error(), agentapi.ErrInvalidInput, nil)
		}
		if adopted {
			l.replaceContext(msgs)
		}
	}
	l.suspend = func() bool { return l.shouldContinueAsNew(ctx) }
	l.checkHost(ctx)
	// After adoption: msgs' stubs of other runs now name this run's copies.
	l.storeStart(ctx, msgs, &prompts, &l.steering.items, &l.followUps.items)
	var paused *agentapi.PausedRun
	if in.Carry != nil && in.Carry.Run != nil {
		l.runNumber = 1
		l.setStatus(ctx, agentapi.StatusRunning)
		paused = l.runLoop(ctx, *in.Carry.Run)
	} else {
		l.beginRun()
		paused = l.run(ctx, prompts, false)
	}
	if paused != nil {
		return l.continueAsNew(ctx, in, paused)
	}
	l.setStatus(ctx, agentapi.StatusEnded)
	return l.finish(ctx)
}

// continueAsNew hands a paused run over to a new workflow run of the same
// id once every handler has finished.
func (l *loop) continueAsNew(ctx workflow.Context, in agentapi.AgentLoopInput, paused *agentapi.PausedRun) (agentapi.AgentLoopResult, error) {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	l.drainSignals(ctx)
	next := agentapi.AgentLoopInput{
		LoopConfig:               l.cfg,
		ContinueAsNewAfterTurns:  in.ContinueAsNewAfterTurns,
		ContinueAsNewAfterEvents: in.ContinueAsNewAfterEvents,
		Carry:                    l.carry(paused),
		Parent:                   l.parent,
	}
	l.status = agentapi.StatusContinued
	return agentapi.AgentLoopResult{}, workflow.NewContinueAsNewError(ctx, agentapi.AgentLoopWorkflow, next)
}

// resolve checks the model, tools and hooks against the worker's registries
// and learns how to schedule the tools.
func (l *loop) resolve(ctx workflow.Context) error {
	var resolved activities.ResolveRunOutput
	in := activities.ResolveRunInput{
		Model:          l.cfg.Model,
		Workspace:      l.cfg.Workspace,
		Tools:          l.cfg.Tools,
		BeforeToolCall: agent.GoHookNames(l.cfg.BeforeToolCall),
		AfterToolCall:  agent.GoHookNames(l.cfg.AfterToolCall),
		RemoteTools:    l.remoteNames(),
		Resolved:       l.resolvedBefore,
		CheckWorkspace: l.checksWorkspace(),
	}
	f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.ResolveRun, in)
	l.wait(ctx, f)
	if g, ok := l.elsewhere(ctx, f.Get(ctx, nil), a.ResolveRun, in); ok {
		// This worker lacks what the run needs (drift.go).
		f = g
		l.wait(ctx, f)
	}
	if err := f.Get(ctx, &resolved); err != nil {
		return l.driftError(err)
	}
	resolved, err := l.resolveWorkspace(ctx, in, resolved)
	if err != nil {
		return err
	}
	l.tools = map[string]activities.ToolInfo{}
	for _, t := range resolved.Tools {
		l.tools[t.Name] = t
	}
	l.setRemoteTools()
	if l.hostQueue == "" {
		// A run continued as new keeps the host it had (restore), which
		// checkHost checks.
		l.hostQueue = resolved.HostQueue
		l.hostResolvedAt = workflow.Now(ctx)
	}
	l.hostStartDefault = resolved.HostStartTimeout
	if l.storeID == "" {
		// As the host: the content written so far is in the first store.
		l.storeID = resolved.StoreID
	}
	l.searchAttributes = resolved.SearchAttributes
	l.compact.modelWindow = resolved.ContextWindow
	l.configureCompaction()
	return nil
}

// validateMessages checks each message of an input field, naming the
// field and index of each that fails.
func validateMessages(field string, ms []agent.Message) []error {
	var errs []error
	for i := range ms {
		if err := ms[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
		}
	}
	return errs
}

// checkInput fills defaults, validates the input and returns the prompts.
func checkInput(ctx workflow.Context, in *agentapi.AgentLoopInput) ([]agent.Message, error) {
	if in.DecodeErr() != "" {
		return nil, errors.New(in.DecodeErr())
	}
	if refuseUnknownField(ctx, in.UnknownField()) {
		return nil, fmt.Errorf("unknown field %q", in.UnknownField())
	}
	now := workflow.Now(ctx).UnixMilli()
	prompts := slices.Clone(in.Prompts)
	if in.Prompt != "" {
		prompts = append(prompts, agent.UserText(in.Prompt, now))
	}
	for i := range prompts {
		if prompts[i].Timestamp == 0 {
			prompts[i].Timestamp = now
		}
	}
	var errs []error
	if err := in.Normalize(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateMessages("messages", in.Messages)...)
	errs = append(errs, validateMessages("prompts", in.Prompts)...)
	if in.ContinueAsNewAfterTurns < 0 {
		errs = append(errs, errors.New("continueAsNewAfterTurns must not be negative"))
	}
	if in.ContinueAsNewAfterEvents < 0 {
		errs = append(errs, errors.New("continueAsNewAfterEvents must not be negative"))
	}
	for i := range in.Steering {
		if err := checkQueuedMessage(&in.Steering[i], true); err != nil {
			errs = append(errs, fmt.Errorf("steering[%d]: %w", i, err))
		}
	}
	for i := range in.FollowUps {
		if err := checkQueuedMessage(&in.FollowUps[i], true); err != nil {
			errs = append(errs, fmt.Errorf("followUps[%d]: %w", i, err))
		}
	}
	if len(prompts) == 0 && in.Carry == nil {
		// pi's agentLoopContinue checks.
		if len(in.Messages) == 0 {
			errs = append(errs, errors.New("no prompt and no messages: Cannot continue: no messages in context"))
		} else if in.Messages[len(in.Messages)-1].Role == agent.RoleAssistant {
			errs = append(errs, errors.New("no prompt: Cannot continue from message role: assistant"))
		}
	}
	return prompts, errors.Join(errs...)
}

// run is pi's runAgentLoop (runAgentLoopContinue without prompts) and
// runLoop: the two nested loops. skipSteeringPoll skips the initial
// steering poll, as pi's Agent.continue does when it runs drained steering
// messages as prompts. It returns the run's state when l.suspend stopped it
// between two turns, nil when the run ended.
func (l *loop) run(ctx workflow.Context, prompts []agent.Message, skipSteeringPoll bool) *agentapi.PausedRun {
	l.setStatus(ctx, agentapi.StatusRunning)
	l.emit(agent.Event{Type: agent.EventAgentStart})
	l.emit(agent.Event{Type: agent.EventTurnStart})
	for _, p := range prompts {
		l.emitMessage(p)
		l.push(p)
	}
	rs := agentapi.PausedRun{FirstTurn: true, HasMoreToolCalls: true}
	l.drainSignals(ctx)
	if !skipSteeringPoll {
		rs.Pending = l.poll(ctx, &l.steering)
	}
	return l.runLoop(ctx, rs)
}

// runLoop is pi's runLoop from a given state.
func (l *loop) runLoop(ctx workflow.Context, rs agentapi.PausedRun) *agentapi.PausedRun {
	l.normalTurns = rs.NormalTurns
	if rs.BudgetRefused != "" {
		l.budgetRefused = rs.BudgetRefused
	}
	for {
		for rs.HasMoreToolCalls || len(rs.Pending) > 0 || rs.Batch != nil {
			var msg agent.Message
			var batch toolBatch
			next := turnGoesOn
			if rs.Batch != nil {
				// A batch the previous workflow run paused while its
				// sub-agents ran: its turn goes on here.
				msg, batch = l.lastAssistant, l.resumeBatch(ctx, rs.Batch)
				rs.Batch = nil
			} else if msg, batch, next = l.turnOf(ctx, &rs); next == turnEnded {
				return nil
			}
			if next == turnSuspended || batch.paused != nil {
				rs.Batch = batch.paused
				rs.NormalTurns = l.normalTurns
				rs.BudgetRefused = l.budgetRefused
				return &rs
			}

			results := batch.messages
			rs.HasMoreToolCalls = len(msg.ToolCalls()) > 0 && !batch.terminate
			for _, r := range results {
				l.push(r)
			}
			l.emit(agent.Event{Type: agent.EventTurnEnd, Message: &msg, ToolResults: nonNil(results)})

			l.normalTurns++
			if l.cfg.StopAfterTurn != nil && l.cfg.StopAfterTurn.Turns > 0 && l.normalTurns >= l.cfg.StopAfterTurn.Turns {
				l.end(msg)
				return nil
			}
			l.drainSignals(ctx)
			rs.Pending = l.poll(ctx, &l.steering)
		}
		l.drainSignals(ctx)
		followUps := l.poll(ctx, &l.followUps)
		if len(followUps) == 0 {
			break
		}
		rs.Pending, rs.HasMoreToolCalls = followUps, true
	}
	l.end(l.lastAssistant)
	return nil
}

// turnNext says how a turn went on: to its batch's results, or the run
// ended in it, or it did not start since the run continues as new first.
type turnNext int

const (
	turnGoesOn turnNext = iota
	turnEnded
	turnSuspended
)

// turnOf starts a turn and runs it up to its tool batch's results: the
// model's message and the batch.
func (l *loop) turnOf(ctx workflow.Context, rs *agentapi.PausedRun) (agent.Message, toolBatch, turnNext) {
	if !rs.FirstTurn && l.suspend != nil && l.suspend() {
		return agent.Message{}, toolBatch{}, turnSuspended
	}
	if !rs.FirstTurn {
		l.emit(agent.Event{Type: agent.EventTurnStart})
	}
	rs.FirstTurn = false
	for _, m := range rs.Pending {
		l.emitMessage(m)
		l.push(m)
	}
	rs.Pending = nil

	l.abortIfParentGone()
	// A turn the budget stops makes no model call and is not counted
	// (budget.go).
	overBudget := l.budgetTurnCheck()
	if overBudget == "" {
		l.turn++
		l.maybeCompact(ctx)
	}
	msg := l.modelTurn(ctx, overBudget)
	if msg.StopReason.Unanswered() {
		l.emit(agent.Event{Type: agent.EventTurnEnd, Message: &msg, ToolResults: []agent.Message{}})
		l.end(msg)
		return msg, toolBatch{}, turnEnded
	}
	var batch toolBatch
	if calls := msg.ToolCalls(); len(calls) > 0 {
		batch = l.executeToolCalls(ctx, calls)
	}
	return msg, batch, turnGoesOn
}

// end emits agent_end and records how the run stopped.
func (l *loop) end(last agent.Message) {
	l.inRun = false
	held, earlier := l.newMessages()
	l.emit(agent.Event{Type: agent.EventAgentEnd, Messages: held, EarlierMessages: earlier})
	l.stopReason = last.StopReason
	l.errorMessage = last.ErrorMessage
}

// push adds a message to the context, and so to the run's new messages.
func (l *loop) push(m agent.Message) {
	l.context.Append(m)
	l.lastRole = m.Role
}

func (l *loop) emitMessage(m agent.Message) {
	l.emit(agent.Event{Type: agent.EventMessageStart, Message: &m})
	l.emit(agent.Event{Type: agent.EventMessageEnd, Message: &m})
}

func (l *loop) emit(e agent.Event) {
	l.events.emit(e)
	l.markLogGrew()
}

func nonNil(m []agent.Message) []agent.Message {
	if m == nil {
		return []agent.Message{}
	}
	return m
}
