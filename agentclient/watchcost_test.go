package agentclient_test

import (
	"context"
	"fmt"
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
	"github.com/durable-agents/agentloop/tools"
)

// The cost guards of issue 29 point 3: watching costs what reading costs.

// parallelTurns is how many turns of 4 parallel nap calls the "parallel"
// model makes before it answers.
const parallelTurns = 10

// napTool is a tool that takes 20 ms.
var napTool = tools.FuncTool{Def: tools.Definition{Name: "nap", Description: "sleeps 20 ms"},
	Fn: func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		time.Sleep(20 * time.Millisecond)
		return agent.TextResult("slept"), nil
	}}

func addWatchScripts(p *llm.ScriptedProvider) {
	var turns []llm.ScriptedResponse
	for turn := range parallelTurns {
		var calls []agent.Content
		for i := range 4 {
			calls = append(calls, agent.ToolCall(fmt.Sprintf("c%d-%d", turn, i), "nap", map[string]any{}))
		}
		turns = append(turns, llm.ScriptedResponse{Content: calls})
	}
	turns = append(turns, llm.ScriptedResponse{Content: []agent.Content{agent.Text("done")}})
	p.Add("parallel", llm.Script{Responses: turns})
	var session []llm.ScriptedResponse
	for i := range sessionPrompts {
		session = append(session,
			llm.ScriptedResponse{Content: []agent.Content{agent.ToolCall(fmt.Sprintf("s%d", i), "nap", map[string]any{})}},
			llm.ScriptedResponse{Content: []agent.Content{agent.Text("Done.")}})
	}
	p.Add("approvals", llm.Script{Responses: session})
}

// sessionPrompts is how many prompts the "approvals" model answers, each
// with one nap call and then a text.
const sessionPrompts = 10

// A live watcher of a run of 10 turns of 4 parallel nap calls reads the
// event log from the history it long-polls: while someone watches, each
// model turn's input carries the events since the last one, so the watcher
// asks the events Query (a billable action) only for the first turn or two
// (before the worker saw the watch lease) and at the run's end (one per
// turn before, about 2.5 before issue 29), and still gets every event, in
// order. The news of tools starting waits NewsDelay for the model turn that
// follows; here NewsDelay is longer than any turn's tools take, even
// loaded, so that the count is what the code guarantees.
//
// The whole watched run costs at most 1.2 times the billable actions of a
// plain workflow with one activity per step (issue 29's floor: a start and
// 51 activities), counted from its history (historyActions) and the
// server's metrics (heartbeats, Queries, Updates), as bench cost counts.
func TestWatchedRunCost(t *testing.T) {
	r := newCostRig(t)
	defer func(d time.Duration) { agentclient.NewsDelay = d }(agentclient.NewsDelay)
	agentclient.NewsDelay = time.Minute
	before := r.requests(t)
	cfg := agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "parallel"}, Tools: []string{"nap"},
		ToolExecution: agent.ExecutionParallel}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "parallel-" + testenv.Suffix(), TaskQueue: r.queue},
		agentapi.AgentLoopWorkflow, agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "go"})
	require.NoError(t, err)
	var seqs []int64
	ends := 0
	err = agentclient.Watch(ctx, r.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Live: true, Store: r.st}, func(e agent.Event) {
		if e.Seq == 0 {
			return // live
		}
		seqs = append(seqs, e.Seq)
		if e.Type == agent.EventToolExecutionEnd {
			ends++
		}
	})
	require.NoError(t, err)
	for i, s := range seqs {
		require.Equal(t, int64(i+1), s, "the watcher saw the log gap-free, in order")
	}
	require.Equal(t, 4*parallelTurns, ends, "every call's end")
	used := watcherOps(r.requests(t).Sub(before))
	t.Logf("a watched run of %d turns of 4 parallel calls: %v", parallelTurns, used)
	require.LessOrEqual(t, used["QueryWorkflow"], 4.0,
		"the first two turns, the end, and a spare for the run closing between two reads: %v", used)

	hist := historyActions(t, r.c, run.GetID(), run.GetRunID())
	billable := hist.total() + used["RecordActivityTaskHeartbeat"] + used["QueryWorkflow"] + used["UpdateWorkflowExecution"]
	floor := 1 + float64(parallelTurns+1+4*parallelTurns)
	t.Logf("billable: %.0f (history %+v, heartbeats %.0f, Queries %.0f, Updates %.0f), %.2fx the floor's %.0f",
		billable, hist, used["RecordActivityTaskHeartbeat"], used["QueryWorkflow"], used["UpdateWorkflowExecution"], billable/floor, floor)
	require.LessOrEqual(t, billable, 1.2*floor, "a watched run within 1.2x the floor")
}

