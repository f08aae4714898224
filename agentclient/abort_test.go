package agentclient_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
)

// Issue 29: an abort reaches a running tool and a streaming model turn
// within a second with no polling, and a call nobody watches costs what it
// does, not how long it runs. Counted from the dev server's own request
// metrics, as the other cost guards are.

// abortDeadline is the guarantee: from the abort Update being sent to the
// running activity being closed in the run's history.
const abortDeadline = time.Second

// The scripts of the abort and cost scenarios: a bash call that writes a
// marker file then sleeps (10 minutes, or 30 s), and a model that streams
// a chunk every 100 ms for a minute. The command prints a line, a partial
// result.
func addAbortScripts(p *llm.ScriptedProvider) {
	bash := func(seconds int) llm.Script {
		cmd := "echo started > started && echo working && sleep " + strconv.Itoa(seconds)
		return llm.Script{Responses: []llm.ScriptedResponse{
			{Content: []agent.Content{agent.ToolCall("call_sleep", "bash", map[string]any{"command": cmd, "timeout": seconds + 60})}},
			{Content: []agent.Content{agent.Text("done")}},
		}}
	}
	p.Add("bash600", bash(600))
	p.Add("bash30", bash(30))
	p.Add("slow", llm.Script{ChunkDelay: 100 * time.Millisecond, Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.Text(strings.Repeat("slow token ", 600))}}}})
}

func (r *costRig) startRun(t *testing.T, model, workspace string) client.WorkflowRun {
	t.Helper()
	cfg := agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: model}, Workspace: workspace}
	if workspace != "" {
		cfg.Tools = []string{"bash"}
	}
	run, err := r.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: model + "-" + testenv.Suffix(), TaskQueue: r.queue},
		agentapi.AgentLoopWorkflow, agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "go"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.c.TerminateWorkflow(context.Background(), run.GetID(), run.GetRunID(), "test over") })
	return run
}

// watch follows a run live, as `starter watch` does, until the test ends.
func (r *costRig) watch(t *testing.T, run client.WorkflowRun) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = agentclient.Watch(ctx, r.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Live: true, Store: r.st}, func(agent.Event) {})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitFile waits for a file a running command writes.
func waitFile(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil }, time.Minute, 20*time.Millisecond,
		"the command did not start")
}

// waitStarted waits until the run's pending activity of the given type has
// started on a worker.
func (r *costRig) waitStarted(t *testing.T, run client.WorkflowRun, activityType string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := r.c.DescribeWorkflow(context.Background(), run.GetID(), run.GetRunID())
		if err != nil {
			return false
		}
		for _, pa := range d.RawResponse.GetPendingActivities() {
			if pa.GetActivityType().GetName() == activityType && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "%s did not start", activityType)
}

// abortAndMeasure aborts the run and returns how long after the Update was
// sent the server closed its activity of the given type, as history
// records it (the dev server runs on this machine's clock).
func (r *costRig) abortAndMeasure(t *testing.T, run client.WorkflowRun, activityType string) time.Duration {
	t.Helper()
	ctx := context.Background()
	sent := time.Now()
	require.NoError(t, agentclient.Update(ctx, r.c, run.GetID(), agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "test"}, nil))
	gctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(gctx, &res))
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	it := r.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]bool{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activityType {
				scheduled[ev.GetEventId()] = true
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if scheduled[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] {
				return ev.GetEventTime().AsTime().Sub(sent)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			if scheduled[ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()] {
				return ev.GetEventTime().AsTime().Sub(sent)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			if scheduled[ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()] {
				return ev.GetEventTime().AsTime().Sub(sent)
			}
		}
	}
	t.Fatalf("no %s closed in history", activityType)
	return 0
}

// load keeps every core busy until the test ends: the guarantee holds on a
// loaded machine too.
func load(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 1_000_000; i++ {
					_ = i * i
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
}

type abortCase struct {
	name            string
	watched, loaded bool
}

var abortCases = []abortCase{
	{"unwatched", false, false},
	{"watched", true, false},
	{"unwatched-loaded", false, true},
}

// An abort stops a 10-minute bash call within a second, watched or not, on
// an idle machine and a loaded one. The call has run for 2 s first, so its
// worker is in its steady state: no heartbeat since it started (the first
// waits half the 30 s heartbeat timeout), the run's history long-polled.
func TestAbortStopsALongBashCallWithinASecond(t *testing.T) {
	r := newCostRig(t)
	for _, tc := range abortCases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			run := r.startRun(t, "bash600", ws)
			if tc.watched {
				r.watch(t, run)
			}
			waitFile(t, filepath.Join(ws, "started"))
			time.Sleep(2 * time.Second)
			if tc.loaded {
				load(t)
			}
			took := r.abortAndMeasure(t, run, "ExecuteToolCall")
			t.Logf("%s: the bash call closed %v after the abort was sent", tc.name, took)
			require.Less(t, took, abortDeadline)
		})
	}
}

