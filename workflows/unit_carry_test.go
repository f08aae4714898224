package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// A run continues as new after every ContinueAsNewAfterTurns turns, each
// workflow run on a fresh environment; its events go on without a gap
// or a repeat, no tool call runs twice, and the result and agent_end hold
// the whole run.
func TestUnitCarryContinuesAsNewWithoutAGap(t *testing.T) {
	const turns = 10
	r := newUnitRun(t, append(unitLoop(turns, "tick"), says("finished"))...).tool("tick")
	in := r.input("go", "tick")
	in.ContinueAsNewAfterTurns = 3
	res, evs, next := r.chain(in)

	require.Len(t, next, 3, "runs of 3, 3, 3 and 2 turns")
	for i, n := range next {
		require.Equal(t, 3*(i+1), n.Carry.Turn)
		require.NotNil(t, n.Carry.Run, "the run was paused between two turns")
		require.True(t, n.Carry.Run.HasMoreToolCalls)
		require.Equal(t, 3, n.ContinueAsNewAfterTurns, "the next run continues as new too")
		require.Equal(t, []string{"tick"}, n.Tools)
	}
	require.Len(t, r.resolved, 4)
	require.False(t, r.resolved[0].Resolved)
	require.True(t, r.resolved[3].Resolved, "a continued run resolved before: whatever a worker lacks is drift")

	for i, e := range evs {
		require.EqualValues(t, i+1, e.Seq, "event sequence numbers are gap-free across continue-as-new")
	}
	require.Equal(t, agent.EventAgentStart, evs[0].Type)
	var starts, ends int
	for _, e := range evs {
		switch e.Type {
		case agent.EventAgentStart:
			starts++
		case agent.EventAgentEnd:
			ends++
		}
	}
	require.Equal(t, 1, starts)
	require.Equal(t, 1, ends)
	end := evs[len(evs)-1]
	require.Equal(t, agent.EventAgentEnd, end.Type)
	require.Len(t, end.Messages, 1+2*turns+1, "agent_end holds every message of the run, those before the seams too")

	require.Len(t, r.executedIDs(), turns, "no tool call ran twice or was lost at a seam")
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, turns+1, res.Turns)
	require.Len(t, res.Messages, 1+2*turns+1)
	require.EqualValues(t, (turns+1)*r.usage.TotalTokens, res.Usage.TotalTokens, "usage adds up across the runs")
}

// What a run carries: a steering message polled at the seam starts the
// next run's turn; a follow-up waits in the carry for the run's end; the
// queue modes, the budget's spend and a person's "always" carry over.
func TestUnitCarryKeepsQueuesBudgetAndApprovals(t *testing.T) {
	r := newUnitRun(t, calls(1, "write"), calls(2, "write"), calls(3, "write"), says("a4"), says("a5")).tool("write")
	r.took("write-1-0", time.Hour, time.Hour)
	in := r.input("go", "write")
	in.ContinueAsNewAfterTurns = 1
	in.FollowUpMode = agent.QueueAll
	in.Budget = &agent.Budget{MaxToolCalls: 3}
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"write"}}
	r.at(time.Minute, func() {
		r.approve("write-1-0", agent.ApprovalAlways, "", "")
		r.update(agentapi.UpdateSteer, "", agent.UserText("steer at the seam", 0))
		r.update(agentapi.UpdateFollowUp, "", agent.UserText("follow 1", 0))
		r.update(agentapi.UpdateFollowUp, "", agent.UserText("follow 2", 0))
	})
	res, evs, next := r.chain(in)

	first := next[0].Carry
	require.Equal(t, []string{"steer at the seam"}, texts(first.Run.Pending))
	require.Equal(t, []string{"follow 1", "follow 2"}, texts(first.FollowUps))
	require.Equal(t, agent.QueueAll, first.FollowUpMode)
	require.Equal(t, []string{"write"}, first.Allowed)
	require.Equal(t, 1, first.ToolCalls)

	require.Equal(t, []string{"approval_request:write-1-0:", "approval_decision:write-1-0:always"}, approvalEvents(evs),
		"the later calls needed no approval")
	require.Equal(t, []string{"write-1-0", "write-2-0", "write-3-0"}, r.executedIDs())
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:write done",
		"user:steer at the seam", "assistant:", "toolResult:write done",
		"assistant:", "toolResult:write done",
		"assistant:a4", "user:follow 1", "user:follow 2", "assistant:a5"}, transcript(res))
	st := r.state()
	require.Equal(t, 3, st.Budget.Spent.ToolCalls, "tool calls before the seams count")
	require.Equal(t, 0, *st.Budget.Remaining.ToolCalls)
}

func texts(ms []agent.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, agent.TextOf(m.Content))
	}
	return out
}

// A client that did not hear back sends its Update again with the same
// ID, perhaps after the run continued as new: the repeat is answered with
// the first answer and applied once, since the run carries the IDs it
// applied.
func TestUnitCarryAppliesARepeatedUpdateOnce(t *testing.T) {
	r := newUnitRun(t, calls(1, "wait"), calls(2, "wait"), says("done")).tool("wait")
	r.took("wait-1-0", time.Hour, time.Hour)
	r.took("wait-2-0", time.Hour, time.Hour)
	in := r.input("go", "wait")
	in.ContinueAsNewAfterTurns = 1
	steer := func() {
		updateResultWithID(r, "steer-1", agentapi.UpdateSteer, agent.UserText("only once", 0), func(s agentapi.QueueStatus) {
			require.Equal(t, 1, s.Queued, "the first answer")
		})
	}
	r.eachRun = func(run int) {
		switch run {
		case 1:
			r.at(time.Minute, steer)
		case 2:
			r.at(time.Minute, func() {
				steer()
				r.update(agentapi.UpdateSteer, "", agent.UserText("a new one", 0))
			})
		}
	}
	res, _, next := r.chain(in)
	require.Len(t, next, 2)
	require.Equal(t, "steer-1", next[0].Carry.Updates[0].ID)
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:wait done", "user:only once",
		"assistant:", "toolResult:wait done", "user:a new one", "assistant:done"}, transcript(res))
}
