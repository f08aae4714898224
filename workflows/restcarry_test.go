package workflows_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/workflows"
)

// A watched session's prompt end writes two memo upserts, counted in the
// server's history: the excerpt that carries the log up to agent_end, and
// noteRun's (title, lastActivity), which also removes the excerpt
// (log-excerpt-cleared-with-listing). Before, the removal was an upsert of
// its own: three per prompt end.
func TestPromptEndWritesTwoMemoUpserts(t *testing.T) {
	c, id := recordSessionWatchedApprovals(t)
	hist, err := testenv.History(context.Background(), c, id, "")
	require.NoError(t, err)
	require.NotZero(t, markers(hist, "log-excerpt-cleared-with-listing"))
	ends := 0
	evs := hist.GetEvents()
	for i, ev := range evs {
		if lastCarried(ev) != agent.EventAgentEnd {
			continue
		}
		ends++
		memos, upserts := 0, 0
		for _, e := range taskEvents(evs, i) {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
				memos++
			case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
				upserts++
			}
		}
		t.Logf("prompt end %d (event %d): %d memo upserts (WorkflowPropertiesModified), %d UpsertWorkflowSearchAttributes",
			ends, ev.GetEventId(), memos, upserts)
		require.Equal(t, 2, memos, "the excerpt, and noteRun's upsert that removes it")
	}
	// The first prompt's end may come before the watcher's lease reached
	// a model turn; the second's is carried.
	require.GreaterOrEqual(t, ends, 1)
	d, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	memo := d.RawResponse.GetWorkflowExecutionInfo().GetMemo().GetFields()
	require.NotContains(t, memo, agentapi.MemoLogExcerpt, "the memo keeps no excerpt")
	require.Contains(t, memo, agentapi.MemoLastActivity)
}

// lastCarried is the type of the last event a memo upsert's excerpt
// carries, or "".
func lastCarried(ev *historypb.HistoryEvent) agent.EventType {
	p := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[agentapi.MemoLogExcerpt]
	var ex agentapi.LogExcerpt
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &ex) != nil || len(ex.Events) == 0 {
		return ""
	}
	return ex.Events[len(ex.Events)-1].Type
}

// taskEvents are the events a workflow task's completion wrote with it:
// from its WorkflowTaskCompleted before evs[i] to the next task's
// WorkflowTaskScheduled.
func taskEvents(evs []*historypb.HistoryEvent, i int) []*historypb.HistoryEvent {
	start := i
	for start > 0 && evs[start].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
		start--
	}
	end := i
	for end < len(evs) && evs[end].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED {
		end++
	}
	return evs[start:end]
}

// A watcher skips the events Query where a run rests after a memo upsert
// that carried the log; an event that a coroutine woken by the same
// workflow task logs after that upsert came with no excerpt, and the
// watcher saw it only at the run's next news (here: never, while the run
// waits). The workflow now marks it (agentapi.MemoLogGrew) and the
// watcher reads it with the Query. The run is the loop's own log and rest
// driven by hand (workflows.LogAfterRestWorkflow): no agent run reaches
// that order today, which is what the rule had relied on.
func TestWatcherSeesWhatACoroutineLogsAfterARest(t *testing.T) {
	c := testenv.Client(t)
	queue := "log-after-rest-" + testenv.Suffix()
	release := make(chan struct{})
	queries := &eventsQueries{}
	w := worker.New(c, queue, worker.Options{Interceptors: []interceptor.WorkerInterceptor{queries}})
	w.RegisterWorkflowWithOptions(workflows.LogAfterRestWorkflow, workflow.RegisterOptions{Name: "LogAfterRest"})
	w.RegisterActivityWithOptions(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, activity.RegisterOptions{Name: "ReleaseRest"})
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := "log-after-rest-" + testenv.Suffix()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, "LogAfterRest")
	require.NoError(t, err)
	defer func() { _ = c.TerminateWorkflow(context.Background(), id, "", "test over") }()
	got := make(chan agent.Event, 16)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- agentclient.Watch(ctx, c, id, run.GetRunID(), agentclient.WatchOptions{}, func(e agent.Event) { got <- e })
	}()
	next := func(within time.Duration) agent.Event {
		t.Helper()
		select {
		case e := <-got:
			return e
		case err := <-watchErr:
			t.Fatalf("watch ended: %v", err)
		case <-time.After(within):
			t.Fatalf("no event within %v", within)
		}
		return agent.Event{}
	}
	require.Equal(t, agent.EventAgentStart, next(time.Minute).Type)
	// The watcher reads the log twice before it waits on the run's
	// history: at its start, and for the news of the task that scheduled
	// the activity (its history feed reads the history from the start).
	// After both have been answered, the activity's end wakes the task
	// that rests and logs after the rest.
	require.Eventually(t, func() bool { return queries.n.Load() >= 2 }, time.Minute, 10*time.Millisecond)
	close(release)
	require.Equal(t, agent.EventTurnStart, next(time.Minute).Type, "carried by the rest's excerpt")
	// Nothing else happens in the run until the Signal below: turn_end
	// comes only if the watcher reads it now. A minute is far beyond the
	// history long poll and one Query, even loaded.
	require.Equal(t, agent.EventTurnEnd, next(time.Minute).Type, "logged by the woken coroutine after the excerpt")
	require.NoError(t, c.SignalWorkflow(ctx, id, run.GetRunID(), "end", nil))
	require.Equal(t, agent.EventAgentEnd, next(time.Minute).Type)
	require.NoError(t, <-watchErr)

	// The history shows the mark after the excerpt, and the new commands
	// replay.
	hist, err := testenv.History(context.Background(), c, id, run.GetRunID())
	require.NoError(t, err)
	require.NotZero(t, markers(hist, "log-grew-after-rest"))
	excerpt, grew := 0, 0
	for _, ev := range hist.GetEvents() {
		fields := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()
		if lastCarried(ev) != "" {
			excerpt = int(ev.GetEventId())
		}
		if fields[agentapi.MemoLogGrew] != nil {
			grew = int(ev.GetEventId())
		}
	}
	require.NotZero(t, excerpt)
	require.Greater(t, grew, excerpt, "the mark follows the excerpt")
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.LogAfterRestWorkflow, workflow.RegisterOptions{Name: "LogAfterRest"})
	require.NoError(t, r.ReplayWorkflowHistory(testenv.Quiet(), hist))
}

