package workflows_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// stubbornTool is holds' tool "hold" for calls that ignore their
// cancellation (pi: tools that ignore the signal run to completion): a
// cancelled child runs on until the test releases it. Every gate must be
// given; the test's end releases those still closed.
func (h *holds) stubbornTool(t *testing.T) tools.FuncTool {
	t.Cleanup(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, g := range h.gates {
			select {
			case <-g:
			default:
				close(g)
			}
		}
	})
	return tool("hold", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		who, gate := h.enter(c)
		<-gate
		return agent.TextResult("held " + who), nil
	})
}

// cancelRequests counts, over the runs given, the cancellation requests a
// workflow sent to each workflow id, and says the last run (its index)
// that sent one, -1 when none did.
func cancelRequests(t *testing.T, c client.Client, id string, runs []string) (map[string]int, int) {
	t.Helper()
	counts, last := map[string]int{}, -1
	for i, r := range runs {
		hist, err := testenv.History(context.Background(), c, id, r)
		require.NoError(t, err)
		for _, e := range hist.GetEvents() {
			if a := e.GetRequestCancelExternalWorkflowExecutionInitiatedEventAttributes(); a != nil {
				counts[a.GetWorkflowExecution().GetWorkflowId()]++
				last = i
			}
		}
	}
	return counts, last
}

// TestSubAgentCarriedChildCancelledOnce: three children whose tool ignores
// its cancellation spend past the parent's token limit; the parent stops
// them (one cancellation request each) and continues as new carrying
// them. An abort of the new run asks none of them again: each child gets
// one RequestCancelExternal over the parent's whole history.
func TestSubAgentCarriedChildCancelledOnce(t *testing.T) {
	recordSubAgentCancelOnce(t)
}

// recordSubAgentCancelOnce records (and checks) TestSubAgentCarriedChildCancelledOnce's
// parent: a batch carried by subAgentCarryChange's version 2.
func recordSubAgentCancelOnce(t *testing.T) (client.Client, string) {
	hs := newHolds("alpha", "beta", "gamma")
	h := recording(t, []llm.ScriptedResponse{threeTasks(), answer(text("unreached"))}, hs.stubbornTool(t))
	h.scripted.Add("child", holdScript())
	in := h.holdInput(true)
	in.SubAgents[0].SystemPrompt = strings.Repeat("context ", 500) // about 1,000 tokens a turn
	in.Budget = &agent.Budget{MaxTokens: 2500}                     // past it after the third child's first turn
	run := h.start(in)
	id := run.GetID()
	for range 3 {
		hs.next(t)
	}
	// The budget stop's requests are in, and a later run carries the
	// children it stopped (the stop is news: the batch pauses after it).
	require.Eventually(t, func() bool {
		runs := runIDs(t, h.c, id)
		counts, last := cancelRequests(t, h.c, id, runs)
		return len(counts) == 3 && last >= 0 && last < len(runs)-1
	}, settleTimeout, 50*time.Millisecond, "the budget did not stop the children before a continue-as-new")

	h.updateOnce(id, "abort-1", agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "stop"}, nil)
	for _, who := range []string{"alpha", "beta", "gamma"} {
		hs.release(who)
	}
	res := h.latestResult(run)
	n := 0
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			n++
			require.True(t, strings.HasPrefix(m.Content[0].Text, "Sub-agent helper was stopped: Budget exhausted:"), m.Content[0].Text)
		}
	}
	require.Equal(t, 3, n)

	counts, _ := cancelRequests(t, h.c, id, runIDs(t, h.c, id))
	for i, who := range []string{"t1", "t2", "t3"} {
		child := fmt.Sprintf("%s/task-1-%d-%s", id, i+1, who)
		require.Equal(t, 1, counts[child], "cancellation requests to %s", child)
	}
	return h.c, id
}

// TestSubAgentPauseLeavesItsTimers: a run that pauses its batch while its
// carried children's status check waits (an hour here: it waits at every
// pause) continues as new without cancelling the timer first.
func TestSubAgentPauseLeavesItsTimers(t *testing.T) {
	recordSubAgentPauseTimers(t)
}

