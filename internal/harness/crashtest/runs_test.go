package crashtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/crashtest"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
)

// input is a run of a scripted model with the given tools in the env's
// workspace.
func (e *env) input(model string, toolNames ...string) agentapi.AgentLoopInput {
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: llm.ScriptedProviderName, ID: model},
			Tools:     toolNames,
			Workspace: e.ws,
		},
		Prompt: "go",
	}
}

func (e *env) start(id string, in agentapi.AgentLoopInput) client.WorkflowRun {
	e.t.Helper()
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: e.queue,
	}, agentapi.AgentLoopWorkflow, in)
	require.NoError(e.t, err)
	e.logf("started run %s", id)
	// The tests read a turn's live heartbeat details as a watcher does, so
	// they hold the run's watch lease as one does: without it a worker
	// streams for liveness only (activities/stream.go).
	st, err := store.Open(filepath.Join(e.dir, "content"), store.Options{})
	require.NoError(e.t, err)
	require.NoError(e.t, st.MarkWatched(context.Background(), id, time.Now().Add(time.Hour)))
	return run
}

// result waits for a run's result through the env's current client.
func (e *env) result(id string, timeout time.Duration) agentapi.AgentLoopResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res agentapi.AgentLoopResult
	require.NoError(e.t, e.c.GetWorkflow(ctx, id, "").Get(ctx, &res), "run %s", id)
	e.logf("run %s ended: %s after %d turns", id, res.StopReason, res.Turns)
	return res
}

// resultAfterKill waits for a run's result after the kill of one of its
// workers, and logs how long after the kill the run ended.
func (e *env) resultAfterKill(id string, killed time.Time) agentapi.AgentLoopResult {
	e.t.Helper()
	res := e.result(id, runTimeout)
	e.logf("run ended %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	return res
}

func (e *env) history(id string) *historypb.History {
	e.t.Helper()
	h, err := testenv.History(context.Background(), e.c, id, "")
	require.NoError(e.t, err)
	return h
}

// events reads the run's whole event log.
func (e *env) events(id string) []agent.Event {
	e.t.Helper()
	events, err := agentclient.Events(context.Background(), e.c, id, "")
	require.NoError(e.t, err)
	return events
}

// waitFor polls cond every 50ms until it holds.
func (e *env) waitFor(what string, timeout time.Duration, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.logf("%s", what)
}

// pendingActivity returns the run's pending activity of the given type.
func (e *env) pendingActivity(id, activityType string) (found bool, state enumspb.PendingActivityState, heartbeat *agentapi.LiveProgress) {
	d, err := e.c.DescribeWorkflow(context.Background(), id, "")
	if err != nil {
		return false, 0, nil
	}
	for _, pa := range d.RawResponse.GetPendingActivities() {
		if pa.GetActivityType().GetName() != activityType {
			continue
		}
		var p agentapi.LiveProgress
		if pa.GetHeartbeatDetails() != nil && converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p) == nil {
			heartbeat = &p
		}
		return true, pa.GetState(), heartbeat
	}
	return false, 0, nil
}

func (e *env) path(name string) string { return filepath.Join(e.ws, name) }

// waitBashStarted waits until the scripted bash command (crashtest.ModelBash)
// has started once.
func (e *env) waitBashStarted(what string) {
	e.t.Helper()
	e.waitFor(what, reachTimeout, func() bool { return len(lines(e.path(crashtest.Started), "started")) == 1 })
}

// lines returns the lines of a file that start with prefix.
func lines(path, prefix string) []string {
	b, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" && strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// oneResultPerCall checks the transcript: every tool call of an assistant
// message is answered by exactly one tool result, and no result answers a
// call that was not made. It returns the results by call id.
func oneResultPerCall(t *testing.T, msgs []agent.Message) map[string]agent.Message {
	t.Helper()
	calls := map[string]bool{}
	results := map[string]agent.Message{}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleAssistant:
			for _, c := range m.ToolCalls() {
				require.False(t, calls[c.ID], "tool call %s made twice", c.ID)
				calls[c.ID] = true
			}
		case agent.RoleToolResult:
			require.True(t, calls[m.ToolCallID], "result for unknown call %s", m.ToolCallID)
			_, dup := results[m.ToolCallID]
			require.False(t, dup, "call %s has two results", m.ToolCallID)
			results[m.ToolCallID] = m
		}
	}
	for id := range calls {
		_, ok := results[id]
		require.True(t, ok, "call %s has no result", id)
	}
	return results
}

// okText checks the transcript (oneResultPerCall) and that the result of
// call callID is not an error, and returns the result's text.
func okText(t *testing.T, msgs []agent.Message, callID string) string {
	t.Helper()
	r := oneResultPerCall(t, msgs)[callID]
	require.False(t, r.IsError, agent.TextOf(r.Content))
	return agent.TextOf(r.Content)
}

// assistantMessages are the assistant messages of a transcript.
func assistantMessages(msgs []agent.Message) []agent.Message {
	var out []agent.Message
	for _, m := range msgs {
		if m.Role == agent.RoleAssistant {
			out = append(out, m)
		}
	}
	return out
}

// countEvents counts events of a type (for one tool call when id is set).
func countEvents(evs []agent.Event, typ agent.EventType, id string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ && (id == "" || ev.ToolCallID == id) {
			n++
		}
	}
	return n
}
