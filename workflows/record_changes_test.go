package workflows_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
)

// Scenarios of TestRecordHistories for changes that only some histories
// meet: each records the version marker of its change (checked by
// TestRecordedChangesHaveTheirMarkers).

// Two prompts: each run's end upserts the session's memo (title,
// lastActivity) for session list.
func recordSessionListMemo(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{answer(text("one")), answer(text("two"))})
	run := h.startSession(agentapi.SessionInput{})
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "the session's title"}, nil))
	h.waitRunEnd(run, 1)
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, nil))
	h.waitRunEnd(run, 2)
	return h.c, run.GetID()
}

// A run whose input has a field the input does not have ("promt") fails
// as InvalidInput.
func recordRefuseUnknownInputFields(t *testing.T) (client.Client, string) {
	h := recording(t, nil)
	run := h.start(map[string]any{
		"model":  map[string]any{"provider": "test", "id": "script"},
		"prompt": "hi",
		"promt":  "hi",
	})
	err := run.Get(context.Background(), nil)
	require.ErrorContains(t, err, `unknown field "promt"`)
	return h.c, run.GetID()
}

// A prompt Signal holding another run's stubs is dropped with a note; the
// next prompt runs.
func recordDropForeignSignal(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{answer(text("ok"))})
	run := h.startSession(agentapi.SessionInput{})
	foreign := agent.Message{Role: agent.RoleUser, Content: []agent.Content{
		agent.StubContent(agent.ContentText, agent.BlobRef{SHA256: strings.Repeat("ab", 32), Size: 3000, Scope: "another-run"})}}
	require.NoError(t, h.c.SignalWorkflow(context.Background(), run.GetID(), "", agentapi.SignalPrompt,
		agentapi.PromptRequest{Messages: []agent.Message{foreign}}))
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.Dropped) == 1 })
	require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "hi"}, nil))
	h.waitRunEnd(run, 1)
	return h.c, run.GetID()
}

// A run whose workspace is on no worker fails when it resolves.
func recordWorkspaceMissing(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{answer(call("c1", "list")), answer(text("done"))}, lsTool())
	in := h.input("list the files", "list")
	in.Workspace = filepath.Join(t.TempDir(), "no-such-workspace")
	run := h.start(in)
	require.ErrorContains(t, run.Get(context.Background(), nil), "does not exist on any worker")
	return h.c, run.GetID()
}

// A run whose workflow worker lacks its workspace resolves on the worker
// that holds it, its host from then on.
func recordWorkspaceElsewhere(t *testing.T) (client.Client, string) {
	c, queue, _ := workspaceFleet(t)
	run := testenv.Start(t, c, queue, "workspace-", agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}, Tools: []string{"list"}},
		Prompt:     "list the files",
	})
	res := testenv.Result(t, run, settleTimeout)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	return c, run.GetID()
}

// A parallel batch of a run with no before hooks, prepared by its model
// turn: a valid call runs with no PrepareToolCall, an invalid one ends with
// pi's validation error, and one whose arguments coercion changes ("2" for
// a number) still goes through PrepareToolCall; the tool runs twice.
func recordPrepareInModelTurn(t *testing.T) (client.Client, string) {
	var executed atomic.Int32
	h := recording(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "num", map[string]any{"n": 1}), agent.ToolCall("c2", "num", map[string]any{"n": "many"}),
			agent.ToolCall("c3", "num", map[string]any{"n": "2"})),
		answer(text("done")),
	}, badNumTool(&executed))
	in := h.input("go", "num")
	in.ToolExecution = agent.ExecutionParallel
	run := h.start(in)
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.EqualValues(t, 2, executed.Load())
	hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	locals := 0
	for _, e := range hist.GetEvents() {
		if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
			locals++
		}
	}
	require.Equal(t, 2, locals, "ResolveRun and the coerced call's PrepareToolCall")
	return h.c, run.GetID()
}

// Each recorded history of these changes holds its version marker.
func TestRecordedChangesHaveTheirMarkers(t *testing.T) {
	for file, change := range map[string]string{
		"session-list-memo.1.json":           "session-list-memo",
		"refuse-unknown-input-fields.1.json": "refuse-unknown-input-fields",
		"drop-foreign-signal.1.json":         "drop-foreign-signal",
		"workspace-missing.1.json":           "check-workspace-at-resolve",
		"workspace-elsewhere.1.json":         "check-workspace-at-resolve",
		// Recorded by remotehooks_test.go with -record-histories.
		"remote-hooks-activity-parallel.json":      "remote-hooks",
		"remote-hooks-webhook-sequential.json":     "remote-hooks",
		"prepare-in-model-turn.1.json":             "prepare-in-model-turn",
		"session-watched-approvals.1.json":         "log-excerpt-at-rest",
		"session-watched-approvals-cleared.1.json": "log-excerpt-cleared-with-listing",
		"parallel-held-unwatched.1.json":           "no-release-timer-unwatched",
		"subagent-waiting-approval.1.json":         "subagent-approval-status",
		// A session's hooks set by the setHooks Update (TestRecordHistories).
		"session-set-hooks.1.json": "remote-hooks",
		"subagent-can.1.json":      "subagent-continue-mid-batch",
	} {
		require.NotZero(t, markers(recordedHistory(t, file), change), "%s holds no marker of %s", file, change)
	}
	// Version 2 of subagent-continue-mid-batch (subAgentTidyVersion): its
	// batches ask each child to stop once and leave their timers to the
	// continue-as-new.
	for _, file := range []string{"subagent-cancel-once.1.json", "subagent-pause-timers.1.json"} {
		require.Equal(t, []string{"2"}, markerVersions(recordedHistory(t, file), "subagent-continue-mid-batch"), file)
	}
}