// An abort stops a streaming model turn within a second, watched or not,
// idle and loaded, 2 s into its answer.
func TestAbortStopsAStreamingTurnWithinASecond(t *testing.T) {
	r := newCostRig(t)
	for _, tc := range abortCases {
		t.Run(tc.name, func(t *testing.T) {
			run := r.startRun(t, "slow", "")
			if tc.watched {
				r.watch(t, run)
			}
			r.waitStarted(t, run, "ModelTurn")
			time.Sleep(2 * time.Second)
			if tc.loaded {
				load(t)
			}
			took := r.abortAndMeasure(t, run, "ModelTurn")
			t.Logf("%s: the model turn closed %v after the abort was sent", tc.name, took)
			require.Less(t, took, abortDeadline)
		})
	}
}

// A 30 s bash call nobody watches costs its activity and its liveness
// heartbeats, one per 15 s (half its heartbeat timeout), and no signal
// (its partial results come with its result): at most 3 billable actions,
// and its whole run at most 30 requests
// of any kind but the workers' task polls. Nothing polls for an abort.
func TestUnwatchedBashCallCost(t *testing.T) {
	r := newCostRig(t)
	before := r.requests(t)
	ws := t.TempDir()
	run := r.startRun(t, "bash30", ws)
	var res agentapi.AgentLoopResult
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, run.Get(ctx, &res))
	for _, m := range res.Messages {
		require.False(t, m.Role == agent.RoleToolResult && m.IsError, "the call ran: %v", m.Content)
	}
	used := watcherOps(r.requests(t).Sub(before))
	t.Logf("a 30 s bash call, nobody watching: %v", used)
	require.LessOrEqual(t, used["RecordActivityTaskHeartbeat"], 2.0, "liveness only, one per 15 s: %v", used)
	require.Zero(t, used["DescribeWorkflowExecution"], "nothing polls for an abort: %v", used)
	require.LessOrEqual(t, used.Sum(), 30.0, "requests of the whole run: %v", used)
	require.Zero(t, used["SignalWorkflowExecution"], "partial results come with the result: %v", used)
	billable := 1 + used["RecordActivityTaskHeartbeat"] + used["SignalWorkflowExecution"]
	require.LessOrEqual(t, billable, 3.0, "the call's activity, heartbeats and signals: %v", used)

	// The durable log still has the partial result, between the call's
	// start and end, as pi records it.
	events, err := agentclient.Events(ctx, r.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	var order []agent.EventType
	for _, e := range events {
		if e.ToolCallID == "call_sleep" {
			order = append(order, e.Type)
		}
	}
	require.Equal(t, agent.EventToolExecutionStart, order[0])
	require.Equal(t, agent.EventToolExecutionEnd, order[len(order)-1])
	require.Contains(t, order[1:len(order)-1], agent.EventToolExecutionUpdate, "tool events: %v", order)
}

// A model turn streaming with nobody watching costs at most 0.2 requests a
// second while it streams: counted over 10 s in the middle of a minute's
// answer (the turn's start and end cost what any activity's do).
func TestUnwatchedStreamRequestRate(t *testing.T) {
	r := newCostRig(t)
	run := r.startRun(t, "slow", "")
	r.waitStarted(t, run, "ModelTurn")
	time.Sleep(3 * time.Second)
	before := r.requests(t) // waits 1.5 s for the counters
	window := 10 * time.Second
	time.Sleep(window)
	used := watcherOps(r.requests(t).Sub(before))
	t.Logf("10 s (+1.5 s settling) of a streaming turn nobody watches: %v", used)
	require.LessOrEqual(t, used.Sum(), 0.2*window.Seconds(), "requests while streaming: %v", used)
}
