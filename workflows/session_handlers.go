package workflows

import (
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// pi's error texts for a session that is busy or cannot continue.
const (
	errBusyPrompt     = "Agent is already processing a prompt. Use /steer or /followup (starter steer, starter follow-up) to queue messages, or wait for completion."
	errBusyContinue   = "Agent is already processing. Wait for completion before continuing."
	errNothingToRun   = "No messages to continue from"
	errAssistantTail  = "Cannot continue from message role: assistant"
	errBusyReset      = "the session is running: abort it and wait for it to end before reset"
	errBusyCompact    = "the session is running: it compacts by itself when the context nears the model's window; compact manually between runs"
	thinkingLevelsSet = "off, minimal, low, medium, high or xhigh"
)

func (s *session) registerSessionHandlers(ctx workflow.Context) error {
	s.promptSignal = func(r agentapi.PromptRequest) {
		msgs, err := s.promptMessages(ctx, r)
		if err != nil {
			s.dropSignal(agentapi.SignalPrompt, len(r.Text), "invalid prompt", err)
			return
		}
		if s.dropsForeign(ctx, agentapi.SignalPrompt, msgs) {
			return
		}
		if s.busy() {
			// A Signal cannot be refused: rather than lose the prompt,
			// it waits as a follow-up, which is what pi advises.
			for _, m := range msgs {
				s.queueSignalled(agentapi.SignalPrompt, &s.followUps, m, true)
			}
			return
		}
		if err := s.checkRoom(s.inlineBytes(msgs...)); err != nil && s.capsQueues(ctx) {
			n := 0
			for _, m := range msgs {
				n += contentBytes(m.Content)
			}
			s.dropSignal(agentapi.SignalPrompt, n, "queues full", err)
			return
		}
		s.startRun(&agentapi.NextRun{Prompts: msgs})
	}
	type update struct {
		name     string
		handler  any
		validate any
	}
	updates := []update{
		{agentapi.UpdatePrompt, s.prompt, func(ctx workflow.Context, r agentapi.PromptRequest) error {
			if s.busy() {
				return errors.New(errBusyPrompt)
			}
			if why := s.budgetExhausted(); why != "" {
				return budgetRefusal(why)
			}
			msgs, err := s.promptMessages(ctx, r)
			if err != nil {
				return err
			}
			if err := checkOwnStubs(ctx, msgs); err != nil {
				return err
			}
			return s.checkRoom(s.inlineBytes(msgs...))
		}},
		{agentapi.UpdateContinue, s.continueRun, func(workflow.Context) error {
			if err := s.checkContinue(); err != nil {
				return err
			}
			if why := s.budgetExhausted(); why != "" {
				return budgetRefusal(why)
			}
			return nil
		}},
		{agentapi.UpdateReset, s.reset, func(workflow.Context) error {
			if s.busy() {
				return errors.New(errBusyReset)
			}
			return nil
		}},
		{agentapi.UpdateSetModel, s.setModel, func(_ workflow.Context, r agentapi.SettingRequest) error {
			if r.Model == nil || r.Model.Provider == "" || r.Model.ID == "" {
				return errors.New(`want {"model": {"provider": "...", "id": "..."}}`)
			}
			return nil
		}},
		{agentapi.UpdateSetThinkingLevel, s.setThinkingLevel, func(_ workflow.Context, r agentapi.SettingRequest) error {
			switch r.Level {
			case "off", "minimal", "low", "medium", "high", "xhigh":
				return nil
			}
			return fmt.Errorf("level %q: want %s", r.Level, thinkingLevelsSet)
		}},
		{agentapi.UpdateSetSteeringMode, s.setSteeringMode, checkQueueMode},
		{agentapi.UpdateSetFollowUpMode, s.setFollowUpMode, checkQueueMode},
		{agentapi.UpdateCompact, s.compactNow, func(workflow.Context, agentapi.CompactRequest) error {
			switch {
			case s.busy():
				return errors.New(errBusyCompact)
			case s.compacting:
				return errors.New("a compaction is already running")
			case s.context.Len() == 0:
				return errors.New(errNothingToRun)
			}
			return nil
		}},
		{agentapi.UpdateSetRemoteTools, s.setRemoteToolsUpdate, func(_ workflow.Context, r agentapi.RemoteToolsRequest) error {
			return checkRemoteTools(r, s.settings.Tools)
		}},
		{agentapi.UpdateSetHooks, s.setHooks, func(_ workflow.Context, r agentapi.HooksRequest) error {
			return r.Check()
		}},
		{agentapi.UpdateSetToolExecution, s.setToolExecution, func(_ workflow.Context, r agentapi.SettingRequest) error {
			if m := agent.ExecutionMode(r.Mode); m != agent.ExecutionParallel && m != agent.ExecutionSequential {
				return fmt.Errorf("mode %q: want parallel or sequential", r.Mode)
			}
			return nil
		}},
	}
	for _, u := range updates {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, u.handler,
			workflow.UpdateHandlerOptions{Validator: s.acceptRepeats(u.validate)}); err != nil {
			return err
		}
	}
	return nil
}

