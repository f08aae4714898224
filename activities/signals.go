package activities

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// Partial results in history. Every partial result of a running tool
// reaches watchers at once through the activity's heartbeat details
// (toolprogress.go), which never enter history. The durable event log
// keeps pi's tool_execution_update events too, in pi's order, but
// coalesced and capped per call, so that a tool printing for hours can
// neither fill its run's history nor use up the server's signal limit
// (10,000 a run, after which steer and abort are refused as well):
//
//   - Partial results go to the workflow as toolUpdate signals, one in
//     flight at a time, in order; a signal carries every partial result
//     queued since the one before, each with its offset from the call's
//     start.
//   - The first burstSignals signals of a call go as fast as round trips
//     allow, each with up to maxPendingUpdates partial results (older
//     ones are dropped and counted): short tools, and pi's conformance
//     scenarios, keep every partial result they emit.
//   - After that, at most one signal every slowSignalInterval, carrying
//     only the latest partial result; the ones it replaces are dropped and
//     counted (ToolUpdate.Dropped).
//   - At most maxSignalsPerCall signals per call: once all but one have
//     gone, nothing more is signalled until the end.
//   - When the tool returns, the latest partial result not yet signalled
//     is always sent, and before the activity completes, so that it
//     precedes the result in history.
//   - Text and image blocks and details over store.InlineLimit (2 KB) go
//     to the content store before they are signalled; history holds stubs.
//
// So a call adds at most maxSignalsPerCall signals: one that runs for
// hours adds about one every 5 s for its first 15 minutes, then none until
// its end. A bash command's partial result (the tail of its output, up to
// 50 KB) costs history about 0.85 KB a signal once stored (the signal
// event with its stub, about 600 bytes, and the workflow task it wakes),
// so a bash call of any length adds at most about 170 KB (go run ./bench
// progress: 47 KB for a two-minute run with 43 signals).
const (
	// burstSignals is how many signals of a call go as fast as round trips
	// allow.
	burstSignals = 16
	// maxPendingUpdates is how many partial results one signal of the
	// burst carries at most.
	maxPendingUpdates = 16
	// slowSignalInterval is the least time between two signals of a call
	// after the burst.
	slowSignalInterval = 5 * time.Second
	// maxSignalsPerCall bounds the signals of one call, the end's included.
	maxSignalsPerCall = 200
)

// signalTimeout bounds one signal to the tool's own workflow, and
// offloadTimeout storing one signal's partial results.
const (
	signalTimeout  = 30 * time.Second
	offloadTimeout = 10 * time.Second
)

// updateSender delivers a tool's partial results to its workflow under the
// policy above.
type updateSender struct {
	callID   string
	position int
	attempt  int32
	start    time.Time
	// offload and signal store a signal's large content and send it;
	// tests of the policy replace them.
	offload func(agentapi.ToolUpdate) agentapi.ToolUpdate
	signal  func(agentapi.ToolUpdate)

	mu       sync.Mutex
	pending  []agent.ToolResult
	offsets  []time.Duration
	dropped  int
	sent     int       // signals taken so far
	lastSent time.Time // when the last one was taken
	closed   bool
	wake     chan struct{}
	done     chan struct{}

	// Deferral while nobody watches (deferred.go): deferOK is the
	// workflow's leave, watched says whether anyone watches now; kept
	// holds the updates kept for the result, flushed is set once they
	// went as signals.
	deferOK   bool
	watched   func() bool
	kept      []agentapi.ToolUpdate
	keptBytes int
	flushed   bool
}

func newUpdateSender(c client.Client, st store.Blobs, info activity.Info, callID string, position int, start time.Time, logger log.Logger) *updateSender {
	u := newUpdateQueue(callID, info.Attempt, start)
	u.position = position
	scope := info.WorkflowExecution.ID
	u.offload = func(update agentapi.ToolUpdate) agentapi.ToolUpdate { return offloadUpdate(st, scope, update, logger) }
	u.signal = func(update agentapi.ToolUpdate) {
		// A background context: the updates must arrive even while the
		// activity is being cancelled, since the tool's final result
		// follows them.
		ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
		defer cancel()
		err := c.SignalWorkflow(ctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, agentapi.SignalToolUpdate, update)
		if err != nil {
			logger.Warn("Tool update not delivered", "ToolCallID", callID, "Error", err)
		}
	}
	go u.loop()
	return u
}

// partialStore is where signalled partial results keep their large
// content: none when the worker keeps content inline (NoOffload).
func (a *Activities) partialStore() store.Blobs {
	if a.NoOffload {
		return nil
	}
	return a.Store
}

