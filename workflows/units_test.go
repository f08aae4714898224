package workflows

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
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
	big := agent.UserText(strings.Repeat("x", MaxQueuedMessageBytes), 0)
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
			if events[i].before(events[best]) {
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
