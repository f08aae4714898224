package workflows

import (
	"encoding/json"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// a is the nil receiver the workflow names activities through; the worker
// registers a real *activities.Activities.
var a *activities.Activities

// maxResultBytes bounds the messages in the workflow result, which must stay
// under Temporal's 2 MB payload limit.
const maxResultBytes = 1 << 20

// loop is the state of the agent loop, shared by the main coroutine and the
// handlers: one run for AgentLoop, a sequence of runs for Session.
type loop struct {
	// cfg is the configuration of the run in progress; settings is what
	// the next run will use (a session's setters change it between runs).
	cfg      agent.LoopConfig
	settings agent.LoopConfig
	tools    map[string]activities.ToolInfo
	// remote are the run's remote tools by name (remote.go), also in
	// tools.
	remote map[string]agent.RemoteTool
	// hostQueue is the task queue of the worker host that holds the run's
	// workspace; its workspace tools run there (see toolQueue).
	hostQueue string
	// hostStartDefault is the resolving worker's hostStartTimeout;
	// hostResolvedAt is when ResolveRun named hostQueue in this workflow
	// run (zero when it came from the carry); hostLost is a host queue a
	// call found unavailable, which rehost replaces (hosts.go).
	hostStartDefault time.Duration
	hostResolvedAt   time.Time
	hostLost         string
	// resolvedBefore is set when the run continued as new: what it names
	// resolved in an earlier workflow run, so a worker lacking it is
	// drift (drift.go), never bad input.
	resolvedBefore bool
	// storeID is the id of the content store that holds the run's content
	// (ResolveRun's answer, kept across continue-as-new): activities that
	// read or write it carry it, and a worker of another store refuses them.
	storeID string

	// context holds the transcript's tail: the messages the content
	// store's segments do not hold yet, and those of the current run.
	context *agent.Transcript
	// segments hold the transcript's first messages in the content store
	// (the model-turn activity writes them); a model turn's input names
	// them and adds only the messages after them.
	segments []agent.Segment
	// runStart is where the current run's new messages begin in the
	// context: pi's newMessages is the context from runStart on, after the
	// run's messages the workflow no longer holds (runEarlier: those of an
	// earlier workflow run, and those before a compaction).
	runStart   int
	runEarlier []agent.MessageRange
	// inRun is set from a run's start to its agent_end.
	inRun bool
	// lastRole is the role of the transcript's last message.
	lastRole string
	compact  compactState
	// runNumber counts the agent runs of this workflow run.
	runNumber int
	// turnsAtStart is the turn count this workflow run started with, and
	// continueAfterTurns the turns after which it continues as new.
	turnsAtStart       int
	continueAfterTurns int
	// continueAfterEvents is the history length after which it continues
	// as new, also in a batch that waits on sub-agents alone.
	continueAfterEvents int
	lastAssistant       agent.Message
	// turnPrepared is the last model turn's preparation of its answer's
	// tool calls (prepared.go).
	turnPrepared []activities.PreparedCall
	// watched says that someone watched the last model turn; carriedUpTo
	// is the log's last event when the last model turn was scheduled
	// (logExcerpt, turn.go).
	watched     bool
	carriedUpTo int64
	// restTask is the workflow task (its WorkflowTaskStarted event ID) in
	// which carryAtRest last carried the log, until the log grows again
	// (markLogGrew); 0 when none.
	restTask int

	steering  queue
	followUps queue
	inputs    inputState // large inputs: order, notes (inputs.go)
	events    eventLog

	status      string
	turn        int
	normalTurns int
	pending     []runningCall // tool calls started and not yet ended, in call order
	// queuedAttempt is, per tool call, the latest attempt of its execute
	// activity that queued a message (attempts.go).
	queuedAttempt map[string]int32
	usage         agent.Usage
	// toolCalls counts the tool calls the budget let through (budget.go);
	// budgetRefused is why it refused one, which stops the run before its
	// next model turn.
	toolCalls     int
	budgetRefused string
	stopReason    agent.StopReason
	errorMessage  string

	aborted     bool
	abortReason string
	// abortCtx is cancelled by an abort; activities started before it run
	// under it. cancelAbort is nil once used.
	abortCtx    workflow.Context
	cancelAbort workflow.CancelFunc
	baseCtx     workflow.Context
	rootCtx     workflow.Context
	cancelled   bool

	signals signalChannels
	// updates are the Updates this run applied, so that a repeat after a
	// continue-as-new is applied once (updates.go).
	updates updateLog
	// batch is the parallel tool batch in flight, if any.
	batch *batch
	// children are the running sub-agents, in start order; childApprovals
	// their calls waiting for a person; parent is the call this run
	// answers when it is a sub-agent (subagent_signals.go).
	children       []*childCall
	childApprovals []*childApproval
	parent         *agentapi.ParentCall
	parentSignals  []workflow.Future
	// parentGone is set once a signal to the parent found it closed.
	parentGone bool

	// approvals are the calls waiting for (or just decided by) a person,
	// by tool call id, in request order; allowed are the tools a person
	// allowed for the rest of the session. wake tells the main coroutine
	// that an Update handler decided something.
	approvals        map[callKey]*approval
	approvalOrder    []callKey
	allowed          map[string]bool
	wake             workflow.Channel
	searchAttributes bool
	// title is a session's first prompt, for the Web UI and session list
	// (listing.go).
	title string
	// suspend, when set, is asked between two turns whether the run should
	// stop there to continue as new (sessions only).
	suspend func() bool
	// promptSignal handles the prompt Signal (sessions only).
	promptSignal func(agentapi.PromptRequest)
}

func newLoop(ctx workflow.Context, cfg agent.LoopConfig, messages []agent.Message) *loop {
	l := &loop{
		cfg:           cfg,
		settings:      cfg,
		tools:         map[string]activities.ToolInfo{},
		context:       agent.NewTranscript(cfg.SystemPrompt),
		steering:      queue{mode: cfg.SteeringMode},
		followUps:     queue{mode: cfg.FollowUpMode},
		events:        eventLog{first: 1},
		status:        agentapi.StatusStarting,
		queuedAttempt: map[string]int32{},
		approvals:     map[callKey]*approval{},
		allowed:       map[string]bool{},
		wake:          workflow.NewBufferedChannel(ctx, 1),
	}
	l.context.Append(messages...)
	if n := len(messages); n > 0 {
		l.lastRole = messages[n-1].Role
	}
	l.rootCtx = ctx
	// Activities must outlive a workflow cancellation long enough to end
	// the run the way an abort does, so they hang off a disconnected context.
	l.baseCtx, _ = workflow.NewDisconnectedContext(ctx)
	l.abortCtx, l.cancelAbort = workflow.WithCancel(l.baseCtx)
	return l
}

// newMessages is pi's newMessages for the current run: the messages this
// workflow run holds, and the ranges of those before them that only the
// content store's segments hold (an earlier workflow run's, and those a
// compaction replaced).
func (l *loop) newMessages() ([]agent.Message, []agent.MessageRange) {
	earlier := l.runEarlier
	if l.runStart >= l.context.Offset {
		return l.context.Since(l.runStart), earlier
	}
	earlier = append(slices.Clone(earlier),
		agent.MessageRange{Segments: l.segments, From: l.runStart, To: l.context.Offset})
	return l.context.Since(l.context.Offset), earlier
}

// forget drops the messages that the segments hold and the current run
// does not need, so the workflow's memory does not grow with the session.
func (l *loop) forget() {
	l.context.DropBefore(min(l.runStart, agent.SegmentsLen(l.segments)))
}

// beginRun resets what belongs to one run: pi's Agent makes a fresh abort
// controller for every run.
func (l *loop) beginRun() {
	l.runNumber++
	l.runStart = l.context.Len()
	l.runEarlier = nil
	l.inRun = true
	l.normalTurns = 0
	l.budgetRefused = ""
	l.stopReason, l.errorMessage = "", ""
	if l.aborted {
		l.aborted, l.abortReason = false, ""
		l.abortCtx, l.cancelAbort = workflow.WithCancel(l.baseCtx)
	}
}

// activityCtx is the context for an activity starting now: cancellable by
// abort until the run is aborted; afterwards not cancellable, since pi still
// runs later tools (with an aborted signal, which Aborted in their input
// reproduces).
func (l *loop) activityCtx() workflow.Context {
	if l.aborted {
		return l.baseCtx
	}
	return l.abortCtx
}

// localCtx runs the cheap stages (resolve, prepare, finalize) as local
// activities: recorded as markers, no task-queue round trip. Their retries
// run on the same worker, which cannot help when it lacks what the run
// needs: the stage then moves elsewhere at once (drift.go).
func (l *loop) localCtx(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(l.baseCtx, workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrConfigDrift}},
	})
}