// newUpdateQueue returns a sender that sends nothing until its loop runs.
func newUpdateQueue(callID string, attempt int32, start time.Time) *updateSender {
	return &updateSender{callID: callID, attempt: attempt, start: start,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues a partial result stamped with the wall clock; it never
// blocks the tool.
func (u *updateSender) send(r agent.ToolResult) { u.sendAt(r, time.Since(u.start)) }

// sendAt queues a partial result emitted at the given offset from the
// call's start, in a tool's simulated time (tools.Call.UpdateAt). A
// partial result replaces the one before (bash sends its whole tail each
// time), so when too many wait the oldest are dropped and only counted.
func (u *updateSender) sendAt(r agent.ToolResult, at time.Duration) {
	r = capResult(r)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	u.pending = append(u.pending, r)
	u.offsets = append(u.offsets, at)
	limit := maxPendingUpdates
	if u.sent >= burstSignals {
		limit = 1
	}
	if n := len(u.pending) - limit; n > 0 {
		u.dropped += n
		u.pending = slices.Clone(u.pending[n:])
		u.offsets = slices.Clone(u.offsets[n:])
	}
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// close sends what is still queued and waits for it, so every update is in
// history before the activity's result.
func (u *updateSender) close(ctx context.Context) {
	u.finish()
	<-u.done
}

// finish closes the queue: what is queued goes at once, the policy aside.
func (u *updateSender) finish() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (u *updateSender) loop() {
	defer close(u.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		update, ok, wait, closed := u.next(time.Now())
		if ok {
			u.sink(u.offload(update))
			continue
		}
		if closed {
			return
		}
		var timeout <-chan time.Time
		if wait > 0 {
			t.Reset(wait)
			timeout = t.C
		}
		select {
		case <-u.wake:
		case <-timeout:
		}
	}
}

// next takes the signal the policy lets go at now, if any. Otherwise wait
// is how long until one may go (zero: when a partial result or the close
// comes), and closed says the sender is closed and has nothing left.
func (u *updateSender) next(now time.Time) (update agentapi.ToolUpdate, ok bool, wait time.Duration, closed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.pending) == 0 {
		return agentapi.ToolUpdate{}, false, 0, u.closed
	}
	if !u.closed {
		if u.sent >= maxSignalsPerCall-1 {
			return agentapi.ToolUpdate{}, false, 0, false
		}
		if u.sent >= burstSignals {
			if wait := u.lastSent.Add(slowSignalInterval).Sub(now); wait > 0 {
				return agentapi.ToolUpdate{}, false, wait, false
			}
		}
	}
	update = agentapi.ToolUpdate{ToolCallID: u.callID, Position: u.position, Attempt: u.attempt, Results: u.pending, Offsets: u.offsets, Dropped: u.dropped}
	u.pending, u.offsets, u.dropped = nil, nil, 0
	u.sent++
	u.lastSent = now
	return update, true, 0, false
}

// offloadUpdate stores the large content of a signal's partial results.
// When the store does not answer, a partial result keeps only the end of
// its text that fits inline: history stays small, and watchers have the
// whole of it live.
func offloadUpdate(st store.Blobs, scope string, update agentapi.ToolUpdate, logger log.Logger) agentapi.ToolUpdate {
	if st == nil {
		return update
	}
	ctx, cancel := context.WithTimeout(context.Background(), offloadTimeout)
	defer cancel()
	results := make([]agent.ToolResult, len(update.Results))
	for i, r := range update.Results {
		stored, err := store.OffloadResult(ctx, st, scope, r)
		if err != nil {
			logger.Warn("Partial result not stored; signalling its tail", "ToolCallID", update.ToolCallID, "Error", err)
			stored = tailResult(r, store.InlineLimit)
		}
		results[i] = stored
	}
	update.Results = results
	return update
}

// runControl lets a tool steer, follow up or abort its own run, through the
// same signals a client would send. A signal is in history when the call
// returns, so it precedes the tool's result.
type runControl struct {
	a    *Activities
	info activity.Info
	// callID, position and start stamp a queued message with its call
	// and its offset from the call's start.
	callID   string
	position int
	start    time.Time
	// cancelTools cancels the contexts of the run's tools running in this
	// process, the caller's included: a tool that aborts its run is aborted
	// with it, at once, as in pi where they share one signal.
	cancelTools func()
}

func (r runControl) Steer(ctx context.Context, m agent.Message) error {
	return r.SteerAt(ctx, m, time.Since(r.start))
}

func (r runControl) FollowUp(ctx context.Context, m agent.Message) error {
	return r.FollowUpAt(ctx, m, time.Since(r.start))
}

// SteerAt queues a steering message at an offset from the call's start in
// a tool's simulated time (tools.TimedRunControl).
func (r runControl) SteerAt(ctx context.Context, m agent.Message, at time.Duration) error {
	return r.queue(ctx, agentapi.ToolQueue{Message: m, ToolCallID: r.callID, Position: r.position, Offset: at, Attempt: r.info.Attempt})
}

// FollowUpAt queues a follow-up at an offset from the call's start.
func (r runControl) FollowUpAt(ctx context.Context, m agent.Message, at time.Duration) error {
	return r.queue(ctx, agentapi.ToolQueue{Message: m, FollowUp: true, ToolCallID: r.callID, Position: r.position, Offset: at, Attempt: r.info.Attempt})
}

// queue signals a message a tool queued, its large content stored first:
// the workflow queues, carries and sends on what the signal holds. The
// tool may call from a context of its own, so the scope is the call's.
func (r runControl) queue(ctx context.Context, q agentapi.ToolQueue) error {
	if st := r.a.partialStore(); st != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
		defer cancel()
		var stored agent.Message
		err := r.a.retryStore(sctx, func() (err error) {
			stored, err = store.OffloadMessage(sctx, st, r.info.WorkflowExecution.ID, q.Message)
			return err
		})
		if err != nil {
			return err
		}
		q.Message = stored
	}
	return r.signal(ctx, agentapi.SignalToolQueue, q)
}

// Abort cancels the run's tools in this process before it signals the
// workflow: in pi the siblings see the abort in the same instant, and the
// signal may take a while on a loaded server (a 300 ms sibling finished
// first in a stress run).
func (r runControl) Abort(ctx context.Context, reason string) error {
	if r.cancelTools != nil {
		r.cancelTools()
	}
	return r.signal(ctx, agentapi.SignalAbort, agentapi.AbortRequest{Reason: reason})
}

// signal ignores the tool context's cancellation: in pi, queueing a message
// from an aborted tool still works, so it must here too.
func (r runControl) signal(ctx context.Context, name string, arg any) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), signalTimeout)
	defer cancel()
	return r.a.Client.SignalWorkflow(ctx, r.info.WorkflowExecution.ID, r.info.WorkflowExecution.RunID, name, arg)
}
