package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/workflows"
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
		r.update(workflows.UpdateContinue, "No messages to continue from", nil)
		r.update(workflows.UpdatePrompt, "prompt is empty", workflows.PromptRequest{})
		updateResultOf(r, workflows.UpdatePrompt, workflows.PromptRequest{Text: "one"}, func(s workflows.RunStatus) {
			require.Equal(t, 1, s.Run)
		})
	})
	r.at(2*time.Minute, func() {
		require.Equal(t, []string{"wait-1-0"}, r.state().PendingToolCalls)
		r.update(workflows.UpdatePrompt, "Agent is already processing a prompt. Use /steer or /followup (starter steer, starter follow-up) to queue messages, or wait for completion.",
			workflows.PromptRequest{Text: "too soon"})
		r.update(workflows.UpdateContinue, "Agent is already processing. Wait for completion before continuing.", nil)
		r.update(workflows.UpdateReset, "abort it", nil)
	})
	r.at(2*time.Hour, func() {
		require.Equal(t, "idle", r.state().Status)
		r.update(workflows.UpdateContinue, "Cannot continue from message role: assistant", nil)
		updateResultOf(r, workflows.UpdatePrompt, workflows.PromptRequest{Text: "two"}, func(s workflows.RunStatus) {
			require.Equal(t, 2, s.Run)
		})
	})
	r.at(3*time.Hour, func() {
		require.Equal(t, 6, r.state().Messages)
		r.update(workflows.UpdateReset, "", nil)
	})
	r.at(4*time.Hour, func() { require.Zero(t, r.state().Messages) })
	in := workflows.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"wait"}, SystemPrompt: "sys"}}
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
	r.at(time.Minute, func() { r.update(workflows.UpdatePrompt, "", workflows.PromptRequest{Text: "go"}) })
	r.at(2*time.Minute, func() {
		r.update(workflows.UpdateSteer, "", agent.UserText("s1", 0))
		r.update(workflows.UpdateSteer, "", agent.UserText("s2", 0))
		r.update(workflows.UpdateContinue, "", nil)
	})
	r.at(3*time.Minute, func() {
		r.update(workflows.UpdateFollowUp, "", agent.UserText("f1", 0))
		r.update(workflows.UpdateFollowUp, "", agent.UserText("f2", 0))
		r.update(workflows.UpdateContinue, "", nil)
	})
	r.at(4*time.Minute, func() {
		r.update(workflows.UpdateFollowUp, "", agent.UserText("f3", 0))
		r.update(workflows.UpdateSteer, "", agent.UserText("s3", 0))
		r.update(workflows.UpdateContinue, "", nil)
	})
	r.at(5*time.Minute, func() {
		r.update(workflows.UpdateContinue, "Cannot continue from message role: assistant", nil)
	})
	evs := r.session(workflows.SessionInput{}, time.Hour)
	require.Equal(t, [][]string{{"user:go", "assistant:a"}, {"user:s1", "assistant:b", "user:s2", "assistant:c"},
		{"user:f1", "assistant:d", "user:f2", "assistant:e"}, {"user:s3", "assistant:f", "user:f3", "assistant:g"}}, runEnds(evs))
}

// The setters validate what they are given and change what the next run
// uses; queue modes apply at once.
func TestUnitSessionSetters(t *testing.T) {
	r := newUnitRun(t, says("a"))
	r.at(time.Minute, func() {
		r.update(workflows.UpdateSetThinkingLevel, "want off, minimal", workflows.SettingRequest{Level: "max"})
		r.update(workflows.UpdateSetThinkingLevel, "", workflows.SettingRequest{Level: "high"})
		r.update(workflows.UpdateSetModel, `unknown model provider "nope"`, workflows.SettingRequest{Model: &agent.ModelRef{Provider: "nope", ID: "x"}})
		r.update(workflows.UpdateSetSteeringMode, "one-at-a-time or all", workflows.SettingRequest{Mode: "some"})
		r.update(workflows.UpdateSetSteeringMode, "", workflows.SettingRequest{Mode: "all"})
		r.update(workflows.UpdateSetFollowUpMode, "one-at-a-time or all", workflows.SettingRequest{Mode: "later"})
		r.update(workflows.UpdateSetFollowUpMode, "", workflows.SettingRequest{Mode: "all"})
		r.update(workflows.UpdateSetToolExecution, "parallel or sequential", workflows.SettingRequest{Mode: "fast"})
		r.update(workflows.UpdateSetToolExecution, "", workflows.SettingRequest{Mode: "sequential"})
		r.update(workflows.UpdateSetModel, "", workflows.SettingRequest{Model: &agent.ModelRef{Provider: "test", ID: "other"}})
	})
	r.at(2*time.Minute, func() {
		st := r.state()
		require.Equal(t, "high", st.ThinkingLevel)
		require.Equal(t, agent.QueueAll, st.SteeringMode)
		require.Equal(t, agent.QueueAll, st.FollowUpMode)
		require.Equal(t, agent.ExecutionSequential, st.ToolExecution)
		require.Equal(t, agent.ModelRef{Provider: "test", ID: "other"}, st.Model)
		r.update(workflows.UpdatePrompt, "", workflows.PromptRequest{Text: "go"})
	})
	r.session(workflows.SessionInput{}, time.Hour)
	require.Len(t, r.modelTurns, 1)
	require.Equal(t, "high", r.modelTurns[0].Options.Reasoning, "the run uses the thinking level set before it")
	require.Equal(t, agent.ModelRef{Provider: "test", ID: "other"}, r.modelTurns[0].Model)
}
