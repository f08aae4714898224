package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// u is the tests' unit of time, and their order windows are 300 or 500
// units. It is long because the test environment moves its clock by the
// wall clock while an activity's goroutine runs: a delayed callback a few
// milliseconds ahead could fire before a model turn's result is handled on
// a loaded machine; the first one here is 10 s ahead. The window's limit
// (a minute) bounds it from above.
const u = 100 * time.Millisecond

// toolEvents lists the tool events as type:call, and the tool-result
// messages as result:call, in log order.
func toolEvents(evs []agent.Event) []string {
	var out []string
	for _, e := range evs {
		switch {
		case e.Type == agent.EventToolExecutionStart:
			out = append(out, "start:"+e.ToolCallID)
		case e.Type == agent.EventToolExecutionUpdate:
			out = append(out, "update:"+e.ToolCallID+":"+agent.TextOf(e.PartialResult.Content))
		case e.Type == agent.EventToolExecutionEnd:
			out = append(out, "end:"+e.ToolCallID)
		case e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleToolResult:
			out = append(out, "result:"+e.Message.ToolCallID)
		}
	}
	return out
}

func pending(r *unitRun) []string { return r.state().PendingToolCalls }

// A parallel batch ends its calls in pi's order, by how long each ran,
// though their results reach the workflow in another order: the first to
// arrive waits while a sibling that may still end before it runs. Result
// messages follow in call order.
func TestUnitParallelEndsInPisOrder(t *testing.T) {
	r := newUnitRun(t, calls(1, "a", "b"), says("done")).tool("a").tool("b")
	r.took("a-1-0", 300*u, 400*u) // waited 100 for a worker
	r.took("b-1-1", 100*u, 450*u) // waited 350
	r.at(420*u, func() {
		require.Equal(t, []string{"a-1-0", "b-1-1"}, pending(r), "a's end waits for b, which may end earlier")
	})
	in := r.input("go", "a", "b")
	in.EventOrderWindow = "50s"
	res, evs := r.run(in)
	require.Equal(t, []string{"start:a-1-0", "start:b-1-1", "end:b-1-1", "end:a-1-0", "result:a-1-0", "result:b-1-1"},
		toolEvents(evs))
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:a done", "toolResult:b done", "assistant:done"}, transcript(res))
}

// A held end waits no longer than its offset plus the order window: a
// sibling still running after that cannot be helped, and ends after it.
// While someone watches, a release timer lets it out then.
func TestUnitParallelOrderWindowBoundsTheWait(t *testing.T) {
	r := newUnitRun(t, calls(1, "a", "b"), says("done")).tool("a").tool("b")
	r.watched = true
	r.took("a-1-0", 100*u, 100*u)
	r.took("b-1-1", 50*u, 2000*u) // a worker picked it up late
	in := r.input("go", "a", "b")
	in.EventOrderWindow = "30s"
	r.at(350*u, func() { require.Equal(t, []string{"a-1-0", "b-1-1"}, pending(r), "held until 100 + the window") })
	r.at(450*u, func() { require.Equal(t, []string{"b-1-1"}, pending(r), "released at 100 + the window") })
	_, evs := r.run(in)
	require.Equal(t, []string{"start:a-1-0", "start:b-1-1", "end:a-1-0", "end:b-1-1", "result:a-1-0", "result:b-1-1"},
		toolEvents(evs))
}

// Nobody watching, no release timer wakes the run for a held end
// (no-release-timer-unwatched): it goes out when the batch next wakes,
// here at its sibling's end, and the two ends then go in pi's order, by
// how long each call ran (b 50, a 100), where the watched run above let
// a's out at 100 + the window, before b's.
func TestUnitParallelUnwatchedEndWaitsForTheNextWake(t *testing.T) {
	r := newUnitRun(t, calls(1, "a", "b"), says("done")).tool("a").tool("b")
	r.took("a-1-0", 100*u, 100*u)
	r.took("b-1-1", 50*u, 2000*u)
	in := r.input("go", "a", "b")
	in.EventOrderWindow = "30s"
	r.at(450*u, func() { require.Equal(t, []string{"a-1-0", "b-1-1"}, pending(r), "no timer let a's end out") })
	_, evs := r.run(in)
	require.Equal(t, []string{"start:a-1-0", "start:b-1-1", "end:b-1-1", "end:a-1-0", "result:a-1-0", "result:b-1-1"},
		toolEvents(evs))
}

// Partial results take their place among the siblings' events by their
// offsets: a sibling's end waits until the running call has reported
// progress past it.
func TestUnitParallelPartialResultsInterleave(t *testing.T) {
	r := newUnitRun(t, calls(1, "a", "b"), says("done")).tool("a").tool("b")
	r.took("a-1-0", 300*u, 300*u)
	r.took("b-1-1", 600*u, 600*u)
	progress := func(text string, offset time.Duration) agentapi.ToolUpdate {
		return agentapi.ToolUpdate{ToolCallID: "b-1-1", Position: 2, Attempt: 1,
			Results: []agent.ToolResult{agent.TextResult(text)}, Offsets: []time.Duration{offset}}
	}
	r.at(200*u, func() { r.env.SignalWorkflow(agentapi.SignalToolUpdate, progress("b at 200", 200*u)) })
	r.at(350*u, func() { require.Equal(t, []string{"a-1-0", "b-1-1"}, pending(r), "b may still report before 300") })
	r.at(450*u, func() { r.env.SignalWorkflow(agentapi.SignalToolUpdate, progress("b at 450", 450*u)) })
	in := r.input("go", "a", "b")
	in.EventOrderWindow = "50s"
	_, evs := r.run(in)
	require.Equal(t, []string{"start:a-1-0", "start:b-1-1", "update:b-1-1:b at 200", "end:a-1-0", "update:b-1-1:b at 450",
		"end:b-1-1", "result:a-1-0", "result:b-1-1"}, toolEvents(evs))
}

