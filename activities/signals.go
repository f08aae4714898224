package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/durable-agents/agentloop/agent"
)

// maxPendingUpdates bounds the partial results waiting to be signalled. A
// partial result replaces the previous one (bash sends its whole tail each
// time), so when a tool outpaces the signals the oldest waiting ones are
// dropped and only counted.
const maxPendingUpdates = 16

// signalTimeout bounds one signal to the tool's own workflow.
const signalTimeout = 30 * time.Second

// updateSender delivers a tool's partial results to its workflow as
// SignalToolUpdate signals, in order, one signal in flight at a time so a
// chatty tool costs one history event per round trip rather than one per
// update.
type updateSender struct {
	c      client.Client
	info   activity.Info
	callID string
	start  time.Time
	logger log.Logger

	mu      sync.Mutex
	pending []agent.ToolResult
	offsets []time.Duration
	dropped int
	wake    chan struct{}
	closed  bool
	done    chan struct{}
}

func newUpdateSender(c client.Client, info activity.Info, callID string, start time.Time, logger log.Logger) *updateSender {
	u := &updateSender{c: c, info: info, callID: callID, start: start, logger: logger,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go u.loop()
	return u
}

// send queues a partial result stamped with the wall clock; it never
// blocks the tool.
func (u *updateSender) send(r agent.ToolResult) { u.sendAt(r, time.Since(u.start)) }

// sendAt queues a partial result emitted at the given offset from the
// call's start, in a tool's simulated time (tools.Call.UpdateAt).
func (u *updateSender) sendAt(r agent.ToolResult, at time.Duration) {
	r = capResult(r)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	u.pending = append(u.pending, r)
	u.offsets = append(u.offsets, at)
	if n := len(u.pending) - maxPendingUpdates; n > 0 {
		u.dropped += n
		u.pending = append([]agent.ToolResult(nil), u.pending[n:]...)
		u.offsets = append([]time.Duration(nil), u.offsets[n:]...)
	}
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// close sends what is still queued and waits for it, so every update is in
// history before the activity's result.
func (u *updateSender) close(ctx context.Context) {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
	<-u.done
}

func (u *updateSender) loop() {
	defer close(u.done)
	for range u.wake {
		closed := u.flush()
		if closed {
			u.flush()
			return
		}
	}
}

// flush signals what is queued and reports whether the sender is closed.
func (u *updateSender) flush() (closed bool) {
	u.mu.Lock()
	update := ToolUpdate{ToolCallID: u.callID, Attempt: u.info.Attempt, Results: u.pending, Offsets: u.offsets, Dropped: u.dropped}
	closed = u.closed
	u.pending, u.offsets, u.dropped = nil, nil, 0
	u.mu.Unlock()
	if len(update.Results) > 0 {
		u.signal(update)
	}
	return closed
}

func (u *updateSender) signal(update ToolUpdate) {
	// A background context: the updates must arrive even while the activity
	// is being cancelled, since the tool's final result follows them.
	ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
	defer cancel()
	err := u.c.SignalWorkflow(ctx, u.info.WorkflowExecution.ID, u.info.WorkflowExecution.RunID, SignalToolUpdate, update)
	if err != nil {
		u.logger.Warn("Tool update not delivered", "ToolCallID", u.callID, "Error", err)
	}
}

// runControl lets a tool steer, follow up or abort its own run, through the
// same signals a client would send. A signal is in history when the call
// returns, so it precedes the tool's result.
type runControl struct {
	a    *Activities
	info activity.Info
	// cancelTools cancels the contexts of the run's tools running in this
	// process, the caller's included: a tool that aborts its run is aborted
	// with it, at once, as in pi where they share one signal.
	cancelTools func()
}

func (r runControl) Steer(ctx context.Context, m agent.Message) error {
	return r.signal(ctx, SignalToolQueue, ToolQueue{Message: m})
}

func (r runControl) FollowUp(ctx context.Context, m agent.Message) error {
	return r.signal(ctx, SignalToolQueue, ToolQueue{Message: m, FollowUp: true})
}

// Abort cancels the run's tools in this process before it signals the
// workflow: in pi the siblings see the abort in the same instant, and the
// signal may take a while on a loaded server (a 300 ms sibling finished
// first in a stress run).
func (r runControl) Abort(ctx context.Context, reason string) error {
	if r.cancelTools != nil {
		r.cancelTools()
	}
	return r.signal(ctx, SignalAbort, AbortRequest{Reason: reason})
}

// signal ignores the tool context's cancellation: in pi, queueing a message
// from an aborted tool still works, so it must here too.
func (r runControl) signal(ctx context.Context, name string, arg any) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
	defer cancel()
	return r.a.Client.SignalWorkflow(ctx, r.info.WorkflowExecution.ID, r.info.WorkflowExecution.RunID, name, arg)
}