// acceptRepeats wraps a validator so that a repeat of an Update applied
// before (updates.go) is accepted whatever the session's state: its
// handler answers it with the first answer.
func (s *session) acceptRepeats(validate any) any {
	switch v := validate.(type) {
	case func(workflow.Context) error:
		return func(ctx workflow.Context) error {
			if s.applied(ctx) {
				return nil
			}
			return v(ctx)
		}
	case func(workflow.Context, agentapi.PromptRequest) error:
		return func(ctx workflow.Context, r agentapi.PromptRequest) error {
			if s.applied(ctx) {
				return nil
			}
			if err := r.FieldError(); err != nil {
				return err
			}
			return v(ctx, r)
		}
	case func(workflow.Context, agentapi.SettingRequest) error:
		return func(ctx workflow.Context, r agentapi.SettingRequest) error {
			if s.applied(ctx) {
				return nil
			}
			if err := r.FieldError(); err != nil {
				return err
			}
			return v(ctx, r)
		}
	case func(workflow.Context, agentapi.RemoteToolsRequest) error:
		return func(ctx workflow.Context, r agentapi.RemoteToolsRequest) error {
			if s.applied(ctx) {
				return nil
			}
			return v(ctx, r)
		}
	case func(workflow.Context, agentapi.HooksRequest) error:
		return func(ctx workflow.Context, r agentapi.HooksRequest) error {
			if s.applied(ctx) {
				return nil
			}
			return v(ctx, r)
		}
	case func(workflow.Context, agentapi.CompactRequest) error:
		return func(ctx workflow.Context, r agentapi.CompactRequest) error {
			if s.applied(ctx) {
				return nil
			}
			if err := r.FieldError(); err != nil {
				return err
			}
			return v(ctx, r)
		}
	}
	panic(fmt.Sprintf("acceptRepeats: validator of type %T", validate))
}

func checkQueueMode(_ workflow.Context, r agentapi.SettingRequest) error {
	if m := agent.QueueMode(r.Mode); m != agent.QueueOneAtATime && m != agent.QueueAll {
		return fmt.Errorf("mode %q: want one-at-a-time or all", r.Mode)
	}
	return nil
}

// promptMessages builds a prompt's messages, as pi's Agent.prompt does.
func (s *session) promptMessages(ctx workflow.Context, r agentapi.PromptRequest) ([]agent.Message, error) {
	now := workflow.Now(ctx).UnixMilli()
	msgs := slices.Clone(r.Messages)
	if r.Text != "" || len(r.Images) > 0 {
		m := agent.UserText(r.Text, now)
		m.Content = append(m.Content, r.Images...)
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil, errors.New(`prompt is empty: send {"text": "your prompt"}`)
	}
	for i := range msgs {
		if msgs[i].Timestamp == 0 {
			msgs[i].Timestamp = now
		}
		if err := msgs[i].Validate(); err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
	}
	return msgs, nil
}