// A call in a batch whose executions were deferred returns its partial
// results with its result; they are recorded before its end.
func TestUnitSequentialDeferredUpdatesBeforeTheEnd(t *testing.T) {
	r := newUnitRun(t, calls(1, "a"), says("done"))
	r.toolFunc("a", func(in activities.ExecuteInput) (activities.ExecuteOutput, error) {
		require.True(t, in.DeferUpdates, "a call alone defers its partial results")
		return activities.ExecuteOutput{Result: agent.TextResult("a done"), Updates: []agentapi.ToolUpdate{{
			ToolCallID: in.ToolCallID, Position: in.Position, Attempt: 1,
			Results: []agent.ToolResult{agent.TextResult("1/2"), agent.TextResult("2/2")}}}}, nil
	})
	_, evs := r.run(r.input("go", "a"))
	require.Equal(t, []string{"start:a-1-0", "update:a-1-0:1/2", "update:a-1-0:2/2", "end:a-1-0", "result:a-1-0"}, toolEvents(evs))
}

// One tool that declares executionMode sequential makes the whole batch
// sequential: each call ends, result message included, before the next
// starts.
func TestUnitSequentialToolMakesTheBatchSequential(t *testing.T) {
	r := newUnitRun(t, calls(1, "a", "b"), says("done")).tool("a").tool("b")
	r.withInfo("b", func(i *activities.ToolInfo) { i.ExecutionMode = agent.ExecutionSequential })
	r.took("a-1-0", 600*u, 600*u)
	r.took("b-1-1", 10*u, 10*u)
	r.at(300*u, func() { require.Equal(t, []string{"a-1-0"}, pending(r), "b has not started") })
	_, evs := r.run(r.input("go", "a", "b"))
	require.Equal(t, []string{"start:a-1-0", "end:a-1-0", "result:a-1-0", "start:b-1-1", "end:b-1-1", "result:b-1-1"},
		toolEvents(evs))
}

// A batch whose every result asks to terminate ends the run without
// another model turn (pi's shouldTerminateToolBatch); one that does not
// lets the loop go on.
func TestUnitTerminatingBatchEndsTheRun(t *testing.T) {
	for _, both := range []bool{true, false} {
		r := newUnitRun(t, calls(1, "stop", "maybe"), says("went on"))
		r.toolFunc("stop", func(activities.ExecuteInput) (activities.ExecuteOutput, error) {
			return activities.ExecuteOutput{Result: agent.ToolResult{Content: []agent.Content{agent.Text("stop")}, Terminate: true}}, nil
		})
		r.toolFunc("maybe", func(activities.ExecuteInput) (activities.ExecuteOutput, error) {
			return activities.ExecuteOutput{Result: agent.ToolResult{Content: []agent.Content{agent.Text("maybe")}, Terminate: both}}, nil
		})
		res, evs := r.run(r.input("go", "stop", "maybe"))
		if both {
			require.Len(t, r.modelTurns, 1)
			require.Equal(t, agent.StopReasonToolUse, res.StopReason)
			require.Equal(t, agent.EventAgentEnd, evs[len(evs)-1].Type)
		} else {
			require.Len(t, r.modelTurns, 2)
			require.Equal(t, "went on", agent.TextOf(lastMessage(res).Content))
		}
	}
}

// Messages the calls of a parallel batch queue are queued in pi's order,
// by their offsets from the calls' start, whichever signal arrives first;
// a retried call's messages are those of its latest attempt.
func TestUnitParallelToolQueuedMessagesInPisOrder(t *testing.T) {
	r := newUnitRun(t, calls(1, "a", "b"), says("t2"), says("t3"), says("t4")).tool("a").tool("b")
	r.took("a-1-0", 400*u, 400*u)
	r.took("b-1-1", 400*u, 400*u)
	queued := func(id string, pos int, attempt int32, text string, offset time.Duration) agentapi.ToolQueue {
		return agentapi.ToolQueue{Message: agent.UserText(text, 0), ToolCallID: id, Position: pos, Attempt: attempt, Offset: offset}
	}
	r.at(100*u, func() {
		r.env.SignalWorkflow(agentapi.SignalToolQueue, queued("a-1-0", 1, 1, "a at 200", 200*u))
		r.env.SignalWorkflow(agentapi.SignalToolQueue, queued("b-1-1", 2, 1, "b's first attempt", 50*u))
	})
	r.at(300*u, func() {
		r.env.SignalWorkflow(agentapi.SignalToolQueue, queued("b-1-1", 2, 2, "b at 100", 100*u))
		r.env.SignalWorkflow(agentapi.SignalToolQueue, queued("b-1-1", 2, 1, "b's first attempt, late", 60*u))
	})
	in := r.input("go", "a", "b")
	in.EventOrderWindow = "50s"
	res, _ := r.run(in)
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:a done", "toolResult:b done",
		"user:b at 100", "assistant:t2", "user:a at 200", "assistant:t3"}, transcript(res))
}