// eventsQueries counts the events Queries a worker's workflows answered.
type eventsQueries struct {
	interceptor.WorkerInterceptorBase
	n atomic.Int32
}

func (q *eventsQueries) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &countQueries{n: &q.n}
	i.Next = next
	return i
}

type countQueries struct {
	interceptor.WorkflowInboundInterceptorBase
	n *atomic.Int32
}

func (i *countQueries) HandleQuery(ctx workflow.Context, in *interceptor.HandleQueryInput) (any, error) {
	v, err := i.Next.HandleQuery(ctx, in)
	if in.QueryType == agentapi.QueryEvents {
		i.n.Add(1)
	}
	return v, err
}

// A prompt end whose events are too large for a memo excerpt writes the
// same commands as one that fits, its excerpt empty: whether events fit is
// a matter of their JSON, which a later build may encode to another size,
// and a command that came and went with it would fail that build's replay.
// The watcher reads those events with the Query.
func TestRestTooLargeForAnExcerptWritesTheSameCommands(t *testing.T) {
	// Twelve calls in one turn: their events (a long text would go to the
	// content store as a stub) are over the excerpt's 2 KB.
	var many []agent.Content
	for i := range 12 {
		many = append(many, call(fmt.Sprintf("c%d", i), "quick"))
	}
	h := recording(t, []llm.ScriptedResponse{answer(text("one")), answer(text("two")), answer(many...), answer(text("three"))}, okTool("quick"))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"quick"}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends := make(chan string, 3)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- agentclient.Watch(ctx, h.c, run.GetID(), "", agentclient.WatchOptions{Live: true, Store: testenv.Store(t)}, func(e agent.Event) {
			if e.Type == agent.EventAgentEnd {
				ends <- agent.TextOf(e.Messages[len(e.Messages)-1].Content)
			}
		})
	}()
	for i, prompt := range []string{"first", "second", "third"} {
		h.updateOnce(run.GetID(), "prompt-"+prompt, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: prompt}, nil)
		select {
		case got := <-ends:
			require.Equal(t, []string{"one", "two", "three"}[i], got)
		case err := <-watchErr:
			t.Fatalf("watch ended: %v", err)
		}
	}
	hist, err := testenv.History(context.Background(), h.c, run.GetID(), "")
	require.NoError(t, err)
	evs := hist.GetEvents()
	empty := 0
	for i, ev := range evs {
		p := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[agentapi.MemoLogExcerpt]
		var ex agentapi.LogExcerpt
		if p == nil || p.GetData() == nil || converter.GetDefaultDataConverter().FromPayload(p, &ex) != nil || len(ex.Events) > 0 {
			continue
		}
		empty++
		memos := 0
		for _, e := range taskEvents(evs, i) {
			if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED {
				memos++
			}
		}
		require.Equal(t, 2, memos, "the empty excerpt, and noteRun's upsert that removes it")
	}
	require.Equal(t, 1, empty, "the third prompt's end, too large to carry, upserts an empty excerpt")
}