// actions are the billable actions a run's history shows.
type actions struct{ Starts, Upserts, Activities, LocalTasks, Timers, Signals float64 }

func (a actions) total() float64 {
	return a.Starts + a.Upserts + a.Activities + a.LocalTasks + a.Timers + a.Signals
}

// historyActions counts a run's billable actions in its history: starts,
// search-attribute upserts (but GetVersion's TemporalChangeVersion, which
// Temporal Cloud does not count), activity attempts, the local activities
// of each workflow task as one, timers and signals.
func historyActions(t *testing.T, c client.Client, workflowID, runID string) actions {
	t.Helper()
	h, err := testenv.History(context.Background(), c, workflowID, runID)
	require.NoError(t, err)
	var a actions
	localInTask := false
	for _, ev := range h.GetEvents() {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a.Starts++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			fields := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
			if _, ok := fields["TemporalChangeVersion"]; !ok || len(fields) > 1 {
				a.Upserts++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a.Activities += float64(ev.GetActivityTaskStartedEventAttributes().GetAttempt())
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" && !localInTask {
				a.LocalTasks++
				localInTask = true
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			localInTask = false
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			a.Timers++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
			a.Signals++
		}
	}
	return a
}

// A live watcher of a tool that runs 30 s and prints one line reads the
// running tool's partial result (DescribeWorkflowExecution) at the pace of
// what happens: every 50 ms for LiveQuiet after the tool starts and after
// each partial result, then less and less often while nothing changes, at
// least a second apart, where it read every 50 ms throughout before (602
// reads in 30 s). The partial result still shows live.
func TestWatchedSilentToolDescribeRate(t *testing.T) {
	r := newCostRig(t)
	before := r.requests(t)
	run := r.startRun(t, "bash30", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var live []string
	start := time.Now()
	err := agentclient.Watch(ctx, r.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Live: true, Store: r.st}, func(e agent.Event) {
		if e.Seq == 0 && e.Type == agent.EventToolExecutionUpdate && e.PartialResult != nil {
			mu.Lock()
			live = append(live, agent.TextOf(e.PartialResult.Content))
			mu.Unlock()
		}
	})
	require.NoError(t, err)
	took := time.Since(start)
	used := watcherOps(r.requests(t).Sub(before))
	t.Logf("a watched 30 s bash call (watch took %v): %v; live partial results %q", took, used, live)
	require.NotEmpty(t, live, "the running tool's partial result showed live")
	require.Contains(t, live[0], "working")
	// One a second while nothing changes, plus, after the tool started and
	// after its line came, LiveQuiet of reads at LivePollInterval and the
	// ramp from there to LivePollMax (5 doublings), and the model turns'.
	fast := float64(agentclient.LiveQuiet/agentclient.LivePollInterval) + 5
	require.LessOrEqual(t, used["DescribeWorkflowExecution"], took.Seconds()/agentclient.LivePollMax.Seconds()+2*fast+5,
		"Describe follows what happens: %v", used)
}

