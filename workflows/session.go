package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// session is a loop that runs again and again.
type session struct {
	*loop
	in   agentapi.SessionInput
	next *agentapi.NextRun
	runs int
	// compacting is set while a manual compaction runs: a prompt waits.
	compacting bool
	// startBuild is the build ID of the worker that ran this workflow
	// run's first task (see movedBuild).
	startBuild string
}

// AgentSession is pi's Agent as a workflow (registered as SessionWorkflow,
// "AgentSession", like AgentLoop): prompt, continue, steer, followUp,
// abort, reset and the setters are Updates; state and events are Queries.
// It continues as new when the server suggests it or after
// ContinueAsNewAfterTurns turns, between turns or while idle.
func AgentSession(ctx workflow.Context, in agentapi.SessionInput) (agentapi.SessionResult, error) {
	inputErr := checkSessionInput(&in)
	if inputErr == nil && refuseUnknownField(ctx, in.UnknownField()) {
		inputErr = fmt.Errorf("unknown field %q", in.UnknownField())
	}
	s := &session{loop: newLoop(ctx, in.LoopConfig, in.Messages), in: in, startBuild: currentBuild(ctx)}
	s.inputs.prompts = func() []agent.Message {
		if s.next == nil {
			return nil
		}
		return s.next.Prompts
	}
	s.restore(in.Carry)
	s.continueAfterTurns = in.ContinueAsNewAfterTurns
	s.continueAfterEvents = in.ContinueAsNewAfterEvents
	// The Web UI's current details show the title from the start: the
	// memo's, set by the client that started the session or carried over
	// by continue-as-new, whose run loses the static summary (the SDK
	// cannot set one on continue-as-new). Reading the memo adds nothing
	// to history.
	s.title, _ = memoString(ctx, agentapi.MemoTitle)
	if err := s.registerHandlers(ctx); err != nil {
		return agentapi.SessionResult{}, err
	}
	if err := s.registerSessionHandlers(ctx); err != nil {
		return agentapi.SessionResult{}, err
	}
	if inputErr != nil {
		s.setStatus(ctx, agentapi.StatusFailed)
		return agentapi.SessionResult{}, temporal.NewNonRetryableApplicationError("invalid input: "+inputErr.Error(), agentapi.ErrInvalidInput, nil)
	}
	if err := s.resolve(ctx); err != nil {
		s.setStatus(ctx, agentapi.StatusFailed)
		return agentapi.SessionResult{}, err
	}
	msgs := in.Messages
	if in.Carry == nil {
		adopted, err := s.adoptInput(ctx, &msgs)
		if err != nil {
			s.setStatus(ctx, agentapi.StatusFailed)
			return agentapi.SessionResult{}, temporal.NewNonRetryableApplicationError("invalid input: "+err.Error(), agentapi.ErrInvalidInput, nil)
		}
		if adopted {
			s.replaceContext(msgs)
		}
	}
	s.suspend = func() bool { return s.shouldContinueAsNew(ctx) }
	// After adoption: msgs' stubs of other runs now name this run's copies.
	s.storeStart(ctx, msgs)

	if in.Carry != nil && in.Carry.Run != nil {
		s.setStatus(ctx, agentapi.StatusRunning)
		s.checkHost(ctx)
		if paused := s.runLoop(ctx, *in.Carry.Run); paused != nil {
			return s.continueAsNew(ctx, paused)
		}
	}
	for {
		s.setStatus(ctx, agentapi.StatusIdle)
		s.waitForWork(ctx)
		if s.cancelled {
			return s.result(), temporal.NewCanceledError(s.result())
		}
		if s.next == nil || s.movedBuild(ctx) {
			// A prompt that comes to a new build starts its run in the
			// next workflow run: the carry holds it.
			return s.continueAsNew(ctx, nil)
		}
		// A prompt that came during a manual compaction waits for it.
		_ = workflow.Await(ctx, func() bool { return !s.compacting })
		s.storeNext(ctx)
		next := s.next
		s.next = nil
		s.cfg = s.settings
		s.setRemoteTools()
		s.configureCompaction()
		s.beginRun()
		s.checkHost(ctx)
		if paused := s.run(ctx, next.Prompts, next.SkipSteeringPoll); paused != nil {
			return s.continueAsNew(ctx, paused)
		}
		// The run's events up to agent_end go to a watcher in history;
		// noteRun's memo upsert removes them from the memo again.
		owed := s.carryAtRest(ctx, true)
		s.noteRun(ctx, next.Prompts, owed)
		if s.cancelled {
			return s.result(), temporal.NewCanceledError(s.result())
		}
	}
}