func (s *session) prompt(ctx workflow.Context, r agentapi.PromptRequest) (agentapi.RunStatus, error) {
	return once(s.loop, ctx, func() (agentapi.RunStatus, error) {
		msgs, err := s.promptMessages(ctx, r)
		if err != nil {
			return agentapi.RunStatus{}, err
		}
		return s.startRun(&agentapi.NextRun{Prompts: msgs}), nil
	})
}

// checkContinue is pi's Agent.continue checks, without draining.
func (s *session) checkContinue() error {
	if s.busy() {
		return errors.New(errBusyContinue)
	}
	if s.context.Len() == 0 {
		return errors.New(errNothingToRun)
	}
	if s.lastRole == agent.RoleAssistant &&
		len(s.steering.items) == 0 && len(s.followUps.items) == 0 {
		return errors.New(errAssistantTail)
	}
	return nil
}

// continueRun is pi's Agent.continue: from an assistant tail it runs queued
// steering (skipping the first steering poll, so one-at-a-time holds) or
// else follow-ups as prompts; otherwise it continues the transcript.
func (s *session) continueRun(ctx workflow.Context) (agentapi.RunStatus, error) {
	return once(s.loop, ctx, s.continueNow)
}

func (s *session) continueNow() (agentapi.RunStatus, error) {
	if err := s.checkContinue(); err != nil {
		return agentapi.RunStatus{}, err
	}
	if s.lastRole != agent.RoleAssistant {
		return s.startRun(&agentapi.NextRun{}), nil
	}
	if steering := s.steering.drain(); len(steering) > 0 {
		return s.startRun(&agentapi.NextRun{Prompts: steering, SkipSteeringPoll: true}), nil
	}
	return s.startRun(&agentapi.NextRun{Prompts: s.followUps.drain()}), nil
}

func (s *session) startRun(next *agentapi.NextRun) agentapi.RunStatus {
	s.next = next
	s.runs++
	s.wake.SendAsync(struct{}{})
	return agentapi.RunStatus{Run: s.runs, After: s.events.last()}
}

// compactNow is a manual compaction (pi's /compact): between runs, with
// optional instructions for the summary. A prompt that arrives meanwhile
// waits for it. It is refused, with pi's reason, when nothing can be cut.
func (s *session) compactNow(ctx workflow.Context, r agentapi.CompactRequest) (agentapi.CompactStatus, error) {
	return once(s.loop, ctx, func() (agentapi.CompactStatus, error) { return s.compactOnce(ctx, r) })
}

func (s *session) compactOnce(ctx workflow.Context, r agentapi.CompactRequest) (agentapi.CompactStatus, error) {
	s.compacting = true
	defer func() {
		s.compacting = false
		s.wake.SendAsync(struct{}{})
	}()
	ok, why := s.compactContext(ctx, s.baseCtx, agent.CompactionManual, r.Instructions, s.contextTokens())
	if !ok {
		return agentapi.CompactStatus{}, errors.New(why)
	}
	rec := s.compact.last
	return agentapi.CompactStatus{TokensBefore: rec.TokensBefore, TokensAfter: rec.TokensAfter}, nil
}

// reset is pi's Agent.reset: transcript and queues are cleared.
func (s *session) reset(ctx workflow.Context) error {
	_, err := once(s.loop, ctx, func() (done, error) { return done{}, s.resetNow() })
	return err
}

func (s *session) resetNow() error {
	if s.busy() {
		return errors.New(errBusyReset)
	}
	s.context = agent.NewTranscript(s.settings.SystemPrompt)
	s.segments, s.runStart, s.runEarlier, s.lastRole = nil, 0, nil, ""
	s.compact.last, s.compact.at = nil, 0
	s.steering.items, s.followUps.items = nil, nil
	s.stopReason, s.errorMessage = "", ""
	return nil
}

// setModel checks the model against the worker before the next run uses it.
func (s *session) setModel(ctx workflow.Context, r agentapi.SettingRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) { return done{}, s.setModelNow(ctx, r) })
	return err
}