// recordedHistory reads a history of the replay corpus.
func recordedHistory(t *testing.T, file string) *historypb.History {
	t.Helper()
	return historyFile(t, filepath.Join("..", "testdata", "histories", file))
}

// markerVersions are the versions a history's markers of a change record.
func markerVersions(h *historypb.History, change string) []string {
	var out []string
	for _, ev := range h.GetEvents() {
		a := ev.GetMarkerRecordedEventAttributes()
		if a != nil && strings.Contains(a.GetDetails()["change-id"].String(), change) {
			out = append(out, string(a.GetDetails()["version"].GetPayloads()[0].GetData()))
		}
	}
	return out
}

// Two prompts of a session with a live watcher, each a call that a person
// approves: where the run rests (the approval wait, each prompt's end) a
// memo upsert carries the log's new events to the watcher, and a second
// removes the field again (log-excerpt-at-rest).
func recordSessionWatchedApprovals(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(call("c1", "quick")), answer(text("one")),
		answer(call("c2", "quick")), answer(text("two")),
	}, okTool("quick"))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"quick"},
		Approval: &agent.ApprovalPolicy{Tools: []string{"quick"}}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	asks, ends := make(chan string, 2), make(chan struct{}, 2)
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- agentclient.Watch(ctx, h.c, run.GetID(), "", agentclient.WatchOptions{Live: true, Store: testenv.Store(t)}, func(e agent.Event) {
			switch e.Type {
			case agent.EventApprovalRequest:
				asks <- e.ToolCallID
			case agent.EventAgentEnd:
				ends <- struct{}{}
			}
		})
	}()
	for i, prompt := range []string{"first", "second"} {
		h.updateOnce(run.GetID(), "prompt-"+prompt, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: prompt}, nil)
		var id string
		select {
		case id = <-asks:
		case err := <-watchErr:
			t.Fatalf("watch ended: %v", err)
		}
		require.Equal(t, fmt.Sprintf("c%d", i+1), id)
		h.updateOnce(run.GetID(), "approve-"+prompt, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: id, Decision: "allow"}, nil)
		select {
		case <-ends:
		case err := <-watchErr:
			t.Fatalf("watch ended: %v", err)
		}
	}
	return h.c, run.GetID()
}

// Watched, a session carries its log in memo upserts where it rests, and
// its memo keeps none of it; the memo's own fields stay.
func TestWatchedSessionCarriesLogInMemo(t *testing.T) {
	c, id := recordSessionWatchedApprovals(t)
	hist, err := testenv.History(context.Background(), c, id, "")
	require.NoError(t, err)
	require.NotZero(t, markers(hist, "log-excerpt-at-rest"))
	var carried []int64
	rests := 0
	for _, ev := range hist.GetEvents() {
		p := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[agentapi.MemoLogExcerpt]
		var ex agentapi.LogExcerpt
		if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &ex) != nil || len(ex.Events) == 0 {
			continue
		}
		rests++
		for _, e := range ex.Events {
			carried = append(carried, e.Seq)
		}
		last := ex.Events[len(ex.Events)-1].Type
		require.Contains(t, []agent.EventType{agent.EventApprovalRequest, agent.EventAgentEnd}, last,
			"a memo carries the log up to where the run rests")
	}
	// The first model turn may have started before the watcher took the
	// watch lease (its worker then says nobody watched, and the watcher
	// reads the first approval wait with the Query); from there on every
	// rest is carried: c1's prompt end, c2's approval wait and prompt end.
	require.GreaterOrEqual(t, rests, 3, "rests carried")
	for i := 1; i < len(carried); i++ {
		require.Greater(t, carried[i], carried[i-1], "carried events in log order, never twice")
	}
	d, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	memo := d.RawResponse.GetWorkflowExecutionInfo().GetMemo().GetFields()
	require.NotContains(t, memo, agentapi.MemoLogExcerpt, "the memo keeps no excerpt")
	require.Contains(t, memo, agentapi.MemoTitle)
}
