package workflows

import (
	"cmp"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// preparedCall is a call that passed prepare and waits to execute.
type preparedCall struct {
	index int
	call  agent.Content
	args  map[string]any
}

// chain is one prepared call on its way through execute and finalize.
type chain struct {
	preparedCall
	exec workflow.Future
	fin  workflow.Future
	// finIn is the finalize's input, for running it elsewhere once
	// (finMoved) when this worker lacks an after hook; drift is the
	// execute's wait for a worker that has the tool (drift.go).
	finIn    activities.FinalizeInput
	finMoved bool
	drift    driftWait
	// lookup asks the host about a lost single-attempt tool; lost is the
	// attempt's error.
	lookup   workflow.Future
	lost     error
	executed activities.ExecuteOutput
	// done is set when every stage has finished.
	done *finalized
	// progress is the latest offset (ms) a partial result of this call was
	// emitted at: its later events cannot be earlier.
	progress int64
}

// heldEvent is an event of a parallel batch, or a message one of its calls
// queued, waiting for its turn. Its key is when pi would emit or queue it
// had every call started in the same instant: its offset from the call's
// start, partial results and queued messages before ends at the same
// instant, then call order, then arrival (a call's signals arrive in the
// order it sent them).
type heldEvent struct {
	at    int64 // milliseconds from the call's start
	end   bool
	index int
	seq   int
	event agent.Event
	chain *chain
	// queued is a steering or follow-up message, which release queues
	// instead of emitting; it costs no timer, since nothing polls the
	// queues before the batch is over.
	queued *agentapi.ToolQueue
}

// compare orders two held events by that key: negative when h comes
// first.
func (h heldEvent) compare(o heldEvent) int {
	switch {
	case h.at != o.at:
		return cmp.Compare(h.at, o.at)
	case h.end != o.end:
		if h.end {
			return 1
		}
		return -1
	case h.index != o.index:
		return cmp.Compare(h.index, o.index)
	}
	return cmp.Compare(h.seq, o.seq)
}

// batch is a parallel batch in flight.
type batch struct {
	start time.Time
	// window bounds how long an event is held back so that a sibling's
	// earlier event can still come first (agent.LoopConfig.OrderWindow).
	// pi's calls of a batch start in the same instant in one process;
	// here they reach workers one by one.
	window time.Duration
	chains []*chain
	held   []heldEvent
	seq    int
	// check is the timer or the status look-up of the sub-agents carried
	// from an earlier workflow run (subagent_carry.go), nil when none
	// runs; checking says it is the look-up; cancelCheck cancels the
	// timer.
	check       workflow.Future
	checking    bool
	cancelCheck workflow.CancelFunc
	// checkMade is the history length when the check's timer was made.
	checkMade int
	// tidy says the batch's children were started at subAgentTidyVersion
	// (agentapi.PausedBatch.Tidy).
	tidy bool
	// news says a call of the batch has reported or ended since the batch
	// started or resumed in this workflow run: a resumed batch pauses
	// again only after its history has grown for it. arrived counts the
	// signals of the batch's calls; a batch with children that send their
	// result (wakeOnNews, subagent_carry.go) wakes for each, so that what
	// they report goes out within the order window and the batch can
	// pause. Batches recorded before it wake for stages and timers alone.
	news       bool
	arrived    int
	wakeOnNews bool
}

// runConcurrently runs the prepared calls' execute→finalize chains
// concurrently: every execute is scheduled at once (pi's Promise.all), and
// each call's tool_execution_end is emitted when it finishes, in the order
// pi would emit them had the calls all started together. Results that reach
// the workflow close together are put in that order by their durations;
// see release. It returns the batch paused, with done filled so far, when
// the run continues as new while only sub-agents run (subagent_carry.go).
func (l *loop) runConcurrently(ctx workflow.Context, prepared []preparedCall, done []*finalized) *agentapi.PausedBatch {
	l.rehost(ctx)
	b := &batch{start: workflow.Now(ctx), window: l.cfg.OrderWindow(), news: true}
	for _, p := range prepared {
		b.chains = append(b.chains, &chain{preparedCall: p})
	}
	l.batch = b
	for _, c := range b.chains {
		c.exec = l.startExecute(c.call, c.index+1, c.args)
	}
	return l.runBatch(ctx, b, done)
}

// runBatch runs a batch's chains until every call has ended, or until it
// pauses for a continue-as-new.
func (l *loop) runBatch(ctx workflow.Context, b *batch, done []*finalized) *agentapi.PausedBatch {
	defer func() { l.batch = nil }()
	// The release timer wakes the workflow when a held event becomes due
	// while siblings still run; it exists only while an event is held,
	// and only while someone watches (releaseTimer).
	var timer workflow.Future
	var timerDue time.Time
	var timerMade int
	cancelTimer := func() {}
	for {
		for _, c := range b.chains {
			l.advance(ctx, c)
		}
		due := l.release(ctx)
		if b.allDone() && len(b.held) == 0 {
			break
		}
		if l.pauseBatchNow(ctx, b) {
			// The continue-as-new ends the run's timers. Cancelling one
			// already started costs a TimerCanceled event for nothing;
			// one made in this workflow task has not been sent, and
			// cancelling it drops its command.
			now := workflow.GetInfo(ctx).GetCurrentHistoryLength()
			if !b.tidy || timerMade == now {
				cancelTimer()
			}
			if !b.tidy || b.checkMade == now {
				b.endCheck()
			}
			return l.pauseBatch(b, done)
		}
		if timer != nil && (due.IsZero() || due.Before(timerDue)) {
			cancelTimer()
			timer = nil
		}
		if timer == nil && !due.IsZero() && l.releaseTimer(ctx, b) {
			tctx, cancel := workflow.WithCancel(ctx)
			timer, timerDue, cancelTimer = workflow.NewTimer(tctx, due.Sub(workflow.Now(ctx))), due, cancel
			timerMade = workflow.GetInfo(ctx).GetCurrentHistoryLength()
		}
		l.checkCarried(ctx, b)
		l.waitAny(ctx, b, timer)
		if timer != nil && timer.IsReady() {
			timer = nil
		}
	}
	cancelTimer()
	b.endCheck()
	for _, c := range b.chains {
		done[c.index] = c.done
	}
	return nil
}

// advance moves a chain on when its current stage is ready.
func (l *loop) advance(ctx workflow.Context, c *chain) {
	var out activities.ExecuteOutput
	executed := false
	if c.exec != nil && c.exec.IsReady() {
		if gone, ok := l.hostUnavailable(c.call.Name, c.exec.Get(ctx, nil)); ok {
			out, executed, c.exec = gone, true, nil
		} else if id, lost := l.lostAttempt(c.call, c.exec.Get(ctx, nil)); lost {
			c.lost, c.exec = c.exec.Get(ctx, nil), nil
			if c.lookup = l.startLookup(ctx, c.call, id); c.lookup != nil {
				return
			}
			out, executed = lookupResult(ctx, nil, c.lost), true
		} else if delay, again := l.driftDelay(ctx, &c.drift, c.exec.Get(ctx, nil)); again {
			// The worker lacked the tool (drift.go).
			c.exec = l.executeAfter(ctx, c, delay)
			return
		} else {
			var ok bool
			out, ok = executeResult(ctx, c.exec)
			c.exec = nil
			if !ok {
				c.exec = l.startExecute(c.call, c.index+1, c.args)
				return
			}
			l.recordUpdates(&out)
			executed = true
		}
	}
	if c.lookup != nil && c.lookup.IsReady() {
		l.lookupHostGone(ctx, c.call.Name, c.lookup)
		out, executed = lookupResult(ctx, c.lookup, c.lost), true
		c.lookup = nil
	}
	if executed {
		c.executed = out
		if len(l.cfg.AfterToolCall) == 0 {
			l.finished(c, finalized{call: c.call, result: out.Result, isError: out.IsError})
			return
		}
		if agent.HasRemoteHook(l.cfg.AfterToolCall) {
			// Several stages, each of which may move elsewhere itself.
			c.fin, c.finMoved = l.finalizeAsync(c, out.Result, out.IsError), true
			return
		}
		c.finIn = l.finalizeInput(c.call, c.args, out.Result, out.IsError)
		c.fin = workflow.ExecuteLocalActivity(l.localCtx(ctx), a.FinalizeToolCall, c.finIn)
	}
	if c.fin != nil && c.fin.IsReady() && !c.finMoved {
		if g, ok := l.elsewhere(ctx, c.fin.Get(ctx, nil), a.FinalizeToolCall, c.finIn); ok {
			// The worker lacked an after hook (drift.go).
			c.fin, c.finMoved = g, true
			return
		}
	}
	if c.fin != nil && c.fin.IsReady() {
		f := finalizeResult(ctx, c.fin, c.call)
		c.fin = nil
		l.finished(c, f)
	}
}

// finished holds a chain's end until release lets it out. The call's
// partial results and queued messages came before its end, so none of them
// is held as later than it: a tool may report a shorter duration than the wall clock
// measured for its updates (the conformance tools report pi's virtual
// time), and on a loaded machine an update at wall-clock 2 ms would
// otherwise follow an end at 0.
func (l *loop) finished(c *chain, f finalized) {
	c.done = &f
	l.batch.news = true
	at := c.executed.Duration.Milliseconds()
	for i := range l.batch.held {
		if h := &l.batch.held[i]; h.index == c.index && !h.end && h.at > at {
			h.at = at
		}
	}
	l.batch.hold(heldEvent{at: at, end: true, index: c.index, chain: c})
}

func (b *batch) hold(e heldEvent) {
	b.arrived++
	b.seq++
	e.seq = b.seq
	b.held = append(b.held, e)
}

// chainOf returns the chain of a tool call in the batch, by id and
// position (running in toolbatch.go).
func (b *batch) chainOf(id string, pos int) *chain {
	for _, c := range b.chains {
		if c.call.ID == id && (pos == 0 || c.index+1 == pos) {
			return c
		}
	}
	return nil
}

// release emits held events in pi's order. An event goes out once no
// running sibling can still produce an earlier one: the sibling has
// reported progress past it, or the batch has run its window longer than
// the event's offset. When every call is done, everything goes. It returns
// when the next held event becomes due, or zero when none is held.
func (l *loop) release(ctx workflow.Context) time.Time {
	b := l.batch
	slices.SortStableFunc(b.held, heldEvent.compare)
	elapsed := workflow.Now(ctx).Sub(b.start)
	n := 0
	for _, h := range b.held {
		if !b.releasable(h, elapsed) {
			break
		}
		n++
		switch {
		case h.end:
			l.endCall(h.chain.index+1, *h.chain.done)
		case h.queued != nil:
			l.queueFromTool(*h.queued)
		default:
			l.emit(h.event)
		}
	}
	b.held = b.held[n:]
	for _, h := range b.held {
		if h.queued == nil {
			return b.start.Add(time.Duration(h.at)*time.Millisecond + b.window + time.Millisecond)
		}
	}
	return time.Time{}
}

// unwatchedReleaseChange drops the release timer of a batch nobody
// watches; histories recorded before it start one whenever an event is
// held.
const unwatchedReleaseChange = "no-release-timer-unwatched"

// releaseTimer says whether a held event gets a timer that wakes the
// workflow when it becomes due (0-3 a run, by how the server splits the
// results into workflow tasks). It only bounds how long a watcher waits
// for the event: without it the event goes out at the batch's next wake
// (a sibling's stage, a Signal, at the latest the batch's end), where
// release sorts what is held and lets an event out only once no running
// sibling can precede it, or its window has passed, which is as true
// later: the same order, or one closer to pi's (a sibling's event with an
// earlier offset that arrives after the window then goes first, as it
// would in pi). So a run nobody watches (its last model turn's worker saw
// no watch lease) goes without it. The price: a held end shows, to a
// watcher that comes in mid-batch and in the state Query's pending calls,
// only when the batch next wakes, at the latest at its last call's end.
//
// A batch with a sub-agent still running keeps it: it may pause for a
// continue-as-new only with nothing held (pauseBatchNow), and a child can
// run for hours after its siblings' last news.
func (l *loop) releaseTimer(ctx workflow.Context, b *batch) bool {
	if l.watched {
		return true
	}
	for _, c := range b.chains {
		if c.done == nil && l.subAgentCall(c.call.Name) {
			return true
		}
	}
	return workflow.GetVersion(ctx, unwatchedReleaseChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion
}

func (b *batch) releasable(h heldEvent, elapsed time.Duration) bool {
	if elapsed >= time.Duration(h.at)*time.Millisecond+b.window {
		return true
	}
	for _, c := range b.chains {
		if c.done == nil && c.index != h.index && c.progress <= h.at {
			return false
		}
	}
	return true
}

func (b *batch) allDone() bool {
	for _, c := range b.chains {
		if c.done == nil {
			return false
		}
	}
	return true
}

// waitAny blocks until a stage or the release timer is ready, handling
// signals first.
func (l *loop) waitAny(ctx workflow.Context, b *batch, timer workflow.Future) {
	seen := b.arrived
	ready := func() bool {
		if timer != nil && timer.IsReady() || b.check != nil && b.check.IsReady() || b.wakeOnNews && b.arrived != seen {
			return true
		}
		for _, c := range b.chains {
			for _, f := range []workflow.Future{c.exec, c.fin, c.lookup} {
				if f != nil && f.IsReady() {
					return true
				}
			}
		}
		return false
	}
	for !ready() {
		s := workflow.NewSelector(ctx)
		l.addSignalCases(s)
		for _, c := range b.chains {
			for _, f := range []workflow.Future{c.exec, c.fin, c.lookup} {
				if f != nil {
					s.AddFuture(f, func(workflow.Future) {})
				}
			}
		}
		for _, f := range []workflow.Future{timer, b.check} {
			if f != nil {
				s.AddFuture(f, func(workflow.Future) {})
			}
		}
		s.Select(ctx)
	}
	l.drainSignals(ctx)
}
