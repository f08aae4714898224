package workflows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// pi's PendingMessageQueue: "all" drains everything, "one-at-a-time" one.
func TestQueueDrain(t *testing.T) {
	one := queue{mode: agent.QueueOneAtATime}
	all := queue{mode: agent.QueueAll}
	for _, s := range []string{"a", "b"} {
		one.push(agent.UserText(s, 0))
		all.push(agent.UserText(s, 0))
	}
	require.Len(t, one.drain(), 1)
	require.Len(t, one.drain(), 1)
	require.Empty(t, one.drain())
	require.Len(t, all.drain(), 2)
	require.Empty(t, all.drain())
}

func TestCheckQueuedMessage(t *testing.T) {
	m := agent.Message{Content: []agent.Content{agent.Text("x")}}
	require.NoError(t, checkQueuedMessage(&m, false))
	require.Equal(t, agent.RoleUser, m.Role, "a missing role means user")
	empty := agent.Message{Role: agent.RoleUser}
	require.ErrorContains(t, checkQueuedMessage(&empty, false), "message is empty")
	require.NoError(t, checkQueuedMessage(&empty, true), "tools and the input may queue empty messages, as pi does")
	big := agent.UserText(strings.Repeat("x", agentapi.MaxQueuedMessageBytes), 0)
	require.ErrorContains(t, checkQueuedMessage(&big, true), "the limit is")
}

// The result keeps the newest messages that fit and counts the rest.
func TestBoundedTail(t *testing.T) {
	var ms []agent.Message
	for i := 0; i < 10; i++ {
		ms = append(ms, agent.UserText(strings.Repeat("x", 100), 0))
	}
	one, _ := json.Marshal(ms[0])
	kept, omitted := boundedTail(ms, 3*len(one)+len(one)/2)
	require.Len(t, kept, 3)
	require.Equal(t, 7, omitted)
	kept, omitted = boundedTail(ms, 1<<20)
	require.Len(t, kept, 10)
	require.Zero(t, omitted)
}

// Events of a parallel batch go out in pi's order: by offset from the
// call's start, partial results before ends at the same instant, then call
// order.
func TestHeldEventOrder(t *testing.T) {
	events := []heldEvent{
		{at: 5, end: true, index: 0, seq: 1},
		{at: 0, end: true, index: 2, seq: 2},
		{at: 0, end: false, index: 3, seq: 3},
		{at: 0, end: true, index: 1, seq: 4},
		{at: 0, end: false, index: 3, seq: 5},
	}
	var order []int
	for len(events) > 0 {
		best := 0
		for i := range events {
			if events[i].compare(events[best]) < 0 {
				best = i
			}
		}
		order = append(order, events[best].seq)
		events = append(events[:best], events[best+1:]...)
	}
	require.Equal(t, []int{3, 5, 4, 2, 1}, order)
}

func TestCallSummary(t *testing.T) {
	require.Equal(t, "bash: npm test", callSummary("bash", map[string]any{"command": "npm test"}))
	require.Equal(t, "read: a.go", callSummary("read", map[string]any{"path": "a.go"}))
	require.Equal(t, "ls", callSummary("ls", nil))
	require.Len(t, []rune(callSummary("bash", map[string]any{"command": strings.Repeat("y", 200)})), len("bash: ")+80)
}

// A finished call's end waits for a sibling that is still running until
// the sibling reports progress past it or the window has passed.
func TestHeldEventWindow(t *testing.T) {
	end := heldEvent{at: 0, end: true, index: 1}
	running := &chain{preparedCall: preparedCall{index: 0}}
	done := &chain{preparedCall: preparedCall{index: 1}, done: &finalized{}}
	for _, tc := range []struct {
		window  string
		elapsed time.Duration
		want    bool
	}{
		{"", 400 * time.Millisecond, false},
		{"", 500 * time.Millisecond, true},
		{"10s", 600 * time.Millisecond, false},
		{"10s", 10 * time.Second, true},
	} {
		cfg := agent.LoopConfig{EventOrderWindow: tc.window}
		b := &batch{window: cfg.OrderWindow(), chains: []*chain{running, done}}
		require.Equal(t, tc.want, b.releasable(end, tc.elapsed), "window %q after %v", tc.window, tc.elapsed)
	}
	running.progress = 1
	b := &batch{window: agent.DefaultEventOrderWindow, chains: []*chain{running, done}}
	require.True(t, b.releasable(end, 0), "the sibling reported progress past the end")
}

// A call's partial results precede its end even when the tool reports a
// shorter duration than the wall clock measured for them.
func TestHeldUpdatesNeverFollowTheirEnd(t *testing.T) {
	sib := &chain{preparedCall: preparedCall{index: 0}}
	other := &chain{preparedCall: preparedCall{index: 1}, done: &finalized{}}
	b := &batch{window: agent.DefaultEventOrderWindow, chains: []*chain{sib, other}}
	l := &loop{batch: b}
	b.hold(heldEvent{at: 0, end: true, index: 1, chain: other})
	b.hold(heldEvent{at: 3, index: 0}) // sib's update, 3 ms by the wall clock
	l.finished(sib, finalized{})       // sib reports 0 ms
	slices.SortStableFunc(b.held, heldEvent.compare)
	var order []string
	for _, h := range b.held {
		order = append(order, fmt.Sprintf("%d end=%v at=%d", h.index, h.end, h.at))
	}
	require.Equal(t, []string{"0 end=false at=0", "0 end=true at=0", "1 end=true at=0"}, order)
}

// A queue knows which tool call attempt queued each message, also after
// one-at-a-time drains and when it started from a run's input, so that a
// retried call's earlier messages can leave it (attempts.go).
func TestQueueDropsEarlierAttempts(t *testing.T) {
	text := func(s string) agent.Message { return agent.UserText(s, 0) }
	texts := func(ms []agent.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, agent.TextOf(m.Content))
		}
		return out
	}
	q := queue{mode: agent.QueueOneAtATime, items: []agent.Message{text("from the input")}}
	q.pushFrom(text("c1 attempt 1, first"), toolAttempt{"c1", 1})
	q.push(text("a person"))
	q.pushFrom(text("c2 attempt 1"), toolAttempt{"c2", 1})
	q.pushFrom(text("c1 attempt 1, second"), toolAttempt{"c1", 1})
	require.Equal(t, []string{"from the input"}, texts(q.drain()))
	require.Equal(t, 0, q.dropEarlierAttempts("c1", 1), "attempt 1 is not earlier than itself")
	require.Equal(t, 2, q.dropEarlierAttempts("c1", 2))
	q.pushFrom(text("c1 attempt 2"), toolAttempt{"c1", 2})
	require.Equal(t, []string{"a person", "c2 attempt 1", "c1 attempt 2"}, texts(q.items))
	require.Equal(t, 0, q.dropEarlierAttempts("c1", 2))

	q.mode = agent.QueueAll
	require.Equal(t, []string{"a person", "c2 attempt 1", "c1 attempt 2"}, texts(q.drain()))
	require.Empty(t, q.from)
	q.items = []agent.Message{text("after continue-as-new")} // as carry.go sets it
	q.pushFrom(text("c3 attempt 1"), toolAttempt{"c3", 1})
	require.Equal(t, 1, q.dropEarlierAttempts("c3", 2))
	require.Equal(t, []string{"after continue-as-new"}, texts(q.items))
}
