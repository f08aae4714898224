package activities

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

func unwatched() *watchers { return &watchers{} }

func watchedNow() *watchers {
	w := &watchers{}
	w.watched.Store(true)
	return w
}

func delta(s string) agent.StreamEvent {
	return agent.StreamEvent{Type: agent.StreamTextDelta, Delta: s, Partial: &agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text(s)}}}
}

// A watched stream heartbeats at most every agentapi.StreamInterval while there is
// news, each heartbeat with only the events since the last and the first
// with a checkpoint; nobody watching, it heartbeats once per liveness (half
// its heartbeat timeout)
// with no events and no checkpoint.
func TestLiveStreamSchedule(t *testing.T) {
	start := time.Now()
	s := &liveStream{lastBeat: start, liveness: 15 * time.Second, watch: watchedNow(), wake: make(chan struct{}, 1)}
	require.Equal(t, start.Add(15*time.Second), s.due(), "no news: liveness only")
	s.emit(delta("a"))
	s.emit(delta("b"))
	require.Equal(t, start.Add(agentapi.StreamInterval), s.due(), "news waits for the interval")
	p := s.next()
	require.Len(t, p.Events, 2)
	require.EqualValues(t, 2, p.Seq)
	require.NotNil(t, p.Partial, "the first heartbeat of a watched stream is a checkpoint")
	require.EqualValues(t, 2, p.PartialSeq)

	s.emit(delta("c"))
	p = s.next()
	require.Len(t, p.Events, 1, "only what is new")
	require.EqualValues(t, 3, p.Events[0].Seq)
	require.Nil(t, p.Partial, "no checkpoint within checkpointMin")

	s.watch = unwatched()
	s.emit(delta("d"))
	require.Equal(t, s.lastBeat.Add(15*time.Second), s.due(), "nobody watches: liveness only")
	p = s.next()
	require.Empty(t, p.Events)
	require.Nil(t, p.Partial)
	require.EqualValues(t, 4, p.Seq)

	s.watch = watchedNow()
	s.emit(delta("e"))
	p = s.next()
	require.NotNil(t, p.Partial, "a watcher who comes starts from a checkpoint")
	require.EqualValues(t, 5, p.PartialSeq)
}

// Checkpoints cost at most checkpointRate bytes a second.
func TestLiveStreamCheckpointRate(t *testing.T) {
	s := &liveStream{watch: watchedNow(), partial: &agent.Message{Content: []agent.Content{agent.Text(strings.Repeat("x", 40<<10))}}}
	now := time.Now()
	require.True(t, s.checkpointDue(now), "the first")
	s.checkpoint = now
	require.False(t, s.checkpointDue(now.Add(2*time.Second)), "40 KB at 8 KB/s: every 5 s")
	require.True(t, s.checkpointDue(now.Add(6*time.Second)))
	s.lost = true
	require.True(t, s.checkpointDue(now.Add(time.Millisecond)), "events were dropped")
}

// Unwatched, a tool's news does not bring its heartbeat forward.
func TestToolHeartbeatUnwatched(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	interval := 200 * time.Millisecond
	last := start.Add(interval)
	h := &toolHeartbeat{watch: unwatched(), dirty: true}
	require.Equal(t, last.Add(interval), h.due(start, last, interval))
	h.watch = watchedNow()
	require.Equal(t, last.Add(ToolProgressInterval), h.due(start, last, interval))
}
