package activities

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// Live streaming of model turns. Token deltas must reach a watching client
// at once but must never enter history. They travel as the model-turn
// activity's heartbeat details, which the server keeps only for the pending
// activity; a client polls DescribeWorkflowExecution. Every heartbeat is a
// billable action (Temporal Cloud) and a write of the run's mutable state
// (self-hosted), so what a turn sends follows what someone sees:
//
//   - watched (a client holds the workflow's watch lease in the content
//     store, see store.WatchLeases): at most one heartbeat per
//     agentapi.StreamInterval while there is news, whatever the model's token rate.
//     Each carries only the stream events since the previous one, and now
//     and then a checkpoint (the whole partial message) that a client which
//     missed a heartbeat, or came in mid-turn, resumes from. Checkpoints
//     cost at most checkpointRate bytes a second, so the bytes a turn
//     writes grow with its answer, not with its square.
//   - nobody watches: one heartbeat per half heartbeat timeout, for
//     liveness only, carrying no events.
//
// Cancellation (an abort) reaches the turn from its run's history, which
// the worker long-polls (cancelfeed.go), not from heartbeats.
//
// A worker whose store keeps no leases cannot know, and streams as if
// watched: heartbeats are the path that always works.
const (
	// defaultLiveness is how often an activity with no heartbeat timeout
	// heartbeats with nothing to carry (livenessOf); the agent loop's
	// activities all have one.
	defaultLiveness = 10 * time.Second
	// WatchCheck is how often a streaming turn reads its watch lease: a
	// watcher who comes in mid-turn gets deltas within about this long.
	WatchCheck = 2 * time.Second
	// checkpointRate bounds the bytes a second that checkpoints add to a
	// watched stream, and checkpointMin the time between two: a short
	// answer is checkpointed every second, a 40 KB one every 5 s.
	checkpointRate = 8 << 10
	checkpointMin  = time.Second
	// liveEvents and liveEventBytes bound the events one heartbeat carries
	// (more since the last heartbeat are dropped, oldest first, and the
	// next one carries a checkpoint instead); livePartial bounds a
	// checkpoint. Heartbeat details share Temporal's 2 MB payload limit.
	liveEvents     = 256
	liveEventBytes = 256 << 10
	livePartial    = 512 << 10
)

