package workflows_test

// Inputs at the limits (issue 26, "no input ends a session"): large
// steering, prompts and follow-ups reach the model whole, while history,
// every activity input and every carry hold stubs; what the queues have no
// room for is refused, or, for a Signal, dropped with a note.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// inputsPayloadBound is what no payload the workflow makes (an activity's
// input, a local activity's marker, a continue-as-new input) may reach
// when every large input is a stub: far below the 2 MB limit. Inline
// content (blocks under the stub threshold) adds up to MaxQueuedBytes.
const inputsPayloadBound = 256 << 10

// inputsWait bounds waits for what a run does on its own, on a loaded
// machine.
const inputsWait = 3 * time.Minute

// inputsSession is a session whose first prompt calls the slow tool, which
// runs until release is closed; started is closed when it runs.
func inputsSession(t *testing.T, in agentapi.SessionInput, script ...llm.ScriptedResponse) (h *harness, run client.WorkflowRun, release func()) {
	t.Helper()
	started, released := make(chan struct{}), make(chan struct{})
	script = append([]llm.ScriptedResponse{answer(call("c1", "slow"))}, script...)
	h = newHarness(t, script, tool("slow", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		close(started)
		select {
		case <-released:
		case <-ctx.Done():
		}
		return agent.TextResult("slow done"), nil
	}))
	in.Tools = []string{"slow"}
	run = h.startSession(in)
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil))
	select {
	case <-started:
	case <-time.After(inputsWait):
		t.Fatal("the tool did not start")
	}
	return h, run, func() { close(released) }
}

// inputsRunEnds waits for the session's n-th agent_end.
func inputsRunEnds(t *testing.T, h *harness, run client.WorkflowRun, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), inputsWait)
	defer cancel()
	ends := 0
	err := agentclient.Watch(ctx, h.c, run.GetID(), "", agentclient.WatchOptions{}, func(e agent.Event) {
		if e.Type == agent.EventAgentEnd {
			if ends++; ends == n {
				cancel()
			}
		}
	})
	require.ErrorIs(t, err, context.Canceled, "run %d did not end", n)
}

// inputsUserTexts are the user messages' texts of the model's i-th request.
func inputsUserTexts(h *harness, i int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, m := range h.requests[i].Messages {
		if m.Role == agent.RoleUser {
			out = append(out, agent.TextOf(m.Content))
		}
	}
	return out
}

// inputsChain checks every run of a session's chain as the server counts
// it: no workflow task failed, nothing terminated, and no payload the
// workflow made came near the limit. It prints each run's history size
// (DescribeWorkflowExecution's HistorySizeBytes) and its largest payload,
// and returns the chain's total history size.
func inputsChain(t *testing.T, h *harness, id string, minRuns, bound int) int64 {
	t.Helper()
	ctx := context.Background()
	var total int64
	for _, r := range chainRuns(t, h, id, minRuns) {
		runID := r.GetExecution().GetRunId()
		desc, err := h.c.DescribeWorkflow(ctx, id, runID)
		require.NoError(t, err)
		info := desc.RawResponse.GetWorkflowExecutionInfo()
		require.NotEqual(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, info.GetStatus())
		require.NotEqual(t, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, info.GetStatus())
		hist, err := testenv.History(ctx, h.c, id, runID)
		require.NoError(t, err)
		largest, what := 0, ""
		for _, e := range hist.GetEvents() {
			require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, e.GetEventType(), "no workflow task failed")
			size, kind := 0, ""
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				size, kind = badPayloadsSize(a.GetInput()), a.GetActivityType().GetName()+" input"
			}
			if a := e.GetMarkerRecordedEventAttributes(); a != nil {
				for _, p := range a.GetDetails() {
					size += badPayloadsSize(p)
				}
				kind = "marker " + a.GetMarkerName()
			}
			if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				size, kind = badPayloadsSize(a.GetInput()), "continue-as-new input"
			}
			if size > largest {
				largest, what = size, kind
			}
		}
		t.Logf("run %s: %s, %d events, HistorySizeBytes %d; largest payload the workflow made: %d bytes (%s)",
			runID, info.GetStatus(), info.GetHistoryLength(), info.GetHistorySizeBytes(), largest, what)
		require.Less(t, largest, bound, "%s", what)
		total += info.GetHistorySizeBytes()
	}
	return total
}

