package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// One tool call, then an answer: pi's event order for a turn with a tool
// call and a turn without.
func TestUnitLoopOneToolCall(t *testing.T) {
	r := newUnitRun(t, calls(1, "read"), says("done")).tool("read")
	res, evs := r.run(r.input("go", "read"))
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, 2, res.Turns)
	require.Equal(t, []agent.EventType{
		agent.EventAgentStart, agent.EventTurnStart,
		agent.EventMessageStart, agent.EventMessageEnd, // prompt
		agent.EventMessageStart, agent.EventMessageEnd, // tool call
		agent.EventToolExecutionStart, agent.EventToolExecutionEnd,
		agent.EventMessageStart, agent.EventMessageEnd, // tool result
		agent.EventTurnEnd,
		agent.EventTurnStart,
		agent.EventMessageStart, agent.EventMessageEnd, // answer
		agent.EventTurnEnd,
		agent.EventAgentEnd,
	}, eventTypes(evs))
	require.Equal(t, []string{"read-1-0"}, r.executedIDs())
	require.Len(t, res.Messages, 4)
}