// recordSubAgentPauseTimers records (and checks) a parent that pauses
// twice, the second time from a run whose check timer waits.
func recordSubAgentPauseTimers(t *testing.T) (client.Client, string) {
	hs := newHolds("beta", "gamma")
	h := recording(t, []llm.ScriptedResponse{threeTasks(), answer(text("All three answered."))}, hs.tool())
	run := h.startHoldingEvery(hs, "1h")
	// Beta's answer comes once the resumed run's check waits (its first
	// workflow task made the timer): its pause is the one looked at.
	require.Eventually(t, func() bool {
		hist, err := testenv.History(context.Background(), h.c, run.GetID(), "")
		return err == nil && hourTimer(hist)
	}, settleTimeout, 20*time.Millisecond, "the resumed run started no check timer")
	res := h.twoSeams(hs, run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)

	runs := runIDs(t, h.c, run.GetID())
	checked := 0
	for _, r := range runs[:len(runs)-1] {
		hist, err := testenv.History(context.Background(), h.c, run.GetID(), r)
		require.NoError(t, err)
		if hourTimer(hist) {
			checked++
		}
		if kinds := lastTask(hist); slices.Contains(kinds, enumspb.EVENT_TYPE_TIMER_CANCELED) {
			dumpRuns(t, h.c, run.GetID())
			t.Fatalf("run %s cancelled a timer before continuing as new: %v", r, kinds)
		}
	}
	require.NotZero(t, checked, "no run paused while its check timer waited")
	return h.c, run.GetID()
}

// startHoldingEvery is startHolding with the carried children checked
// every interval.
func (h *harness) startHoldingEvery(hs *holds, interval string) client.WorkflowRun {
	h.t.Helper()
	h.scripted.Add("child", holdScript())
	in := h.holdInput(true)
	in.SubAgentLimits.CheckInterval = interval
	run := h.start(in)
	hs.waitEntered(h.t, run.GetID(), h.c)
	return run
}

// hourTimer says whether a history started an hour's timer.
func hourTimer(hist *historypb.History) bool {
	for _, e := range hist.GetEvents() {
		if a := e.GetTimerStartedEventAttributes(); a != nil && a.GetStartToFireTimeout().AsDuration() == time.Hour {
			return true
		}
	}
	return false
}

// lastTask are the kinds of the events after a history's last completed
// workflow task: what its last commands did.
func lastTask(hist *historypb.History) []enumspb.EventType {
	evs := hist.GetEvents()
	var out []enumspb.EventType
	for i := len(evs) - 1; i >= 0 && evs[i].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED; i-- {
		out = append([]enumspb.EventType{evs[i].GetEventType()}, out...)
	}
	return out
}

// TestSubAgentResumedAbortAsksNoChildAgain: a run whose carry says the run
// before it was aborted as it handed over (PausedBatch.Aborted), having
// asked its children to stop, asks none of them again; the carry of a
// batch from before subAgentTidyVersion (not tidy) asks each once more,
// as those runs did. An abort at the hand-over needs an Update handler
// still running when the batch pauses, which no test can time, so the
// carry is written here; its children are ids no workflow has, whose
// calls the status check ends.
func TestSubAgentResumedAbortAsksNoChildAgain(t *testing.T) {
	for _, tidy := range []bool{true, false} {
		t.Run(fmt.Sprintf("tidy=%v", tidy), func(t *testing.T) {
			h := newHarness(t, nil)
			in := h.holdInput(false)
			msg := agent.Message{Role: agent.RoleAssistant, Content: threeTasks().Content, StopReason: agent.StopReasonToolUse}
			batch := &agentapi.PausedBatch{Start: time.Now().UnixMilli(), Done: make([]*agentapi.DoneCall, 3),
				Aborted: "stop", Tidy: tidy}
			gone := "gone-" + testenv.Suffix()
			for i := range 3 {
				batch.Children = append(batch.Children, agentapi.CarriedChild{Index: i, Agent: "helper",
					WorkflowID: fmt.Sprintf("%s/task-1-%d-t%d", gone, i+1, i+1), Start: batch.Start, Cancelled: true})
			}
			in.Prompt = ""
			in.Carry = &agentapi.Carry{Turn: 1, LastAssistant: &msg, Messages: []agent.Message{agent.UserText("split the work", 0), msg},
				Run: &agentapi.PausedRun{Batch: batch}}
			run := h.start(in)
			res := h.result(run)
			require.Equal(t, agent.StopReasonAborted, res.StopReason, res.ErrorMessage)

			counts, _ := cancelRequests(t, h.c, run.GetID(), []string{run.GetRunID()})
			if tidy {
				require.Empty(t, counts, "children the previous run asked were asked again")
				return
			}
			require.Len(t, counts, 3)
			for child, n := range counts {
				require.Equal(t, 1, n, child)
			}
		})
	}
}