func checkSessionInput(in *agentapi.SessionInput) error {
	if in.DecodeErr() != "" {
		return errors.New(in.DecodeErr())
	}
	var errs []error
	if err := in.Normalize(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateMessages("messages", in.Messages)...)
	if in.ContinueAsNewAfterTurns < 0 {
		errs = append(errs, errors.New("continueAsNewAfterTurns must not be negative"))
	}
	if in.ContinueAsNewAfterEvents < 0 {
		errs = append(errs, errors.New("continueAsNewAfterEvents must not be negative"))
	}
	return errors.Join(errs...)
}

// restore takes over what the previous run carried.
func (s *session) restore(c *agentapi.Carry) {
	if c == nil {
		return
	}
	s.loop.restore(c)
	s.runs = c.Runs
	s.next = c.Next
}

// waitForWork waits idle until a prompt or continue arrives, the session
// is cancelled, or it should continue as new.
func (s *session) waitForWork(ctx workflow.Context) {
	for (s.next == nil || s.compacting) && !s.cancelled && !s.shouldContinueAsNew(ctx) {
		sel := workflow.NewSelector(ctx)
		s.addSignalCases(sel)
		sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) { c.ReceiveAsync(nil) })
		sel.Select(ctx)
	}
}

// continueAsNew hands the session over to a new run of the same workflow
// id once every handler has finished.
func (s *session) continueAsNew(ctx workflow.Context, paused *agentapi.PausedRun) (agentapi.SessionResult, error) {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	s.drainSignals(ctx)
	s.storeNext(ctx)
	next := s.in
	next.LoopConfig = s.settings
	if paused != nil {
		// The paused run goes on with the configuration it started with;
		// the carry keeps the settings for the runs after it.
		next.LoopConfig = s.cfg
	}
	next.Messages = nil
	next.Carry = s.carry(paused)
	next.Carry.Runs = s.runs
	next.Carry.Next = s.next
	s.status = agentapi.StatusContinued
	return agentapi.SessionResult{}, workflow.NewContinueAsNewError(ctx, agentapi.SessionWorkflow, next)
}

func (s *session) result() agentapi.SessionResult {
	return agentapi.SessionResult{Runs: s.runs, Turns: s.turn, Messages: s.context.Len(), Usage: s.usage}
}

// upgradeChange guards the continue-as-new of a session that moved to
// another build: histories recorded before it never continue for that.
const upgradeChange = "continue-as-new-on-new-build"

// shouldContinueAsNew is the loop's rule, and also holds once the session
// runs on a build other than the one that started this workflow run: an
// auto-upgrade session moves to the current version at its next workflow
// task, and continuing as new at its next seam gives the rest of its life a
// history of the new build alone, which later builds must replay.
func (s *session) shouldContinueAsNew(ctx workflow.Context) bool {
	return s.loop.shouldContinueAsNew(ctx) || s.movedBuild(ctx)
}

// movedBuild reports whether the session's current task runs on another
// build than its first.
func (s *session) movedBuild(ctx workflow.Context) bool {
	if s.aborted || s.cancelled || s.startBuild == "" {
		return false
	}
	now := currentBuild(ctx)
	if now == "" || now == s.startBuild {
		return false
	}
	return workflow.GetVersion(ctx, upgradeChange, workflow.DefaultVersion, 1) == 1
}

// currentBuild is the build ID of the worker running the current workflow
// task. Replaying, the SDK takes it from the task's completion in history;
// running the task, it is this worker's own, which the task's completion
// records (the SDK's GetCurrentBuildID still gives the previous task's
// build in the first task a worker runs after replaying a history, so a
// new build would only notice itself one task later).
func currentBuild(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	if workflow.IsReplaying(ctx) {
		return info.GetCurrentBuildID()
	}
	return info.GetBinaryChecksum()
}

// busy reports whether a run is in progress or about to start.
func (s *session) busy() bool {
	return s.next != nil || s.status == agentapi.StatusRunning || s.status == agentapi.StatusWaitingApproval
}