// liveStream collects a model turn's stream events and heartbeats them.
type liveStream struct {
	mu          sync.Mutex
	attempt     int32
	turn        int
	seq         int64                // the newest event's number
	events      []agentapi.LiveEvent // events no heartbeat carried yet
	eventBytes  int
	partial     *agent.Message
	dirty       bool // events no heartbeat carried yet
	lost        bool // events were dropped: the next heartbeat checkpoints
	lastBeat    time.Time
	liveness    time.Duration // the time between heartbeats with no news
	checkpoint  time.Time     // when the last checkpoint went; zero: none yet
	watch       *watchers
	unwatch     func() // ends the cancel watch (cancelfeed.go)
	cancelCause context.CancelCauseFunc
	// billed is what earlier attempts were billed; every beat keeps it.
	billed *agent.Usage

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// startLiveStream heartbeats until close is called. When the run's history
// or a heartbeat's answer says that the turn must stop (an abort), it
// cancels the returned context.
func (a *Activities) startLiveStream(ctx context.Context, turn int, billed agent.Usage) (context.Context, *liveStream) {
	info := activity.GetInfo(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	s := &liveStream{
		attempt:     info.Attempt,
		turn:        turn,
		billed:      usagePtr(billed),
		liveness:    livenessOf(info),
		lastBeat:    time.Now(), // no heartbeat at the start: a quick turn costs none
		cancelCause: cancel,
		wake:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
	}
	s.watch = a.followWatchers(ctx, info.WorkflowExecution.ID, s.stop, s.poke)
	s.unwatch = a.watchCancel(info, cancel)
	go func() {
		s.loop(ctx, func(p agentapi.LiveProgress) error {
			rpcCtx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
			defer cancel()
			return a.Client.RecordActivityHeartbeat(rpcCtx, info.TaskToken, p)
		})
		s.watch.wait()
		close(s.done)
	}()
	return ctx, s
}

// livenessOf is how often an activity heartbeats with nothing to carry:
// half its heartbeat timeout, the least that keeps it alive through one
// heartbeat lost or late.
func livenessOf(info activity.Info) time.Duration {
	if info.HeartbeatTimeout <= 0 {
		return defaultLiveness
	}
	return info.HeartbeatTimeout / 2
}

// position is the newest event's number.
func (s *liveStream) position() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// emit records one stream event; it never blocks the provider.
func (s *liveStream) emit(e agent.StreamEvent) {
	partial := e.Partial
	if partial == nil {
		partial = e.Message
	}
	if partial == nil {
		partial = e.Error
	}
	e.Partial, e.Message, e.Error = nil, nil, nil
	s.mu.Lock()
	s.seq++
	s.events = append(s.events, agentapi.LiveEvent{Seq: s.seq, At: time.Now().UnixMilli(), Event: e})
	s.eventBytes += eventSize(e)
	for len(s.events) > liveEvents || (s.eventBytes > liveEventBytes && len(s.events) > 1) {
		s.eventBytes -= eventSize(s.events[0].Event)
		s.events = s.events[1:]
		s.lost = true
	}
	if partial != nil {
		s.partial = partial
	}
	s.dirty = true
	s.mu.Unlock()
	s.poke()
}

func eventSize(e agent.StreamEvent) int { return len(e.Delta) + len(e.Content) + 64 }

func (s *liveStream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// close stops heartbeating; the activity is about to complete.
func (s *liveStream) close() {
	close(s.stop)
	<-s.done
	s.unwatch()
}

func (s *liveStream) isWatched() bool { return s.watch.now() }

// leased says whether a watch lease said someone watches: not a store that
// keeps no leases, where isWatched says yes for want of knowing.
func (s *liveStream) leased() bool {
	return s.watch != nil && !s.watch.always && s.watch.watched.Load()
}

func (s *liveStream) loop(ctx context.Context, send func(agentapi.LiveProgress) error) {
	t := time.NewTimer(s.liveness)
	defer t.Stop()
	for {
		due := s.due()
		if wait := time.Until(due); wait > 0 {
			t.Reset(wait)
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-s.wake:
				// News, or a watcher came: the next heartbeat may be due sooner.
				continue
			case <-t.C:
				continue
			}
		}
		select {
		case <-s.stop:
			// The result follows at once: no heartbeat at the end.
			return
		default:
		}
		if err := send(s.next()); attemptStopped(err) {
			s.cancelCause(err)
		}
	}
}

// due is when the next heartbeat goes: one agentapi.StreamInterval after the last
// when watched and there is news, else one liveness after it.
func (s *liveStream) due() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirty && s.isWatched() {
		return s.lastBeat.Add(agentapi.StreamInterval)
	}
	return s.lastBeat.Add(s.liveness)
}

// next builds the next heartbeat: the events since the last one and, when
// due, a checkpoint; nothing but the position when nobody watches.
func (s *liveStream) next() agentapi.LiveProgress {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	p := agentapi.LiveProgress{Attempt: s.attempt, Turn: s.turn, Seq: s.seq, Billed: s.billed}
	if s.isWatched() {
		p.Events = s.events
		if s.partial != nil && s.checkpointDue(now) {
			p.Partial, p.PartialSeq = s.partial, s.seq
			s.checkpoint, s.lost = now, false
		}
	} else {
		// Whoever watches later starts from a checkpoint.
		s.checkpoint = time.Time{}
	}
	s.events, s.eventBytes, s.dirty, s.lastBeat = nil, 0, false, now
	return p
}

// checkpointDue says whether this heartbeat carries the partial message:
// the first of a watched stream, the first after events were dropped, and
// then as often as checkpointRate allows for its size.
func (s *liveStream) checkpointDue(now time.Time) bool {
	if s.checkpoint.IsZero() || s.lost {
		return jsonSize(s.partial) <= livePartial
	}
	since := now.Sub(s.checkpoint)
	if since < checkpointMin {
		return false
	}
	size := jsonSize(s.partial)
	return size <= livePartial && since >= time.Duration(size)*time.Second/checkpointRate
}

// watchers says whether anyone watches a workflow's live stream, from its
// watch lease, read every WatchCheck.
type watchers struct {
	watched atomic.Bool
	always  bool // the store keeps no leases: stream as if watched
	done    chan struct{}
}

// followWatchers reads scope's watch lease until stop closes or ctx ends,
// and calls came when a watcher comes.
func (a *Activities) followWatchers(ctx context.Context, scope string, stop <-chan struct{}, came func()) *watchers {
	w := &watchers{done: make(chan struct{})}
	leases, ok := a.Store.(store.WatchLeases)
	if !ok {
		w.always = true
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		for {
			until, err := leases.WatchedUntil(ctx, scope)
			if err == nil {
				watched := time.Now().Before(until)
				if w.watched.Swap(watched) != watched && watched {
					came()
				}
			}
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(WatchCheck):
			}
		}
	}()
	return w
}

// now says whether anyone watches; nil (no lease to read) says yes.
func (w *watchers) now() bool { return w == nil || w.always || w.watched.Load() }

func (w *watchers) wait() {
	if w != nil {
		<-w.done
	}
}
