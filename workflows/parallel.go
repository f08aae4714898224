package workflows

import (
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// dispatchSkew is how much later one call of a parallel batch may start
// than its siblings: they are scheduled together, but each reaches a worker
// on its own. A finished call's end waits until no sibling still running can
// have been faster, which is at most this long after its own duration.
const dispatchSkew = 25 * time.Millisecond

// preparedCall is a call that passed prepare and waits to execute.
type preparedCall struct {
	index int
	call  agent.Content
	args  map[string]any
}

// chain is one prepared call on its way through execute and finalize.
type chain struct {
	preparedCall
	exec     workflow.Future
	fin      workflow.Future
	executed activities.ExecuteOutput
	// done is set when every stage has finished; ended once its
	// tool_execution_end is in the log.
	done  *finalized
	ended bool
}

// took is the call's duration in whole milliseconds: pi's calls of a batch
// start in the same instant and end in the order of their durations, with
// same-instant ends in call order.
func (c *chain) took() int64 { return c.executed.Duration.Milliseconds() }

// batch is a parallel batch in flight.
type batch struct {
	start  time.Time
	chains []*chain
}

// runConcurrently runs the prepared calls' execute→finalize chains
// concurrently: every execute is scheduled at once (pi's Promise.all), and
// each call's tool_execution_end is emitted when it finishes, in the order
// pi would emit them had the calls all started together. Results that reach
// the workflow close together are put in that order by their durations;
// see release.
func (l *loop) runConcurrently(ctx workflow.Context, prepared []preparedCall, done []*finalized) {
	b := &batch{start: workflow.Now(ctx)}
	for _, p := range prepared {
		b.chains = append(b.chains, &chain{preparedCall: p, exec: l.startExecute(p.call, p.args)})
	}
	l.batch = b
	defer func() { l.batch = nil }()

	// The release timer wakes the workflow when a held end becomes due
	// while siblings still run; it exists only while an end is held.
	var timer workflow.Future
	var timerDue time.Time
	cancelTimer := func() {}
	for !b.allEnded() {
		l.waitAny(ctx, b, timer)
		if timer != nil && timer.IsReady() {
			timer = nil
		}
		for _, c := range b.chains {
			l.advance(ctx, c)
		}
		due := l.release(ctx, -1)
		if timer != nil && (due.IsZero() || due.Before(timerDue)) {
			cancelTimer()
			timer = nil
		}
		if timer == nil && !due.IsZero() {
			tctx, cancel := workflow.WithCancel(ctx)
			timer, timerDue, cancelTimer = workflow.NewTimer(tctx, due.Sub(workflow.Now(ctx))), due, cancel
		}
	}
	for _, c := range b.chains {
		done[c.index] = c.done
	}
}

// advance moves a chain on when its current stage is ready.
func (l *loop) advance(ctx workflow.Context, c *chain) {
	if c.exec != nil && c.exec.IsReady() {
		out, ok := executeResult(ctx, c.exec)
		c.exec = nil
		if !ok {
			c.exec = l.startExecute(c.call, c.args)
			return
		}
		c.executed = out
		if len(l.in.AfterToolCall) == 0 {
			c.done = &finalized{call: c.call, result: out.Result, isError: out.IsError}
			return
		}
		c.fin = l.startFinalize(ctx, c.call, c.args, out.Result, out.IsError)
	}
	if c.fin != nil && c.fin.IsReady() {
		f := finalizeResult(ctx, c.fin, c.call)
		c.fin, c.done = nil, &f
	}
}

// release emits the ends of finished calls that no running sibling can
// precede: in order of duration, each once the batch has run longer than
// its duration plus dispatchSkew, or at once when no sibling still runs.
// With before >= 0 it also releases, whatever the time, the ends of calls
// that took less than before milliseconds (a sibling's update at that offset
// follows them in pi). It returns when the next end may be released, or
// zero when none waits.
func (l *loop) release(ctx workflow.Context, before int64) time.Time {
	b := l.batch
	var waiting []*chain
	running := false
	for _, c := range b.chains {
		switch {
		case c.done == nil:
			running = true
		case !c.ended:
			waiting = append(waiting, c)
		}
	}
	sort.SliceStable(waiting, func(i, j int) bool { return waiting[i].took() < waiting[j].took() })
	now := workflow.Now(ctx)
	for _, c := range waiting {
		due := b.start.Add(time.Duration(c.took())*time.Millisecond + dispatchSkew)
		if running && now.Before(due) && c.took() >= before {
			return due
		}
		l.endCall(*c.done)
		c.ended = true
	}
	return time.Time{}
}

func (b *batch) allEnded() bool {
	for _, c := range b.chains {
		if !c.ended {
			return false
		}
	}
	return true
}

// waitAny blocks until a stage or the release timer is ready, handling
// signals first.
func (l *loop) waitAny(ctx workflow.Context, b *batch, timer workflow.Future) {
	ready := func() bool {
		if timer != nil && timer.IsReady() {
			return true
		}
		for _, c := range b.chains {
			if (c.exec != nil && c.exec.IsReady()) || (c.fin != nil && c.fin.IsReady()) {
				return true
			}
		}
		return false
	}
	for !ready() {
		s := workflow.NewSelector(ctx)
		l.addSignalCases(s)
		for _, c := range b.chains {
			if c.exec != nil {
				s.AddFuture(c.exec, func(workflow.Future) {})
			}
			if c.fin != nil {
				s.AddFuture(c.fin, func(workflow.Future) {})
			}
		}
		if timer != nil {
			s.AddFuture(timer, func(workflow.Future) {})
		}
		s.Select(ctx)
	}
	l.drainSignals(ctx)
}

// timeoutText says which timeout fired, in words.
func timeoutText(err *temporal.TimeoutError) string {
	switch err.TimeoutType() {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "the worker running it stopped responding (heartbeat timeout)"
	case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return "timed out (start-to-close timeout)"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "no worker picked it up in time (schedule-to-start timeout)"
	default:
		return fmt.Sprintf("timed out (%v)", err.TimeoutType())
	}
}
