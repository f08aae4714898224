package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// transcript is the result's messages as role:text.
func transcript(res agentapi.AgentLoopResult) []string {
	out := []string{}
	for _, m := range res.Messages {
		out = append(out, m.Role+":"+agent.TextOf(m.Content))
	}
	return out
}

// Steering joins the context after the turn it arrived in, follow-ups
// when the run would stop; the validators refuse what pi's queues could
// not take, with texts that say why.
func TestUnitQueueSteerAndFollowUpUpdates(t *testing.T) {
	r := newUnitRun(t, append(calls(1, "wait"), agent.Text("working")), says("after steering"), says("after follow-up")).tool("wait")
	r.took("wait-1-0", time.Hour, time.Hour)
	r.at(time.Minute, func() {
		for _, bad := range append(badQueuedMessages(), badQueuedMessage{map[string]any{"content": "hi", "rol": "user"}, `unknown field "rol"`}) {
			r.update(agentapi.UpdateSteer, bad.want, bad.arg)
		}
		updateResultOf(r, agentapi.UpdateSteer, map[string]any{"content": "steer me"}, func(s agentapi.QueueStatus) {
			require.Equal(t, 1, s.Queued)
		})
		updateResultOf(r, agentapi.UpdateFollowUp, agent.UserText("and then this", 0), func(s agentapi.QueueStatus) {
			require.Equal(t, 1, s.Queued)
		})
	})
	r.at(2*time.Minute, func() {
		st := r.state()
		require.Len(t, st.Steering, 1)
		require.Len(t, st.FollowUps, 1)
		require.Equal(t, []string{"wait-1-0"}, st.PendingToolCalls)
	})
	res, _ := r.run(r.input("go", "wait"))
	require.Equal(t, []string{"user:go", "assistant:working", "toolResult:wait done", "user:steer me",
		"assistant:after steering", "user:and then this", "assistant:after follow-up"}, transcript(res))
	require.Empty(t, res.Steering)
	require.Empty(t, res.FollowUps)
}

// queueModes runs a tool call while two steering and two follow-up
// messages arrive, with the given modes, and returns the transcript.
func queueModes(t *testing.T, steering, followUps agent.QueueMode) []string {
	r := newUnitRun(t, calls(1, "wait"), says("a1"), says("a2"), says("a3"), says("a4")).tool("wait")
	r.took("wait-1-0", time.Hour, time.Hour)
	r.at(time.Minute, func() {
		for _, s := range []string{"s1", "s2"} {
			r.update(agentapi.UpdateSteer, "", agent.UserText(s, 0))
		}
		for _, s := range []string{"f1", "f2"} {
			r.update(agentapi.UpdateFollowUp, "", agent.UserText(s, 0))
		}
	})
	in := r.input("go", "wait")
	in.SteeringMode, in.FollowUpMode = steering, followUps
	res, evs := r.run(in)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	// Each turn after the first starts with the messages it injects.
	var injected []string
	for i, e := range evs {
		if e.Type == agent.EventMessageStart && e.Message.Role == agent.RoleUser && i > 0 && evs[i-1].Type == agent.EventTurnStart {
			injected = append(injected, "turn")
		}
		if e.Type == agent.EventMessageStart && e.Message.Role == agent.RoleUser {
			injected = append(injected, agent.TextOf(e.Message.Content))
		}
	}
	require.Equal(t, transcript(res)[0], "user:go")
	return injected
}

// pi's PendingMessageQueue modes, at the steering and follow-up polls:
// one-at-a-time (the default) injects one message a turn, all injects
// every queued message in one turn.
func TestUnitQueueModes(t *testing.T) {
	require.Equal(t, []string{"turn", "go", "turn", "s1", "turn", "s2", "turn", "f1", "turn", "f2"},
		queueModes(t, "", ""))
	require.Equal(t, []string{"turn", "go", "turn", "s1", "s2", "turn", "f1", "f2"},
		queueModes(t, agent.QueueAll, agent.QueueAll))
	require.Equal(t, []string{"turn", "go", "turn", "s1", "s2", "turn", "f1", "turn", "f2"},
		queueModes(t, agent.QueueAll, agent.QueueOneAtATime))
}

// Messages queued in the input: steering is polled before the first
// turn (pi's runAgentLoop), follow-ups when the run would stop.
func TestUnitQueueFromInput(t *testing.T) {
	r := newUnitRun(t, says("a1"), says("a2"))
	in := r.input("go")
	in.Steering = []agent.Message{agent.UserText("first steer", 0)}
	in.FollowUps = []agent.Message{agent.UserText("then this", 0)}
	res, _ := r.run(in)
	require.Equal(t, []string{"user:go", "user:first steer", "assistant:a1", "user:then this", "assistant:a2"}, transcript(res))
}

// The Signal twins queue as the Updates do; an invalid Signal cannot be
// refused, so it is dropped with a note in QueryState.
func TestUnitQueueSignalTwins(t *testing.T) {
	r := newUnitRun(t, calls(1, "wait"), says("steered"), says("followed")).tool("wait")
	r.took("wait-1-0", time.Hour, time.Hour)
	r.at(time.Minute, func() {
		r.env.SignalWorkflow(agentapi.SignalSteer, map[string]any{"content": ""})
		r.env.SignalWorkflow(agentapi.SignalSteer, map[string]any{"content": "by signal"})
		r.env.SignalWorkflow(agentapi.SignalFollowUp, map[string]any{"content": "later"})
	})
	r.at(2*time.Minute, func() {
		st := r.state()
		require.Len(t, st.Dropped, 1)
		require.Equal(t, agentapi.SignalSteer, st.Dropped[0].Signal)
		require.Contains(t, st.Dropped[0].Reason, "message is empty")
		require.Len(t, st.Steering, 1)
		require.Len(t, st.FollowUps, 1)
	})
	res, _ := r.run(r.input("go", "wait"))
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:wait done", "user:by signal", "assistant:steered",
		"user:later", "assistant:followed"}, transcript(res))
}
