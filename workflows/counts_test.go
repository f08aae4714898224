package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// The round trips of the agent loop, counted in history. Every workflow
// task is a round trip between server and worker (tens of milliseconds on a
// loaded machine, see go run ./bench loop), and history events are what the
// server writes and a replay reads, so a change that adds either fails here
// with exact numbers, however noisy the machine: the counts do not depend
// on timing (the parallel test fixes the one order that would).
//
// A run of T model turns whose first T-1 answers make C tool calls each,
// with no hooks, records:
const (
	// The start: WorkflowExecutionStarted, then the first workflow task
	// (WorkflowTaskScheduled, WorkflowTaskStarted, WorkflowTaskCompleted),
	// which runs ResolveRun as a local activity (one MarkerRecorded),
	// records the version of prepare-in-model-turn (a MarkerRecorded and
	// the TemporalChangeVersion upsert, which Temporal Cloud does not bill)
	// and schedules the first ModelTurn.
	startEvents = 1 + 3 + 1 + 2
	startWFTs   = 1

	// Each model turn: the ModelTurn activity (ActivityTaskScheduled,
	// ActivityTaskStarted, ActivityTaskCompleted), which also prepares its
	// answer's calls (the run has no before hooks), then the workflow task
	// its result wakes (Scheduled, Started, Completed), which schedules
	// the calls' executes or ends the run.
	modelTurnEvents = 3 + 3
	modelTurnWFTs   = 1

	// Each tool call whose result reaches the workflow on its own: the
	// ExecuteToolCall activity (Scheduled, Started, Completed), and the
	// workflow task its result wakes (Scheduled, Started, Completed). No
	// PrepareToolCall local activity: the model turn prepared the call. No
	// FinalizeToolCall: the run has no after hooks.
	toolCallEvents = 3 + 3
	toolCallWFTs   = 1

	// A parallel batch whose results arrive one by one: the workflow task
	// of the first result holds its tool_execution_end while a sibling
	// still runs. Nobody watches this run, so no release timer wakes it
	// for that (no-release-timer-unwatched; a watched run starts one,
	// TimerStarted, and the last result's task cancels it, TimerCanceled):
	// the first batch that holds an event records the version, a
	// MarkerRecorded and the TemporalChangeVersion upsert, and no batch
	// adds events of its own.
	parallelBatchEvents   = 0
	parallelVersionEvents = 2

	// The end: WorkflowExecutionCompleted, written with the last workflow
	// task's completion.
	endEvents = 1
)

func TestRoundTripCounts(t *testing.T) {
	const turns, calls = 4, 2 // 3 turns of 2 tool calls, then a final answer
	for _, mode := range []agent.ExecutionMode{agent.ExecutionSequential, agent.ExecutionParallel} {
		t.Run(string(mode), func(t *testing.T) {
			evs := countsRun(t, mode, turns, calls)

			perTurnEvents := modelTurnEvents + calls*toolCallEvents
			if mode == agent.ExecutionParallel {
				perTurnEvents += parallelBatchEvents
			}
			perTurnWFTs := modelTurnWFTs + calls*toolCallWFTs
			wantEvents := startEvents + (turns-1)*perTurnEvents + modelTurnEvents + endEvents
			versionEvents := 0 // of the first turn
			if mode == agent.ExecutionParallel {
				versionEvents = parallelVersionEvents
				wantEvents += versionEvents
			}
			wantWFTs := startWFTs + (turns-1)*perTurnWFTs + modelTurnWFTs

			require.Equal(t, wantWFTs, count(evs, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), "workflow tasks\n%s", listing(evs))
			require.Equal(t, wantEvents, len(evs), "history events\n%s", listing(evs))

			// Turn by turn: from one ModelTurn's scheduling to the next.
			starts := modelTurnStarts(evs)
			require.Len(t, starts, turns)
			require.Equal(t, startEvents, starts[0], "events before the first model turn")
			for i := 0; i+1 < len(starts); i++ {
				turn := evs[starts[i]:starts[i+1]]
				want := perTurnEvents
				if i == 0 {
					want += versionEvents
				}
				require.Equal(t, want, len(turn), "events of turn %d\n%s", i+1, listing(turn))
				require.Equal(t, perTurnWFTs, count(turn, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED), "workflow tasks of turn %d", i+1)
				require.Zero(t, count(turn, enumspb.EVENT_TYPE_TIMER_STARTED), "release timers of turn %d", i+1)
				require.Zero(t, localActivities(turn), "local activities of turn %d", i+1)
				require.Equal(t, 1+calls, count(turn, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), "activities of turn %d", i+1)
			}
			last := evs[starts[len(starts)-1]:]
			require.Equal(t, modelTurnEvents+endEvents, len(last), "events of the final turn\n%s", listing(last))
		})
	}
}

