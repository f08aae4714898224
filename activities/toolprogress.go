package activities

import (
	"context"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Live progress of running tools. A running tool's latest partial result
// must reach a watching client at once but must not enter history (a
// command printing for hours would fill it; see signals.go for the bounded
// share history keeps). It travels, as a model turn's deltas do
// (stream.go), as the ExecuteToolCall activity's heartbeat details, which
// the server keeps only for the pending activity; clients read them with
// DescribeWorkflowExecution. The activity heartbeats through the client,
// not the SDK's throttled RecordHeartbeat, so that news goes out within
// ToolProgressInterval. Every heartbeat is a billable action and a write of
// the run's state, so news brings one forward, and a heartbeat carries the
// partial result, only while someone watches (the workflow's watch lease,
// see stream.go); else the tool heartbeats once per half its heartbeat
// timeout, for liveness. An abort reaches the tool from its run's history
// (cancelfeed.go), and from a heartbeat's answer too.
const (
	// ToolProgressInterval is the longest a new partial result waits before
	// a heartbeat carries it, and the shortest time between two heartbeats
	// carrying news.
	ToolProgressInterval = 100 * time.Millisecond
	// firstWatchedHeartbeat is the longest news waits for a call's first
	// heartbeat while someone watches: the liveness interval (half the
	// heartbeat timeout, 15 s) would hide a command's first lines from
	// its watcher that long, while a call done within it costs none.
	firstWatchedHeartbeat = time.Second
	// liveToolBytes bounds the partial result a heartbeat carries: the
	// last liveToolBytes of its text, and images and details only while
	// they fit. Heartbeat details share Temporal's 2 MB payload limit, and
	// the newest output is what a watcher wants.
	liveToolBytes = 64 << 10
	// heartbeatTimeout bounds one heartbeat RPC; a heartbeat that fails is
	// not retried, the next one carries the same news.
	heartbeatTimeout = 10 * time.Second
)

// toolHeartbeat keeps a running tool's activity alive and publishes its
// latest partial result.
type toolHeartbeat struct {
	mu       sync.Mutex
	progress agentapi.ToolProgress
	dirty    bool // progress has news no heartbeat carried yet
	watch    *watchers
	unwatch  func() // ends the cancel watch (cancelfeed.go)

	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelCauseFunc
}

// startToolHeartbeat heartbeats until close is called: every
// ToolProgressInterval while there is news someone watches, else once per
// half the call's heartbeat timeout (HeartbeatInterval overrides it). The
// first heartbeat waits one interval, or firstWatchedHeartbeat for news
// someone watches, so a tool done by then costs no heartbeat RPC. The returned context is cancelled when the run's history
// or the server's answer to a heartbeat says that the attempt must stop
// (abort, a run that ended, an attempt that timed out); the tool runs
// under it.
func (a *Activities) startToolHeartbeat(ctx context.Context, callID string) (context.Context, *toolHeartbeat) {
	info := activity.GetInfo(ctx)
	interval := a.HeartbeatInterval
	if interval <= 0 {
		interval = livenessOf(info)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	h := &toolHeartbeat{
		progress: agentapi.ToolProgress{Attempt: info.Attempt, ToolCallID: callID},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		cancel:   cancel,
	}
	h.watch = a.followWatchers(ctx, info.WorkflowExecution.ID, h.stop, h.poke)
	h.unwatch = a.watchCancel(info, cancel)
	go h.loop(ctx, interval, func(p agentapi.ToolProgress) error {
		rpcCtx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
		defer cancel()
		return a.Client.RecordActivityHeartbeat(rpcCtx, info.TaskToken, p)
	})
	return ctx, h
}

func (h *toolHeartbeat) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// update records the tool's latest partial result; it never blocks the
// tool.
func (h *toolHeartbeat) update(r agent.ToolResult) {
	r = tailResult(r, liveToolBytes)
	h.mu.Lock()
	h.progress.Seq++
	h.progress.At = time.Now().UnixMilli()
	h.progress.Partial = &r
	h.dirty = true
	h.mu.Unlock()
	h.poke()
}

// close stops heartbeating; the activity is about to complete.
func (h *toolHeartbeat) close() {
	close(h.stop)
	<-h.done
	h.unwatch()
}

func (h *toolHeartbeat) loop(ctx context.Context, interval time.Duration, send func(agentapi.ToolProgress) error) {
	defer close(h.done)
	defer h.watch.wait()
	start := time.Now()
	last := start // the first heartbeat waits one interval from here
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		t.Reset(time.Until(h.due(start, last, interval)))
		select {
		case <-h.stop:
			return
		case <-ctx.Done():
			return
		case <-h.wake:
			// News may bring the next heartbeat forward.
			continue
		case <-t.C:
		}
		last = time.Now()
		h.mu.Lock()
		p := h.progress
		h.dirty = false
		h.mu.Unlock()
		// A watched heartbeat carries the latest partial result (the
		// server keeps only the details of the last one); with nobody to
		// read it, it would only make the heartbeat dearer to store.
		if !h.watch.now() {
			p.Partial = nil
		}
		if err := send(p); attemptStopped(err) {
			h.cancel(err)
		}
	}
}

// due is when the next heartbeat goes: one interval after the last, or
// sooner when there is news someone watches, but never twice within
// ToolProgressInterval nor before the first interval has passed.
func (h *toolHeartbeat) due(start, last time.Time, interval time.Duration) time.Time {
	next := last.Add(interval)
	h.mu.Lock()
	dirty := h.dirty
	h.mu.Unlock()
	if dirty && h.watch.now() {
		news := last.Add(ToolProgressInterval)
		if first := start.Add(min(interval, firstWatchedHeartbeat)); news.Before(first) {
			news = first
		}
		if news.Before(next) {
			next = news
		}
	}
	return next
}

// attemptStopped says whether a heartbeat's answer means the attempt must
// stop, as the SDK's own heartbeat reads it: cancellation requested (an
// abort), an activity the server no longer has (its run ended, or the
// attempt timed out and another runs), or one paused or reset by an
// operator. Other errors are transient: the next heartbeat tries again,
// and the server's heartbeat timeout covers a worker that cannot reach it.
func attemptStopped(err error) bool {
	if err == nil {
		return false
	}
	var cancelled *temporal.CanceledError
	var notFound *serviceerror.NotFound
	return errors.As(err, &cancelled) || errors.As(err, &notFound) ||
		errors.Is(err, activity.ErrActivityPaused) || errors.Is(err, activity.ErrActivityReset)
}

// tailResult keeps about the last budget bytes of a partial result: the
// end of its text, and its other blocks and details only while they fit.
// The newest output is what a watcher of a running tool wants to see.
func tailResult(r agent.ToolResult, budget int) agent.ToolResult {
	if jsonSize(r) <= budget {
		return r
	}
	out := agent.ToolResult{Terminate: r.Terminate}
	var kept []agent.Content
	for i := len(r.Content) - 1; i >= 0 && budget > 0; i-- {
		c := r.Content[i]
		if c.Type == agent.ContentText && c.Blob == nil {
			c.Text = tailUTF8(c.Text, budget)
			budget -= len(c.Text)
			kept = append(kept, c)
			continue
		}
		if n := jsonSize(c); n <= budget {
			budget -= n
			kept = append(kept, c)
		}
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	out.Content = kept
	if len(r.Details) <= budget {
		out.Details = r.Details
	}
	return out
}

// tailUTF8 returns the last n bytes of s or fewer, cut at a rune boundary.
func tailUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