// Three 900 KB steering messages sent inline (the raw client, as the
// Temporal CLI sends them) while a tool runs, steering mode all: the next
// model turn sees all three whole, its input holds stubs, and the session
// goes on. Before, that input was 2.7 MB and the server terminated the
// session (BadScheduleActivityAttributes).
func TestInputsThreeLargeSteersWhileAToolRuns(t *testing.T) {
	h, run, release := inputsSession(t, agentapi.SessionInput{LoopConfig: agent.LoopConfig{SteeringMode: agent.QueueAll}},
		answer(text("steered")), answer(text("still here")))
	var steers []string
	for i := range 3 {
		steers = append(steers, incompressible(uint64(100+i), 900_000))
		st, err := update(t, h.c, run, agentapi.UpdateSteer, agent.UserText(steers[i], 0))
		require.NoError(t, err)
		require.Equal(t, i+1, st.Queued)
	}
	release()
	inputsRunEnds(t, h, run, 1)
	require.Equal(t, []string{"go", steers[0], steers[1], steers[2]}, inputsUserTexts(h, 1),
		"the second model turn sees the three steering messages whole, in order")

	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "more"}, nil))
	inputsRunEnds(t, h, run, 2)
	require.Equal(t, agent.StopReasonStop, h.sessionState(run).StopReason)
	total := inputsChain(t, h, run.GetID(), 1, inputsPayloadBound)
	t.Logf("history holds the three Updates as sent (%d bytes of text): %d bytes in all", 3*900_000, total)
}

// A 1 MiB prompt sent as a Signal through the raw client while a run is
// going waits as a follow-up, its content stored: the model gets it whole
// and the session goes on.
func TestInputsLargePromptSignalDuringARun(t *testing.T) {
	h, run, release := inputsSession(t, agentapi.SessionInput{}, answer(text("done")), answer(text("read the big prompt")))
	big := incompressible(7, 1<<20)
	require.NoError(t, h.c.SignalWorkflow(context.Background(), run.GetID(), "", agentapi.SignalPrompt, agentapi.PromptRequest{Text: big}))
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.FollowUps) == 1 })
	release()
	inputsRunEnds(t, h, run, 1)
	texts := inputsUserTexts(h, 2)
	require.Equal(t, big, texts[len(texts)-1], "the third model turn ends with the signalled prompt, whole")
	st := h.sessionState(run)
	require.Equal(t, "idle", st.Status)
	require.Empty(t, st.Dropped)
	inputsChain(t, h, run.GetID(), 1, inputsPayloadBound)
}

// Fifty follow-ups of 100 KB, queued through agentclient with the store
// (history holds stubs) while a tool runs, are carried across two
// continues-as-new (after every turn: one with the queue, one with the
// paused run's pending messages) and answered, all in one turn (follow-up
// mode all), each whole.
func TestInputsFiftyFollowUpsAcrossContinueAsNew(t *testing.T) {
	h, run, release := inputsSession(t, agentapi.SessionInput{
		LoopConfig:              agent.LoopConfig{FollowUpMode: agent.QueueAll},
		ContinueAsNewAfterTurns: 1,
	}, answer(text("done")), answer(text("answered all fifty")))
	ctx := context.Background()
	var sent []string
	for i := range 50 {
		sent = append(sent, incompressible(uint64(200+i), 100_000))
		var st agentapi.QueueStatus
		require.NoError(t, agentclient.UpdateWithOptions(ctx, h.c, run.GetID(), agentapi.UpdateFollowUp,
			agent.UserText(sent[i], 0), &st, agentclient.UpdateOptions{Store: testenv.Store(t)}))
		require.Equal(t, i+1, st.Queued)
	}
	release()
	inputsRunEnds(t, h, run, 1)
	texts := inputsUserTexts(h, 2)
	require.Equal(t, sent, texts[len(texts)-50:], "the last model turn sees the fifty follow-ups whole, in order")
	h.mu.Lock()
	require.Len(t, h.requests, 3)
	h.mu.Unlock()
	total := inputsChain(t, h, run.GetID(), 3, inputsPayloadBound)
	t.Logf("fifty 100 KB follow-ups as stubs: %d bytes of history in all runs", total)
	require.Less(t, total, int64(1<<20), "history holds stubs, not the 5 MB of follow-ups")
}

