package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
)

// Live streaming of model turns. Token deltas must reach a watching client
// at once but must never enter history. They travel as the model-turn
// activity's heartbeat details, which the server keeps only for the pending
// activity: the activity heartbeats through the client (not the SDK's
// throttled RecordHeartbeat) every StreamInterval while there is news, and
// a client polls DescribeWorkflowExecution. The heartbeat answer also
// carries cancellation, so an abort stops the stream within one interval.
const (
	// StreamInterval is the longest a new delta waits before it is sent.
	StreamInterval = 50 * time.Millisecond
	// streamKeepAlive is how often an idle stream still heartbeats, and so
	// how long a model call waiting for its first token takes to see an abort.
	streamKeepAlive = time.Second
	// liveEvents is how many recent events a heartbeat carries, and
	// liveEventBytes how many bytes of deltas; liveTailBytes bounds the
	// partial message it carries. Heartbeat details share Temporal's 2 MB
	// payload limit, and a model may write more than that in one turn.
	liveEvents     = 256
	liveEventBytes = 256 << 10
	livePartial    = 512 << 10
)

// liveStream collects a model turn's stream events and heartbeats them.
type liveStream struct {
	mu         sync.Mutex
	progress   LiveProgress
	eventBytes int
	dirty      bool

	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelCauseFunc
}

// startLiveStream heartbeats until stop is called. When the server answers a
// heartbeat with a cancellation (abort), it cancels the returned context.
func (a *Activities) startLiveStream(ctx context.Context, turn int) (context.Context, *liveStream) {
	info := activity.GetInfo(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	s := &liveStream{
		progress: LiveProgress{Attempt: info.Attempt, Turn: turn},
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		cancel:   cancel,
	}
	go s.loop(ctx, func(p LiveProgress) error {
		return a.Client.RecordActivityHeartbeat(ctx, info.TaskToken, p)
	})
	return ctx, s
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
	size := len(e.Delta) + len(e.Content) + 64
	s.mu.Lock()
	s.progress.Seq++
	s.progress.Events = append(s.progress.Events, LiveEvent{Seq: s.progress.Seq, At: time.Now().UnixMilli(), Event: e})
	s.eventBytes += size
	for len(s.progress.Events) > liveEvents || (s.eventBytes > liveEventBytes && len(s.progress.Events) > 1) {
		old := s.progress.Events[0].Event
		s.eventBytes -= len(old.Delta) + len(old.Content) + 64
		s.progress.Events = s.progress.Events[1:]
	}
	if partial != nil {
		s.progress.Partial = partial
	}
	s.dirty = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// close stops heartbeating; the activity is about to complete.
func (s *liveStream) close() {
	close(s.stop)
	<-s.done
}

func (s *liveStream) loop(ctx context.Context, send func(LiveProgress) error) {
	defer close(s.done)
	var last time.Time
	t := time.NewTicker(StreamInterval)
	defer t.Stop()
	beat := func(force bool) {
		s.mu.Lock()
		if !s.dirty && !force {
			s.mu.Unlock()
			return
		}
		p := s.progress
		p.Events = append([]LiveEvent(nil), p.Events...)
		s.dirty = false
		s.mu.Unlock()
		if p.Partial != nil && jsonSize(p.Partial) > livePartial {
			// Too long to carry: a client has the deltas, and the final
			// message comes with the result.
			p.Partial = nil
		}
		last = time.Now()
		err := send(p)
		var cancelled *temporal.CanceledError
		if errors.As(err, &cancelled) {
			s.cancel(errors.New("model turn cancelled"))
		}
	}
	// No heartbeat at the start or the end: a quick turn costs no RPC, and
	// the result follows the last deltas at once.
	last = time.Now()
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		case <-s.wake:
			// Send at most once per interval: the ticker sends what piled up.
			if time.Since(last) >= StreamInterval {
				beat(false)
			}
		case <-t.C:
			beat(time.Since(last) >= streamKeepAlive)
		}
	}
}
