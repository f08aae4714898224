package workflows_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
)

// TestSubAgentEndsSeenLateGoOutAtOnce: the parent's worker is down while
// two of its three children end (the children run on a queue of their
// own). The worker that comes back sees their ends late, but orders them
// by when the children ended (SubAgentResult.Ended), long past the order
// window: they go out in the workflow task that takes them, with no
// release timer. With the parent continued as new mid-batch, that same
// workflow task pauses the batch again while the third child runs; held
// back for a window, the ends kept the pause from happening before the
// third child ended (issue 33's crash row). The ends go out in pi's order
// for a parallel batch, the order the calls finished (beta, released and
// ended first, then alpha, then gamma), and the result messages in call
// order.
func TestSubAgentEndsSeenLateGoOutAtOnce(t *testing.T) {
	for _, rollOver := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollOver=%v", rollOver), func(t *testing.T) {
			hs := newHolds("alpha", "beta", "gamma")
			h := newHarness(t, []llm.ScriptedResponse{threeTasks(), answer(text("All three answered."))}, hs.tool())
			h.scripted.Add("child", holdScript())
			in := h.holdInput(rollOver)
			in.SubAgents[0].TaskQueue = h.queue + "-children"
			h.startWorkerOn(in.SubAgents[0].TaskQueue)
			run := h.start(in)
			id := run.GetID()
			for range 3 {
				hs.next(t)
			}
			if rollOver {
				waitRuns(t, h.c, id, 2)
			}

			h.stopWorker()
			// Beta ends before alpha is released: their ends' order is
			// theirs, not a race's. The worker stays down until the order
			// window has passed since both children closed (after their
			// results were sent): the ends the next worker sees are late by
			// more than the window.
			var closed time.Time
			for _, i := range []int{2, 1} {
				hs.release([]string{"alpha", "beta"}[i-1])
				child := fmt.Sprintf("%s/task-1-%d-t%d", id, i, i)
				waitStatus(t, h.c, child, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
				d, err := h.c.DescribeWorkflow(context.Background(), child, "")
				require.NoError(t, err)
				if at := d.RawResponse.GetWorkflowExecutionInfo().GetCloseTime().AsTime(); at.After(closed) {
					closed = at
				}
			}
			time.Sleep(time.Until(closed.Add(agent.DefaultEventOrderWindow)))
			before := runIDs(t, h.c, id)
			h.startWorker()
			took := before[len(before)-1] // the run that takes the two ends
			if rollOver {
				waitRuns(t, h.c, id, len(before)+1)
			} else {
				h.waitState(run, func(s agentapi.RunState) bool { return slices.Equal(s.PendingToolCalls, []string{"t3"}) })
			}
			hist, err := testenv.History(context.Background(), h.c, id, took)
			require.NoError(t, err)
			if timers := releaseTimers(hist); len(timers) > 0 {
				dumpRuns(t, h.c, id)
				t.Fatalf("the late ends were held for the order window: release timers %v", timers)
			}
			if rollOver {
				last := hist.GetEvents()[len(hist.GetEvents())-1]
				require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, last.GetEventType())
			}

			hs.release("gamma")
			res := h.latestResult(run)
			require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
			results := res.Messages[len(res.Messages)-4 : len(res.Messages)-1]
			for i, who := range []string{"alpha", "beta", "gamma"} {
				require.Equal(t, "done: "+who, agent.TextOf(results[i].Content))
			}
			var ends, messages []string
			for _, e := range testenv.Events(t, h.c, h.c.GetWorkflow(context.Background(), id, "")) {
				switch {
				case e.Type == agent.EventToolExecutionEnd:
					ends = append(ends, e.ToolCallID)
				case e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleToolResult:
					messages = append(messages, e.Message.ToolCallID)
				}
			}
			require.Equal(t, []string{"t2", "t1", "t3"}, ends, "tool_execution_end in the order the calls finished")
			require.Equal(t, []string{"t1", "t2", "t3"}, messages, "result messages in call order")
		})
	}
}

// releaseTimers are the timers shorter than the carried children's check
// (1 s in holdInput) a history started after its last signal: the order
// window's.
func releaseTimers(hist *historypb.History) []time.Duration {
	var out []time.Duration
	evs := hist.GetEvents()
	last := -1
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			last = i
			break
		}
	}
	for _, e := range evs[last+1:] {
		if a := e.GetTimerStartedEventAttributes(); a != nil && a.GetStartToFireTimeout().AsDuration() < time.Second {
			out = append(out, a.GetStartToFireTimeout().AsDuration())
		}
	}
	return out
}