// inputsSmallBlocks is a message of n bytes of text in blocks under the
// inline limit: nothing of it is stored, all of it counts.
func inputsSmallBlocks(seed uint64, n int) agent.Message {
	m := agent.Message{Role: agent.RoleUser}
	for i := 0; n > 0; i++ {
		size := min(n, 1500)
		m.Content = append(m.Content, agent.Text(incompressible(seed*1000+uint64(i), size)))
		n -= size
	}
	return m
}

// What the queues have no room for is refused with the limit and what is
// queued (an Update) or dropped with a note (a Signal), and nothing the
// run accepted is lost: the model gets what was queued, and the refused
// message is taken once there is room.
func TestInputsOverTheCapIsRefused(t *testing.T) {
	h, run, release := inputsSession(t, agentapi.SessionInput{LoopConfig: agent.LoopConfig{SteeringMode: agent.QueueAll}},
		answer(text("took the first")), answer(text("took the second")))
	first, second := inputsSmallBlocks(1, 600_000), inputsSmallBlocks(2, 600_000)
	_, err := update(t, h.c, run, agentapi.UpdateSteer, first)
	require.NoError(t, err)
	_, err = update(t, h.c, run, agentapi.UpdateSteer, second)
	require.Error(t, err, "the queues have no room for a second 600 KB of inline text")
	require.Contains(t, err.Error(), "the queues are full")
	require.Contains(t, err.Error(), fmt.Sprintf("the limit is %d bytes in all", agentapi.MaxQueuedBytes))
	t.Logf("refusal: %v", err)

	require.NoError(t, h.c.SignalWorkflow(context.Background(), run.GetID(), "", agentapi.SignalSteer, second))
	st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.Dropped) == 1 })
	require.Equal(t, agentapi.SignalSteer, st.Dropped[0].Signal)
	require.Contains(t, st.Dropped[0].Reason, "the queues are full")
	require.Len(t, st.Steering, 1, "the accepted message is still queued")

	release()
	inputsRunEnds(t, h, run, 1)
	require.Equal(t, "go", inputsUserTexts(h, 1)[0])
	require.Equal(t, agent.TextOf(first.Content), inputsUserTexts(h, 1)[1], "the accepted steering message reached the model")

	// With the queue taken, the same message is accepted.
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Messages: []agent.Message{second}}, nil))
	inputsRunEnds(t, h, run, 2)
	texts := inputsUserTexts(h, 2)
	require.Equal(t, agent.TextOf(second.Content), texts[len(texts)-1])
	inputsChain(t, h, run.GetID(), 1, agentapi.MaxQueuedBytes+inputsPayloadBound)
}

// recordSessionLargeInputs records the stored inputs for the replay
// corpus: a prompt, a steer Update, a steer Signal and a prompt Signal
// (queued as a follow-up), each 8 KB of inline text, stored by the
// StoreInputs local activity.
func recordSessionLargeInputs(t *testing.T) (client.Client, string) {
	g := newGate()
	h := recording(t, []llm.ScriptedResponse{
		answer(text("looking"), call("c1", "wait")),
		answer(text("steered")),
		answer(text("followed up")),
	}, g.tool("wait"))
	ctx := context.Background()
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"wait"}}})
	id := run.GetID()
	large := func(s string) string { return strings.Repeat(s, 8000) }
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: large("p")}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	h.updateOnce(id, "steer-1", agentapi.UpdateSteer, agent.UserText(large("s"), 0), nil)
	require.NoError(t, h.c.SignalWorkflow(ctx, id, "", agentapi.SignalSteer, agent.UserText(large("t"), 0)))
	require.NoError(t, h.c.SignalWorkflow(ctx, id, "", agentapi.SignalPrompt, agentapi.PromptRequest{Text: large("f")}))
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.Steering) == 2 && len(s.FollowUps) == 1 })
	close(g.release)
	h.waitRunEnd(run, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.requests[len(h.requests)-1].Messages
	require.Equal(t, large("f"), agent.TextOf(last[len(last)-1].Content), "the model got the signalled prompt whole")
	return h.c, id
}