// A live watcher of a session whose every prompt is a tool call that a
// person approves (bench cost's session row, as `starter session chat`
// runs it) learns of each approval request and each prompt's end from the
// history it long-polls: where the run rests, a memo upsert carries the
// log's new events (agentapi.MemoLogExcerpt), so the events Query is asked
// only at the watch's start and for the first prompt's opening and
// approval wait (before the worker saw the watch lease), where it was
// asked twice a prompt before. Every event still arrives, gap-free and in
// order, and every approval request in time for the approval.
//
// The whole watched session costs at most 1.3 times the billable actions
// of its floor: a plain workflow that takes the same Updates (prompt and
// approval) and runs one activity per step (the start, and per prompt two
// Updates and three activities), counted as TestWatchedRunCost counts.
func TestWatchedSessionCost(t *testing.T) {
	r := newCostRig(t)
	defer func(d time.Duration) { agentclient.NewsDelay = d }(agentclient.NewsDelay)
	agentclient.NewsDelay = time.Minute // the nap call's news waits for the model turn after it
	before := r.requests(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "approvals"}, Tools: []string{"nap"},
		Approval: &agent.ApprovalPolicy{Tools: []string{"nap"}}}
	id := "approvals-" + testenv.Suffix()
	_, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue},
		agentapi.SessionWorkflow, agentapi.SessionInput{LoopConfig: cfg})
	require.NoError(t, err)
	defer func() { _ = r.c.TerminateWorkflow(context.Background(), id, "", "test over") }()

	asks := make(chan string, sessionPrompts)
	ends := make(chan struct{}, sessionPrompts)
	watchErr := make(chan error, 1)
	var seqs []int64
	wctx, stop := context.WithCancel(ctx)
	go func() {
		watchErr <- agentclient.Watch(wctx, r.c, id, "", agentclient.WatchOptions{Live: true, Store: r.st}, func(e agent.Event) {
			if e.Seq == 0 {
				return // live
			}
			seqs = append(seqs, e.Seq)
			switch e.Type {
			case agent.EventApprovalRequest:
				asks <- e.ToolCallID
			case agent.EventAgentEnd:
				ends <- struct{}{}
			}
		})
	}()
	for i := range sessionPrompts {
		var st agentapi.RunStatus
		require.NoError(t, agentclient.Update(ctx, r.c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: fmt.Sprintf("prompt %d", i)}, &st))
		var call string
		select {
		case call = <-asks:
		case err := <-watchErr:
			t.Fatalf("watch ended before prompt %d's approval request: %v", i, err)
		}
		require.Equal(t, fmt.Sprintf("s%d", i), call)
		require.NoError(t, agentclient.Update(ctx, r.c, id, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: call, Decision: "allow"}, nil))
		select {
		case <-ends:
		case err := <-watchErr:
			t.Fatalf("watch ended before prompt %d's end: %v", i, err)
		}
	}
	stop()
	require.ErrorIs(t, <-watchErr, context.Canceled)
	for i, s := range seqs {
		require.Equal(t, int64(i+1), s, "the watcher saw the log gap-free, in order")
	}
	used := watcherOps(r.requests(t).Sub(before))
	t.Logf("a watched session of %d prompts with approvals: %v", sessionPrompts, used)
	require.LessOrEqual(t, used["QueryWorkflow"], 4.0,
		"the watch's start, the first prompt's opening and approval wait (before the worker saw the watch lease), "+
			"and a spare for a read that raced its news: %v", used)

	hist := historyActions(t, r.c, id, "")
	billable := hist.total() + used["RecordActivityTaskHeartbeat"] + used["QueryWorkflow"] + used["UpdateWorkflowExecution"]
	floor := 1 + float64(sessionPrompts*(2+3))
	t.Logf("billable: %.0f (history %+v, heartbeats %.0f, Queries %.0f, Updates %.0f), %.2fx the floor's %.0f",
		billable, hist, used["RecordActivityTaskHeartbeat"], used["QueryWorkflow"], used["UpdateWorkflowExecution"], billable/floor, floor)
	require.LessOrEqual(t, billable, 1.3*floor, "a watched session with approvals within 1.3x the floor")
}
