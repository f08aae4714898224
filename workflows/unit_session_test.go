package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// runEnds lists the new messages of each agent_end, as role:text.
func runEnds(evs []agent.Event) [][]string {
	var out [][]string
	for _, e := range evs {
		if e.Type == agent.EventAgentEnd {
			out = append(out, roles(e.Messages))
		}
	}
	return out
}

// A session runs one prompt after another; while a run is active, prompt,
// continue and reset are refused with pi's texts; the second run's model
// sees the whole transcript; reset clears it.
func TestUnitSessionRunsPromptAfterPrompt(t *testing.T) {
	r := newUnitRun(t, append(calls(1, "wait"), agent.Text("first")), says("done one"), says("second")).tool("wait")
	r.took("wait-1-0", time.Hour, time.Hour)
	r.at(time.Minute, func() {
		r.update(agentapi.UpdateContinue, "No messages to continue from", nil)
		r.update(agentapi.UpdatePrompt, "prompt is empty", agentapi.PromptRequest{})
		updateResultOf(r, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "one"}, func(s agentapi.RunStatus) {
			require.Equal(t, 1, s.Run)
		})
	})
	r.at(2*time.Minute, func() {
		require.Equal(t, []string{"wait-1-0"}, r.state().PendingToolCalls)
		r.update(agentapi.UpdatePrompt, "Agent is already processing a prompt. Use /steer or /followup (starter steer, starter follow-up) to queue messages, or wait for completion.",
			agentapi.PromptRequest{Text: "too soon"})
		r.update(agentapi.UpdateContinue, "Agent is already processing. Wait for completion before continuing.", nil)
		r.update(agentapi.UpdateReset, "abort it", nil)
	})
	r.at(2*time.Hour, func() {
		require.Equal(t, "idle", r.state().Status)
		r.update(agentapi.UpdateContinue, "Cannot continue from message role: assistant", nil)
		updateResultOf(r, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "two"}, func(s agentapi.RunStatus) {
			require.Equal(t, 2, s.Run)
		})
	})
	r.at(3*time.Hour, func() {
		require.Equal(t, 6, r.state().Messages)
		r.update(agentapi.UpdateReset, "", nil)
	})
	r.at(4*time.Hour, func() { require.Zero(t, r.state().Messages) })
	in := agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"wait"}, SystemPrompt: "sys"}}
	evs := r.session(in, 5*time.Hour)
	require.Equal(t, [][]string{{"user:one", "assistant:first", "toolResult:wait done", "assistant:done one"},
		{"user:two", "assistant:second"}}, runEnds(evs), "agent_end carries each run's new messages")
	third := r.modelTurns[2].Context
	require.Equal(t, "sys", third.SystemPrompt)
	require.Equal(t, []string{"user:one", "assistant:first", "toolResult:wait done", "assistant:done one", "user:two"},
		roles(third.Delta), "the second run's model sees the whole transcript")
}

// pi's Agent.continue from an assistant tail: the first queued steering
// message becomes the prompt without a second poll, the next is injected
// after the first turn; with follow-ups only, the first is the prompt and
// the next is taken when the agent would stop; steering goes first.
func TestUnitSessionContinueFromAssistantTail(t *testing.T) {
	r := newUnitRun(t, says("a"), says("b"), says("c"), says("d"), says("e"), says("f"), says("g"))
	r.at(time.Minute, func() { r.update(agentapi.UpdatePrompt, "", agentapi.PromptRequest{Text: "go"}) })
	r.at(2*time.Minute, func() {
		r.update(agentapi.UpdateSteer, "", agent.UserText("s1", 0))
		r.update(agentapi.UpdateSteer, "", agent.UserText("s2", 0))
		r.update(agentapi.UpdateContinue, "", nil)
	})
	r.at(3*time.Minute, func() {
		r.update(agentapi.UpdateFollowUp, "", agent.UserText("f1", 0))
		r.update(agentapi.UpdateFollowUp, "", agent.UserText("f2", 0))
		r.update(agentapi.UpdateContinue, "", nil)
	})
	r.at(4*time.Minute, func() {
		r.update(agentapi.UpdateFollowUp, "", agent.UserText("f3", 0))
		r.update(agentapi.UpdateSteer, "", agent.UserText("s3", 0))
		r.update(agentapi.UpdateContinue, "", nil)
	})
	r.at(5*time.Minute, func() {
		r.update(agentapi.UpdateContinue, "Cannot continue from message role: assistant", nil)
	})
	evs := r.session(agentapi.SessionInput{}, time.Hour)
	require.Equal(t, [][]string{{"user:go", "assistant:a"}, {"user:s1", "assistant:b", "user:s2", "assistant:c"},
		{"user:f1", "assistant:d", "user:f2", "assistant:e"}, {"user:s3", "assistant:f", "user:f3", "assistant:g"}}, runEnds(evs))
}

// The setters validate what they are given and change what the next run
// uses; queue modes apply at once.
func TestUnitSessionSetters(t *testing.T) {
	r := newUnitRun(t, says("a"))
	r.at(time.Minute, func() {
		r.update(agentapi.UpdateSetThinkingLevel, "want off, minimal", agentapi.SettingRequest{Level: "max"})
		r.update(agentapi.UpdateSetThinkingLevel, "", agentapi.SettingRequest{Level: "high"})
		r.update(agentapi.UpdateSetModel, `unknown model provider "nope"`, agentapi.SettingRequest{Model: &agent.ModelRef{Provider: "nope", ID: "x"}})
		r.update(agentapi.UpdateSetSteeringMode, "one-at-a-time or all", agentapi.SettingRequest{Mode: "some"})
		r.update(agentapi.UpdateSetSteeringMode, "", agentapi.SettingRequest{Mode: "all"})
		r.update(agentapi.UpdateSetFollowUpMode, "one-at-a-time or all", agentapi.SettingRequest{Mode: "later"})
		r.update(agentapi.UpdateSetFollowUpMode, "", agentapi.SettingRequest{Mode: "all"})
		r.update(agentapi.UpdateSetToolExecution, "parallel or sequential", agentapi.SettingRequest{Mode: "fast"})
		r.update(agentapi.UpdateSetToolExecution, "", agentapi.SettingRequest{Mode: "sequential"})
		r.update(agentapi.UpdateSetModel, "", agentapi.SettingRequest{Model: &agent.ModelRef{Provider: "test", ID: "other"}})
	})
	r.at(2*time.Minute, func() {
		st := r.state()
		require.Equal(t, "high", st.ThinkingLevel)
		require.Equal(t, agent.QueueAll, st.SteeringMode)
		require.Equal(t, agent.QueueAll, st.FollowUpMode)
		require.Equal(t, agent.ExecutionSequential, st.ToolExecution)
		require.Equal(t, agent.ModelRef{Provider: "test", ID: "other"}, st.Model)
		r.update(agentapi.UpdatePrompt, "", agentapi.PromptRequest{Text: "go"})
	})
	r.session(agentapi.SessionInput{}, time.Hour)
	require.Len(t, r.modelTurns, 1)
	require.Equal(t, "high", r.modelTurns[0].Options.Reasoning, "the run uses the thinking level set before it")
	require.Equal(t, agent.ModelRef{Provider: "test", ID: "other"}, r.modelTurns[0].Model)
}
