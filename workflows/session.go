package workflows

import (
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// maxCarriedTranscriptBytes bounds the transcript a continue-as-new input
// carries inline; a longer one is read back from the previous run.
const maxCarriedTranscriptBytes = 1 << 20

// SessionInput starts a session: pi's Agent as a workflow. It holds the
// transcript and the settings, runs the agent loop for each prompt, and
// waits idle (at no cost) in between.
type SessionInput struct {
	agent.LoopConfig
	// Messages is the transcript to start from.
	Messages []agent.Message `json:"messages,omitempty"`
	// ContinueAsNewAfterTurns continues as new after this many turns in
	// one workflow run; 0 leaves it to the server's suggestion.
	ContinueAsNewAfterTurns int `json:"continueAsNewAfterTurns,omitempty"`
	// Carry is what a session hands over to its next run when it
	// continues as new; people leave it out.
	Carry *SessionCarry `json:"carry,omitempty"`

	// decodeErr is why the input's JSON could not be decoded.
	decodeErr string
}

// UnmarshalJSON never fails, as AgentLoopInput's.
func (in *SessionInput) UnmarshalJSON(b []byte) error {
	type plain SessionInput
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		*in = SessionInput{decodeErr: decodeError(err)}
		return nil
	}
	*in = SessionInput(p)
	return nil
}

// SessionCarry is the state a session carries across continue-as-new, so
// that nothing is lost and the event log goes on without a gap.
type SessionCarry struct {
	Steering  []agent.Message `json:"steering,omitempty"`
	FollowUps []agent.Message `json:"followUps,omitempty"`
	Usage     agent.Usage     `json:"usage"`
	Turn      int             `json:"turn"`
	Runs      int             `json:"runs"`
	NextSeq   int64           `json:"nextSeq"`
	Allowed   []string        `json:"allowed,omitempty"`
	ModelBase int             `json:"modelBase"`
	RunStart  int             `json:"runStart"`
	// Run is a run paused between two turns, resumed first.
	Run *PausedRun `json:"run,omitempty"`
	// Next is a prompt accepted but not yet started.
	Next *NextRun `json:"next,omitempty"`
	// Transcript, when set, points at the previous run's context instead
	// of Messages, which was too large to carry.
	Transcript *TranscriptRef `json:"transcript,omitempty"`
}

// NextRun is a run a prompt or continue Update asked for.
type NextRun struct {
	Prompts          []agent.Message `json:"prompts,omitempty"`
	SkipSteeringPoll bool            `json:"skipSteeringPoll,omitempty"`
}

// TranscriptRef names a context held by a closed workflow run.
type TranscriptRef struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	Count      int    `json:"count"`
	Hash       string `json:"hash"`
}

// SessionResult is what a session reports when it is cancelled.
type SessionResult struct {
	Runs     int         `json:"runs"`
	Turns    int         `json:"turns"`
	Messages int         `json:"messages"`
	Usage    agent.Usage `json:"usage"`
}

// session is a loop that runs again and again.
type session struct {
	*loop
	in           SessionInput
	next         *NextRun
	runs         int
	turnsAtStart int
}