func (s *session) setModelNow(ctx workflow.Context, r agentapi.SettingRequest) error {
	var resolved activities.ResolveRunOutput
	err := workflow.ExecuteLocalActivity(s.localCtx(ctx), a.ResolveRun, activities.ResolveRunInput{
		Model: *r.Model, Tools: s.settings.Tools,
		BeforeToolCall: agent.GoHookNames(s.settings.BeforeToolCall), AfterToolCall: agent.GoHookNames(s.settings.AfterToolCall),
	}).Get(ctx, &resolved)
	if err != nil {
		return err
	}
	s.settings.Model = *r.Model
	s.compact.modelWindow = resolved.ContextWindow
	return nil
}

func (s *session) setThinkingLevel(ctx workflow.Context, r agentapi.SettingRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) {
		if r.Level == "off" {
			r.Level = ""
		}
		s.settings.ModelOptions.Reasoning = r.Level
		return done{}, nil
	})
	return err
}

// Queue modes apply at once, as pi's queues are shared with the running loop.
func (s *session) setSteeringMode(ctx workflow.Context, r agentapi.SettingRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) {
		s.settings.SteeringMode, s.steering.mode = agent.QueueMode(r.Mode), agent.QueueMode(r.Mode)
		return done{}, nil
	})
	return err
}

func (s *session) setFollowUpMode(ctx workflow.Context, r agentapi.SettingRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) {
		s.settings.FollowUpMode, s.followUps.mode = agent.QueueMode(r.Mode), agent.QueueMode(r.Mode)
		return done{}, nil
	})
	return err
}

func (s *session) setToolExecution(ctx workflow.Context, r agentapi.SettingRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) {
		s.settings.ToolExecution = agent.ExecutionMode(r.Mode)
		return done{}, nil
	})
	return err
}

// setRemoteToolsUpdate replaces the session's remote tools from its next
// run on, once this worker's registry has none of their names (ResolveRun,
// as a run's start checks them).
func (s *session) setRemoteToolsUpdate(ctx workflow.Context, r agentapi.RemoteToolsRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) {
		remote := *r.RemoteTools
		names := remoteToolNames(remote)
		if len(names) > 0 {
			err := workflow.ExecuteLocalActivity(s.localCtx(ctx), a.ResolveRun, activities.ResolveRunInput{
				Model: s.settings.Model, Tools: s.settings.Tools, RemoteTools: names,
				BeforeToolCall: agent.GoHookNames(s.settings.BeforeToolCall), AfterToolCall: agent.GoHookNames(s.settings.AfterToolCall),
			}).Get(ctx, nil)
			if err != nil {
				return done{}, err
			}
		}
		s.settings.RemoteTools = remote
		return done{}, nil
	})
	return err
}

// setHooks replaces the session's hook lists given from its next run on,
// once this worker has the Go hooks they name (ResolveRun, as a run's
// start checks them); an activity or webhook hook is checked when a call
// reaches it, as a run's are.
func (s *session) setHooks(ctx workflow.Context, r agentapi.HooksRequest) error {
	_, err := once(s.loop, ctx, func() (done, error) {
		before, after := s.settings.BeforeToolCall, s.settings.AfterToolCall
		if r.BeforeToolCall != nil {
			before = *r.BeforeToolCall
		}
		if r.AfterToolCall != nil {
			after = *r.AfterToolCall
		}
		goBefore, goAfter := agent.GoHookNames(before), agent.GoHookNames(after)
		if len(goBefore)+len(goAfter) > 0 {
			err := workflow.ExecuteLocalActivity(s.localCtx(ctx), a.ResolveRun, activities.ResolveRunInput{
				Model: s.settings.Model, Tools: s.settings.Tools, RemoteTools: remoteToolNames(s.settings.RemoteTools),
				BeforeToolCall: goBefore, AfterToolCall: goAfter,
			}).Get(ctx, nil)
			if err != nil {
				return done{}, err
			}
		}
		s.settings.BeforeToolCall, s.settings.AfterToolCall = before, after
		return done{}, nil
	})
	return err
}

func remoteToolNames(ts []agent.RemoteTool) []string {
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return names
}