// abort is pi's agent.abort: in-flight activities are cancelled (tools see a
// cancelled context) and the next model turn ends as aborted.
func (l *loop) abort(reason string) {
	if l.aborted {
		return
	}
	l.aborted = true
	l.abortReason = reason
	l.cancelAbort()
	l.cancelChildren()
	l.wake.SendAsync(struct{}{}) // a wait for approvals ends at once
}

// finish drains handlers and builds the result. A run cancelled from the CLI
// or UI ends like an aborted one, then reports Canceled with the result as
// details.
func (l *loop) finish(ctx workflow.Context) (agentapi.AgentLoopResult, error) {
	_ = workflow.Await(l.baseCtx, func() bool { return workflow.AllHandlersFinished(l.baseCtx) })
	l.drainSignals(l.baseCtx)
	l.sendResult(ctx)
	l.awaitParentSignals()
	res := agentapi.AgentLoopResult{
		StopReason:   l.stopReason,
		ErrorMessage: l.errorMessage,
		Turns:        l.turn,
		Usage:        l.usage,
		Steering:     l.steering.items,
		FollowUps:    l.followUps.items,
	}
	held, earlier := l.newMessages()
	res.Messages, res.OmittedMessages = boundedTail(held, l.resultBudget(ctx, res))
	for _, r := range earlier {
		res.OmittedMessages += r.To - r.From
	}
	if l.cancelled {
		return res, temporal.NewCanceledError(res)
	}
	return res, nil
}

// boundedTail returns the longest suffix of ms whose JSON fits in limit, and
// how many leading messages it leaves out.
func boundedTail(ms []agent.Message, limit int) ([]agent.Message, int) {
	size := 0
	start := len(ms)
	for start > 0 {
		b, _ := json.Marshal(ms[start-1])
		if size+len(b) > limit {
			break
		}
		size += len(b)
		start--
	}
	return ms[start:], start
}
