package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// ErrInvalidInput is the ApplicationError type of a run whose input cannot
// be served; such a run fails at once and is not retried.
const ErrInvalidInput = "InvalidInput"

// AgentLoopInput is the input of one agent run: the loop configuration, the
// prior context and the prompts. Every field can be written by hand as JSON.
type AgentLoopInput struct {
	agent.LoopConfig
	// Messages is the context before this run (pi's context.messages).
	Messages []agent.Message `json:"messages,omitempty"`
	// Prompts start the run (pi's agentLoop). Prompt is a shorthand for one
	// user text prompt. With neither, the run continues from Messages
	// (pi's agentLoopContinue).
	Prompts []agent.Message `json:"prompts,omitempty"`
	Prompt  string          `json:"prompt,omitempty"`
	// Steering and FollowUps are messages queued before the run starts.
	Steering  []agent.Message `json:"steering,omitempty"`
	FollowUps []agent.Message `json:"followUps,omitempty"`
}

// AgentLoopResult is pi's newMessages plus what a caller wants to know
// without reading them.
type AgentLoopResult struct {
	// Messages are the run's new messages in transcript order: prompts,
	// injected messages, assistant and tool-result messages.
	Messages []agent.Message `json:"messages"`
	// OmittedMessages counts leading new messages left out to keep the
	// result under the payload limit; QueryEvents still has them all.
	OmittedMessages int              `json:"omittedMessages,omitempty"`
	StopReason      agent.StopReason `json:"stopReason"`
	ErrorMessage    string           `json:"errorMessage,omitempty"`
	Turns           int              `json:"turns"`
	Usage           agent.Usage      `json:"usage"`
	// Steering and FollowUps hold messages queued too late to be injected,
	// so nothing sent to the run is lost.
	Steering  []agent.Message `json:"steering,omitempty"`
	FollowUps []agent.Message `json:"followUps,omitempty"`
}

// AgentLoop runs pi's agent loop (runAgentLoop / runAgentLoopContinue) as a
// workflow: each model turn and each prepare, execute and finalize stage of
// a tool call is an activity; events go to a durable log read with
// QueryEvents; steering, follow-up and abort arrive as Updates or Signals.
func AgentLoop(ctx workflow.Context, in AgentLoopInput) (AgentLoopResult, error) {
	prompts, inputErr := checkInput(ctx, &in)
	l := newLoop(ctx, in.LoopConfig, in.Messages)
	l.steering.items = in.Steering
	l.followUps.items = in.FollowUps
	if err := l.registerHandlers(ctx); err != nil {
		return AgentLoopResult{}, err
	}
	if inputErr != nil {
		l.status = statusFailed
		return AgentLoopResult{}, temporal.NewNonRetryableApplicationError("invalid input: "+inputErr.Error(), ErrInvalidInput, nil)
	}
	if err := l.resolve(ctx); err != nil {
		l.status = statusFailed
		return AgentLoopResult{}, err
	}
	l.beginRun()
	l.run(ctx, prompts, false)
	return l.finish(ctx)
}

// resolve checks the model, tools and hooks against the worker's registries
// and learns how to schedule the tools.
func (l *loop) resolve(ctx workflow.Context) error {
	var resolved activities.ResolveRunOutput
	f := workflow.ExecuteLocalActivity(l.localCtx(ctx), a.ResolveRun, activities.ResolveRunInput{
		Model:          l.cfg.Model,
		Tools:          l.cfg.Tools,
		BeforeToolCall: l.cfg.BeforeToolCall,
		AfterToolCall:  l.cfg.AfterToolCall,
	})
	l.wait(ctx, f)
	if err := f.Get(ctx, &resolved); err != nil {
		return err
	}
	l.tools = map[string]activities.ToolInfo{}
	for _, t := range resolved.Tools {
		l.tools[t.Name] = t
	}
	return nil
}

// checkInput fills defaults, validates the input and returns the prompts.
func checkInput(ctx workflow.Context, in *AgentLoopInput) ([]agent.Message, error) {
	now := workflow.Now(ctx).UnixMilli()
	prompts := append([]agent.Message(nil), in.Prompts...)
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
	for i := range in.Messages {
		if err := in.Messages[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("messages[%d]: %w", i, err))
		}
	}
	for i := range in.Prompts {
		if err := in.Prompts[i].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("prompts[%d]: %w", i, err))
		}
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
	if len(prompts) == 0 {
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
// messages as prompts.
func (l *loop) run(ctx workflow.Context, prompts []agent.Message, skipSteeringPoll bool) {
	l.status = statusRunning
	l.emit(agent.Event{Type: agent.EventAgentStart})
	l.emit(agent.Event{Type: agent.EventTurnStart})
	for _, p := range prompts {
		l.emitMessage(p)
		l.push(p)
	}

	firstTurn := true
	l.drainSignals(ctx)
	var pending []agent.Message
	if !skipSteeringPoll {
		pending = l.steering.drain()
	}
	for {
		hasMoreToolCalls := true
		for hasMoreToolCalls || len(pending) > 0 {
			if !firstTurn {
				l.emit(agent.Event{Type: agent.EventTurnStart})
			}
			firstTurn = false
			l.turn++
			for _, m := range pending {
				l.emitMessage(m)
				l.push(m)
			}
			pending = nil

			msg := l.modelTurn(ctx)
			if msg.StopReason == agent.StopReasonError || msg.StopReason == agent.StopReasonAborted {
				l.emit(agent.Event{Type: agent.EventTurnEnd, Message: &msg, ToolResults: []agent.Message{}})
				l.end(msg)
				return
			}

			var results []agent.Message
			hasMoreToolCalls = false
			if calls := msg.ToolCalls(); len(calls) > 0 {
				batch := l.executeToolCalls(ctx, calls)
				results = batch.messages
				hasMoreToolCalls = !batch.terminate
				for _, r := range results {
					l.push(r)
				}
			}
			l.emit(agent.Event{Type: agent.EventTurnEnd, Message: &msg, ToolResults: nonNil(results)})

			l.normalTurns++
			if l.cfg.StopAfterTurn != nil && l.cfg.StopAfterTurn.Turns > 0 && l.normalTurns >= l.cfg.StopAfterTurn.Turns {
				l.end(msg)
				return
			}
			l.drainSignals(ctx)
			pending = l.steering.drain()
		}
		l.drainSignals(ctx)
		if followUps := l.followUps.drain(); len(followUps) > 0 {
			pending = followUps
			continue
		}
		break
	}
	l.end(l.lastAssistant)
}

// end emits agent_end and records how the run stopped.
func (l *loop) end(last agent.Message) {
	l.emit(agent.Event{Type: agent.EventAgentEnd, Messages: l.newMessages()})
	l.status = statusEnded
	l.stopReason = last.StopReason
	l.errorMessage = last.ErrorMessage
}

// push adds a message to the context, and so to the run's new messages.
func (l *loop) push(m agent.Message) { l.context.Append(m) }

func (l *loop) emitMessage(m agent.Message) {
	l.emit(agent.Event{Type: agent.EventMessageStart, Message: &m})
	l.emit(agent.Event{Type: agent.EventMessageEnd, Message: &m})
}

func (l *loop) emit(e agent.Event) { l.events.emit(e) }

func nonNil(m []agent.Message) []agent.Message {
	if m == nil {
		return []agent.Message{}
	}
	return m
}