// Session is pi's Agent as a workflow: prompt, continue, steer, followUp,
// abort, reset and the setters are Updates; state and events are Queries.
// It continues as new when the server suggests it or after
// ContinueAsNewAfterTurns turns, between turns or while idle.
func Session(ctx workflow.Context, in SessionInput) (SessionResult, error) {
	inputErr := checkSessionInput(&in)
	s := &session{loop: newLoop(ctx, in.LoopConfig, in.Messages), in: in}
	s.restore(in.Carry)
	if err := s.registerHandlers(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.registerSessionHandlers(ctx); err != nil {
		return SessionResult{}, err
	}
	if inputErr != nil {
		s.setStatus(ctx, statusFailed)
		return SessionResult{}, temporal.NewNonRetryableApplicationError("invalid input: "+inputErr.Error(), ErrInvalidInput, nil)
	}
	if err := s.loadCarriedTranscript(ctx); err != nil {
		s.setStatus(ctx, statusFailed)
		return SessionResult{}, err
	}
	if err := s.resolve(ctx); err != nil {
		s.setStatus(ctx, statusFailed)
		return SessionResult{}, err
	}
	s.suspend = func() bool { return s.shouldContinueAsNew(ctx) }

	if in.Carry != nil && in.Carry.Run != nil {
		s.setStatus(ctx, statusRunning)
		if paused := s.runLoop(ctx, *in.Carry.Run); paused != nil {
			return s.continueAsNew(ctx, paused)
		}
	}
	for {
		s.setStatus(ctx, statusIdle)
		s.waitForWork(ctx)
		if s.cancelled {
			return s.result(), temporal.NewCanceledError(s.result())
		}
		if s.next == nil {
			return s.continueAsNew(ctx, nil)
		}
		next := s.next
		s.next = nil
		s.cfg = s.settings
		s.beginRun()
		if paused := s.run(ctx, next.Prompts, next.SkipSteeringPoll); paused != nil {
			return s.continueAsNew(ctx, paused)
		}
		if s.cancelled {
			return s.result(), temporal.NewCanceledError(s.result())
		}
	}
}

func checkSessionInput(in *SessionInput) error {
	if in.decodeErr != "" {
		return errors.New(in.decodeErr)
	}
	var errs []error
	if err := in.Normalize(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateMessages("messages", in.Messages)...)
	if in.ContinueAsNewAfterTurns < 0 {
		errs = append(errs, errors.New("continueAsNewAfterTurns must not be negative"))
	}
	return errors.Join(errs...)
}

// restore takes over what the previous run carried.
func (s *session) restore(c *SessionCarry) {
	if c == nil {
		return
	}
	s.steering.items, s.followUps.items = c.Steering, c.FollowUps
	s.usage, s.turn, s.runs = c.Usage, c.Turn, c.Runs
	s.events.first = c.NextSeq
	for _, t := range c.Allowed {
		s.allowed[t] = true
	}
	s.modelBase, s.runStart = c.ModelBase, c.RunStart
	s.next = c.Next
	s.turnsAtStart = c.Turn
}

// waitForWork waits idle until a prompt or continue arrives, the session
// is cancelled, or it should continue as new.
func (s *session) waitForWork(ctx workflow.Context) {
	for s.next == nil && !s.cancelled && !s.shouldContinueAsNew(ctx) {
		sel := workflow.NewSelector(ctx)
		s.addSignalCases(sel)
		sel.AddReceive(s.wake, func(c workflow.ReceiveChannel, _ bool) { c.ReceiveAsync(nil) })
		sel.Select(ctx)
	}
}

func (s *session) shouldContinueAsNew(ctx workflow.Context) bool {
	if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return true
	}
	n := s.in.ContinueAsNewAfterTurns
	return n > 0 && s.turn-s.turnsAtStart >= n
}

// continueAsNew hands the session over to a new run of the same workflow
// id once every handler has finished.
func (s *session) continueAsNew(ctx workflow.Context, paused *PausedRun) (SessionResult, error) {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	s.drainSignals(ctx)
	next := s.in
	next.LoopConfig = s.settings
	next.Messages = nil
	next.Carry = &SessionCarry{
		Steering:  s.steering.items,
		FollowUps: s.followUps.items,
		Usage:     s.usage,
		Turn:      s.turn,
		Runs:      s.runs,
		NextSeq:   s.events.last() + 1,
		Allowed:   sortedKeys(s.allowed),
		ModelBase: s.modelBase,
		RunStart:  s.runStart,
		Run:       paused,
		Next:      s.next,
	}
	if paused != nil {
		// The paused run goes on with the configuration it started with.
		next.LoopConfig = s.cfg
	}
	if s.context.Size() <= maxCarriedTranscriptBytes {
		next.Messages = s.context.Messages
	} else {
		info := workflow.GetInfo(ctx)
		next.Carry.Transcript = &TranscriptRef{
			WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
			Count: s.context.Len(), Hash: s.context.HashAt(s.context.Len()),
		}
	}
	s.status = statusContinued
	return SessionResult{}, workflow.NewContinueAsNewError(ctx, SessionWorkflow, next)
}

// loadCarriedTranscript reads a transcript too large to carry from the
// previous run, page by page, and checks it against its hash.
func (s *session) loadCarriedTranscript(ctx workflow.Context) error {
	c := s.in.Carry
	if c == nil || c.Transcript == nil {
		return nil
	}
	ref := c.Transcript
	for s.context.Len() < ref.Count {
		var page activities.ContextPage
		f := workflow.ExecuteLocalActivity(s.localCtx(ctx), a.LoadContext, activities.LoadContextInput{
			WorkflowID: ref.WorkflowID, RunID: ref.RunID, From: s.context.Len(), To: ref.Count,
		})
		if err := f.Get(ctx, &page); err != nil {
			return err
		}
		if len(page.Messages) == 0 {
			return temporal.NewNonRetryableApplicationError("the previous run returned no messages", activities.ErrContextMismatch, nil)
		}
		s.context.Append(page.Messages...)
	}
	if s.context.Len() != ref.Count || s.context.HashAt(ref.Count) != ref.Hash {
		return temporal.NewNonRetryableApplicationError("the transcript read from the previous run does not match its hash",
			activities.ErrContextMismatch, nil)
	}
	return nil
}

func (s *session) result() SessionResult {
	return SessionResult{Runs: s.runs, Turns: s.turn, Messages: s.context.Len(), Usage: s.usage}
}

// busy reports whether a run is in progress or about to start.
func (s *session) busy() bool {
	return s.next != nil || s.status == statusRunning || s.status == statusWaitingApproval
}