// countsRun runs turns-1 turns of calls 0 ms tool calls and a final answer,
// and returns the run's history.
func countsRun(t *testing.T, mode agent.ExecutionMode, turns, calls int) []*historypb.HistoryEvent {
	c, run := countsScenario(t, newHarness, mode, turns, calls)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hist, err := testenv.History(ctx, c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	return hist.GetEvents()
}

// recordParallelHeldUnwatched is countsRun's parallel run for the replay
// corpus: each batch holds its first result's end while the sibling runs,
// and nobody watches, so no release timer starts
// (no-release-timer-unwatched).
func recordParallelHeldUnwatched(t *testing.T) (client.Client, string) {
	c, run := countsScenario(t, func(t *testing.T, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
		return recording(t, script, ts...)
	}, agent.ExecutionParallel, 3, 2)
	return c, run.GetID()
}

// countsScenario runs countsRun's run on the harness newH makes.
func countsScenario(t *testing.T, newH func(*testing.T, []llm.ScriptedResponse, ...tools.Tool) *harness,
	mode agent.ExecutionMode, turns, calls int) (client.Client, client.WorkflowRun) {
	var script []llm.ScriptedResponse
	var names []string
	for c := 1; c <= calls; c++ {
		names = append(names, fmt.Sprintf("t%d", c))
	}
	for i := 1; i < turns; i++ {
		var blocks []agent.Content
		for _, n := range names {
			blocks = append(blocks, call(fmt.Sprintf("c%d-%s", i, n), n))
		}
		script = append(script, answer(blocks...))
	}
	script = append(script, answer(text("done")))

	var ts []tools.Tool
	var c client.Client
	for i, n := range names {
		first := i == 0
		ts = append(ts, tool(n, func(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
			if mode == agent.ExecutionParallel {
				if first {
					// Said to have taken long, the first call cannot end
					// before its sibling, so no release timer fires
					// however slow the machine: the batch ends when the
					// last result arrives.
					call.ReportDuration(time.Hour)
				} else {
					// The later calls return once the workflow has handled
					// the earlier results, so each result has a workflow
					// task of its own, as it does when calls take different
					// times.
					if err := waitHandled(ctx, c, i); err != nil {
						return agent.ToolResult{}, err
					}
				}
			}
			return agent.TextResult(n + " ok"), nil
		}))
	}
	h := newH(t, script, ts...)
	c = h.c
	in := h.input("go", names...)
	in.ToolExecution = mode
	run := h.start(in)
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, turns, res.Turns)
	return h.c, run
}

// waitHandled waits until the calling run's history shows n more
// ExecuteToolCall results than the calling call's batch had when it
// started, each followed by a completed workflow task: in a parallel batch
// of the harness, call i+1 waits for calls 1..i.
func waitHandled(ctx context.Context, c client.Client, n int) error {
	info := activity.GetInfo(ctx)
	for {
		hist, err := testenv.History(ctx, c, info.WorkflowExecution.ID, info.WorkflowExecution.RunID)
		if err != nil {
			return err
		}
		// The batch's results: ExecuteToolCall completions after the last
		// ModelTurn completion, and whether a workflow task completed after
		// the n-th of them.
		evs := hist.GetEvents()
		types := map[int64]string{}
		results, handled := 0, false
		for _, ev := range evs {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
				types[ev.GetEventId()] = a.GetActivityType().GetName()
			}
			if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
				switch types[a.GetScheduledEventId()] {
				case "ModelTurn":
					results, handled = 0, false
				case "ExecuteToolCall":
					results++
				}
			}
			if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && results >= n {
				handled = true
			}
		}
		if handled {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func modelTurnStarts(evs []*historypb.HistoryEvent) []int {
	var idx []int
	for i, ev := range evs {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ModelTurn" {
			idx = append(idx, i)
		}
	}
	return idx
}

// localActivities counts the local activities' markers among evs.
func localActivities(evs []*historypb.HistoryEvent) int {
	n := 0
	for _, ev := range evs {
		if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
			n++
		}
	}
	return n
}

func count(evs []*historypb.HistoryEvent, t enumspb.EventType) int {
	n := 0
	for _, ev := range evs {
		if ev.GetEventType() == t {
			n++
		}
	}
	return n
}

func listing(evs []*historypb.HistoryEvent) string {
	var s string
	for _, ev := range evs {
		s += fmt.Sprintf("  %d %s\n", ev.GetEventId(), ev.GetEventType())
	}
	return s
}
