package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// TestWideParallelBatch runs one assistant message of 200 tool calls in
// parallel mode, and the same with 4 (extra/scenarios/parallel-200-calls
// and parallel-4-calls, which TestConformanceExtra also compares with pi's
// traces): every call runs, the trace is pi's, no workflow task fails, and
// the 200-call batch costs history no more per call than the batch of 4.
// It logs the figures bench/README.md quotes (go test ./conformance -run
// TestWideParallelBatch -v): wall time, history bytes and events, bytes per
// call, workflow tasks, the largest event.
func TestWideParallelBatch(t *testing.T) {
	c := testenv.Client(t)
	cases, err := conformance.Cases("testdata/extra")
	require.NoError(t, err)
	byName := map[string]conformance.Case{}
	for _, cs := range cases {
		byName[cs.Name] = cs
	}
	type figures struct {
		calls, events, tasks, largest int
		bytes                         int
		largestType                   string
		wall                          time.Duration
	}
	measure := func(name string, calls int) figures {
		cs, ok := byName[name]
		require.True(t, ok, name)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := conformance.Run(ctx, c, cs.Scenario)
		require.NoError(t, err)
		got, err := conformance.Canonical(res.Trace)
		require.NoError(t, err)
		require.Equal(t, cs.Want, got, "trace of %s", name)
		h, err := testenv.History(ctx, c, res.WorkflowID, res.RunID)
		require.NoError(t, err)
		f := figures{calls: calls, bytes: proto.Size(h), events: len(h.Events)}
		scheduled := 0
		var first, last time.Time
		for _, e := range h.Events {
			if first.IsZero() {
				first = e.GetEventTime().AsTime()
			}
			last = e.GetEventTime().AsTime()
			if n := proto.Size(e); n > f.largest {
				f.largest, f.largestType = n, e.GetEventType().String()
				if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
					f.largestType += " " + a.GetActivityType().GetName()
				}
			}
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				f.tasks++
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
				t.Errorf("%s: %v: %v", name, e.GetEventType(), failureOf(e))
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "ExecuteToolCall" {
					scheduled++
				}
			}
		}
		require.Equal(t, calls, scheduled, "every call of %s runs its execute activity once", name)
		f.wall = last.Sub(first)
		t.Logf("%s: wall %v, history %d bytes in %d events (%d bytes a call), %d workflow tasks, largest event %d bytes (%s)",
			name, f.wall.Round(time.Millisecond), f.bytes, f.events, f.bytes/calls, f.tasks, f.largest, f.largestType)
		return f
	}
	wide := measure("parallel-200-calls", 200)
	narrow := measure("parallel-4-calls", 4)
	marginal := (wide.bytes - narrow.bytes) / (wide.calls - narrow.calls)
	t.Logf("each call past the 4th adds %d bytes of history; a call of the batch of 4 costs %d", marginal, narrow.bytes/narrow.calls)
	require.LessOrEqual(t, wide.bytes/wide.calls, narrow.bytes/narrow.calls, "history per call of the 200-call batch")
	require.LessOrEqual(t, marginal, narrow.bytes/narrow.calls, "history each call adds to a wide batch")
}

func failureOf(e *historypb.HistoryEvent) string {
	if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
		return a.GetFailure().GetMessage()
	}
	return ""
}
