package workflows_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// The replay corpus: histories of what production runs, recorded from a
// real server (the dev server, or the one TEMPORAL_ADDRESS names) by
//
//	go test ./workflows -run TestRecordHistories -record-histories
//
// into testdata/histories (the crash tests record the rest: a lost
// single-attempt tool, a worker shutdown, a session moving to a new build;
// see internal/harness/crashtest). TestReplayRecordedHistories replays every one of
// them against the current code on every CI run. Each scenario saves every
// workflow run of its workflow id, <name>.<n>.json, the first run first.
var recordHistories = flag.Bool("record-histories", false, "record the replay corpus into testdata/histories")

func TestRecordHistories(t *testing.T) {
	if !*recordHistories {
		t.Skip("records the replay corpus with -record-histories")
	}
	dir := filepath.Join("..", "testdata", "histories")
	for name, scenario := range map[string]func(*testing.T) (client.Client, string){
		"session-prompt-steer-followup": recordSessionPromptSteerFollowUp,
		"session-approvals":             recordSessionApprovals,
		"session-approval-timeout":      recordSessionApprovalTimeout,
		"session-abort":                 recordSessionAbort,
		"session-continue-as-new":       recordSessionContinueAsNew,
		"session-compaction":            recordSessionCompaction,
		"session-retries":               recordSessionRetries,
		"session-settings-reset":        recordSessionSettingsAndReset,
		"session-budget":                recordSessionBudget,
		"loop-continue-as-new":          recordLoopContinueAsNew,
		"loop-approval-timeout":         recordLoopApprovalTimeout,
		"session-large-inputs":          recordSessionLargeInputs,
		"session-list-memo":             recordSessionListMemo,
		"refuse-unknown-input-fields":   recordRefuseUnknownInputFields,
		"drop-foreign-signal":           recordDropForeignSignal,
		"workspace-missing":             recordWorkspaceMissing,
		"workspace-elsewhere":           recordWorkspaceElsewhere,
		"subagent-parent":               recordSubAgents,
		"subagent-abort":                recordSubAgentAbort,
		"subagent-waiting-approval":     recordSubAgentWaiting,
		"prepare-in-model-turn":         recordPrepareInModelTurn,
		// session-watched-approvals.1.json, recorded before the prompt
		// end's removal of the excerpt rode in noteRun's upsert
		// (log-excerpt-cleared-with-listing), keeps the older path: it is
		// not recorded again.
		"session-watched-approvals-cleared": recordSessionWatchedApprovals,
		"parallel-held-unwatched":           recordParallelHeldUnwatched,
		"session-set-hooks":                 recordSessionSetHooks,
		"subagent-can":                      recordSubAgentContinueMidBatch,
		"subagent-cancel-once":              recordSubAgentCancelOnce,
		"subagent-pause-timers":             recordSubAgentPauseTimers,
	} {
		t.Run(name, func(t *testing.T) {
			c, id := scenario(t)
			n := saveChain(t, c, id, dir, name)
			t.Logf("%s: %d workflow runs", name, n)
		})
	}
}

// saveChain saves every workflow run of id, first to last, as
// <name>.<n>.json.
func saveChain(t *testing.T, c client.Client, id, dir, name string) int {
	t.Helper()
	ctx := context.Background()
	d, err := c.DescribeWorkflow(ctx, id, "")
	require.NoError(t, err)
	var runs []string
	for runID := d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(); runID != ""; {
		runs = append([]string{runID}, runs...)
		h, err := testenv.History(ctx, c, id, runID)
		require.NoError(t, err)
		runID = h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	}
	old, _ := filepath.Glob(filepath.Join(dir, name+".*.json"))
	for _, f := range old {
		require.NoError(t, os.Remove(f))
	}
	for i, runID := range runs {
		require.NoError(t, testenv.SaveHistory(ctx, c, id, runID, filepath.Join(dir, fmt.Sprintf("%s.%d.json", name, i+1))))
	}
	return len(runs)
}

// recording is a harness whose runs upsert the search attributes, as a
// worker on a namespace that has them does.
func recording(t *testing.T, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
	h := newHarness(t, script, ts...)
	h.acts.SearchAttributes = true
	return h
}

func okTool(name string) tools.FuncTool {
	return tool(name, func(context.Context, tools.Call) (agent.ToolResult, error) {
		return agent.TextResult(name + " ok"), nil
	})
}

// Prompts, steering during a tool, a follow-up, the prompt Signal, all
// with Update IDs; the first prompt with the start (Update-with-Start).
func recordSessionPromptSteerFollowUp(t *testing.T) (client.Client, string) {
	g := newGate()
	h := recording(t, []llm.ScriptedResponse{
		answer(text("looking"), call("c1", "wait")),
		answer(text("steered")),
		answer(text("followed up")),
		answer(text("second prompt"), call("c2", "quick"), call("c3", "quick")),
		answer(text("signalled")),
	}, g.tool("wait"), okTool("quick"))
	ctx := context.Background()
	id := "record-session-" + testenv.Suffix()
	t.Cleanup(func() { _ = h.c.TerminateWorkflow(ctx, id, "", "recorded") })
	in := agentapi.SessionInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"},
		Tools: []string{"wait", "quick"}, SystemPrompt: "sys"}}
	_, _, err := agentclient.StartSession(ctx, h.c, id, h.queue, in, &agentapi.PromptRequest{Text: "first"}, agentclient.UpdateOptions{ID: "prompt-1"})
	require.NoError(t, err)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	h.updateOnce(id, "steer-1", agentapi.UpdateSteer, agent.UserText("also this", 0), nil)
	h.updateOnce(id, "follow-1", agentapi.UpdateFollowUp, agent.UserText("and then that", 0), nil)
	close(g.release)
	run := h.c.GetWorkflow(ctx, id, "")
	h.waitRunEnd(run, 1)
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "second"}, nil)
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "second"}, nil)
	h.waitRunEnd(run, 2)
	require.NoError(t, h.c.SignalWorkflow(ctx, id, "", agentapi.SignalPrompt, agentapi.PromptRequest{Text: "by signal"}))
	h.waitRunEnd(run, 3)
	return h.c, id
}

// Approvals: allow, deny, always (which lets a later call through) and a
// timeout, whose timer fires.
func recordSessionApprovals(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(call("c1", "quick"), call("c2", "quick")),
		answer(call("c3", "quick")),
		answer(call("c4", "quick")),
		answer(text("done")),
	}, okTool("quick"))
	// No timeout: the decisions below arrive whenever the test gets to
	// them, so a loaded machine records the same history as an idle one.
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"quick"},
		Approval: &agent.ApprovalPolicy{Tools: []string{"*"}}}})
	id := run.GetID()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 2 })
	h.updateOnce(id, "approve-1", agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"}, nil)
	h.updateOnce(id, "approve-2", agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c2", Decision: "deny", Reason: "not now"}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 1 })
	h.updateOnce(id, "approve-3", agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c3", Decision: "always"}, nil)
	ends := toolEnds(h.waitRunEnd(run, 1))
	require.Equal(t, "quick ok", ends["c1"])
	require.Contains(t, ends["c2"], "not now")
	require.Equal(t, "quick ok", ends["c3"])
	require.Equal(t, "quick ok", ends["c4"], "c4 ran without asking: c3's decision was always")
	return h.c, id
}

// A session's approval that nobody gives: silence for the policy's 1 s
// blocks the call, whatever the machine's load.
func recordSessionApprovalTimeout(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(call("c1", "slow")),
		answer(text("timed out")),
	}, okTool("slow"))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"slow"},
		Approval: &agent.ApprovalPolicy{Tools: []string{"*"}, Timeout: "1s"}}})
	id := run.GetID()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "slowly"}, nil)
	ends := toolEnds(h.waitRunEnd(run, 1))
	require.True(t, strings.HasPrefix(ends["c1"], "No approval within 1s"), "c1: %q", ends["c1"])
	return h.c, id
}

// toolEnds maps each tool call to its result's text.
func toolEnds(events []agent.Event) map[string]string {
	ends := map[string]string{}
	for _, e := range events {
		if e.Type == agent.EventToolExecutionEnd && e.Result != nil {
			ends[e.ToolCallID] = agent.TextOf(e.Result.Content)
		}
	}
	return ends
}

// An abort Update while a tool runs, then an abort Signal while the next
// run's tool runs, then a run that ends normally.
func recordSessionAbort(t *testing.T) (client.Client, string) {
	g := newGate()
	h := recording(t, []llm.ScriptedResponse{
		answer(call("c1", "wait")),
		answer(text("unused")),
		answer(call("c2", "wait")),
		answer(text("unused")),
		answer(text("fine")),
	}, g.tool("wait"))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"wait"}}})
	id := run.GetID()
	ctx := context.Background()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "wait"}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	h.updateOnce(id, "abort-1", agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "changed my mind"}, nil)
	h.waitRunEnd(run, 1)
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "wait again"}, nil)
	h.waitLatest(id, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })
	require.NoError(t, h.c.SignalWorkflow(ctx, id, "", agentapi.SignalAbort, agentapi.AbortRequest{Reason: "by signal"}))
	h.waitRunEnd(run, 2)
	h.updateOnce(id, "prompt-3", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "just answer"}, nil)
	h.waitRunEnd(run, 3)
	return h.c, id
}

// A session that continues as new after every turn: between two turns
// (a paused run), while idle, with queued messages and settings carried;
// and a repeated prompt sent across a seam.
func recordSessionContinueAsNew(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(text("one"), call("c1", "quick")),
		answer(text("two")),
		answer(text("three")),
	}, okTool("quick"))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"quick"}}, ContinueAsNewAfterTurns: 1})
	id := run.GetID()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	h.waitRunEnd(run, 1)
	h.updateOnce(id, "thinking-1", agentapi.UpdateSetThinkingLevel, agentapi.SettingRequest{Level: "high"}, nil)
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, nil)
	h.waitRunEnd(run, 2)
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	return h.c, id
}

// Automatic compaction before a turn, recovery from a provider's overflow
// (a non-retryable activity failure), and the compact Update.
func recordSessionCompaction(t *testing.T) (client.Client, string) {
	m := &windowModel{window: 6000}
	c, queue := newWindowWorker(t, m)
	run := startWindowSession(t, c, queue, agentapi.SessionInput{
		LoopConfig: agent.LoopConfig{Compaction: &agent.CompactionConfig{ContextWindow: 5000, ReserveTokens: 1000, KeepRecentTokens: 1500}},
	})
	var prompts []string
	for i := range 6 {
		prompts = append(prompts, fmt.Sprintf("prompt %d", i))
	}
	events := promptAll(t, c, run, prompts)
	require.NotEmpty(t, compactionEnds(events))
	require.NoError(t, agentclient.UpdateWithOptions(context.Background(), c, run.GetID(), agentapi.UpdateCompact,
		agentapi.CompactRequest{Instructions: "keep the file names"}, nil, agentclient.UpdateOptions{ID: "compact-1"}))
	return c, run.GetID()
}

// flaky fails each call's first attempt with a retryable error, and one
// call (the n-th) for good with a non-retryable one.
type flaky struct {
	m     llm.Model
	mu    sync.Mutex
	tried map[int]bool
	fatal int
}

func (f *flaky) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == agent.RoleAssistant {
			n++
		}
	}
	f.mu.Lock()
	first := !f.tried[n]
	f.tried[n] = true
	f.mu.Unlock()
	if n == f.fatal {
		return agent.Message{}, &llm.Error{Kind: llm.ErrBadRequest, Status: 400, Message: "invalid request: the recorder says so"}
	}
	if first {
		return agent.Message{}, &llm.Error{Kind: llm.ErrUnavailable, Status: 503, Message: "overloaded", RetryAfter: 10 * time.Millisecond}
	}
	return f.m.Stream(ctx, req, emit)
}

// Activity failures and retries: every model turn fails once (retried
// with the provider's delay), a tool faults once (retried), another
// faults for good, and one turn fails non-retryably, ending the run with
// the provider's error.
func recordSessionRetries(t *testing.T) (client.Client, string) {
	var faults sync.Map
	faulty := tool("faulty", func(_ context.Context, c tools.Call) (agent.ToolResult, error) {
		if _, again := faults.LoadOrStore(c.ID, true); !again {
			return agent.ToolResult{}, tools.Fault(errors.New("disk hiccup"))
		}
		return agent.TextResult("second time lucky"), nil
	})
	broken := tool("broken", func(context.Context, tools.Call) (agent.ToolResult, error) {
		return agent.ToolResult{}, tools.Fault(errors.New("always broken"))
	})
	h := recording(t, []llm.ScriptedResponse{
		answer(call("c1", "faulty"), call("c2", "broken")),
		answer(text("handled")),
		answer(text("never: this call fails for good")),
	}, faulty, broken)
	models := llm.NewRegistry()
	scripted, err := h.scripted.Model("script")
	require.NoError(t, err)
	// One flaky instance for the whole session, so first attempts fail.
	f := &flaky{m: scripted, tried: map[int]bool{}, fatal: 2}
	models.Register("test", llm.ProviderFunc(func(string) (llm.Model, error) { return f, nil }))
	h.acts.Models = models
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"faulty", "broken"}}})
	id := run.GetID()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	evs := h.waitRunEnd(run, 1)
	require.Equal(t, "handled", agent.TextOf(evs[len(evs)-1].Messages[len(evs[len(evs)-1].Messages)-1].Content))
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "fail"}, nil)
	evs = h.waitRunEnd(run, 2)
	last := evs[len(evs)-1].Messages
	require.Equal(t, agent.StopReasonError, last[len(last)-1].StopReason)
	return h.c, id
}

// The setters (setModel runs a local activity), continue, reset and the
// mode setters, between runs.
func recordSessionSettingsAndReset(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(text("one")),
		answer(text("continued")),
		answer(text("after reset")),
	})
	run := h.startSession(agentapi.SessionInput{})
	id := run.GetID()
	h.updateOnce(id, "prompt-1", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}, nil)
	h.waitRunEnd(run, 1)
	h.updateOnce(id, "model-1", agentapi.UpdateSetModel, agentapi.SettingRequest{Model: &agent.ModelRef{Provider: "test", ID: "script"}}, nil)
	h.updateOnce(id, "steering-1", agentapi.UpdateSetSteeringMode, agentapi.SettingRequest{Mode: "all"}, nil)
	h.updateOnce(id, "follow-1", agentapi.UpdateSetFollowUpMode, agentapi.SettingRequest{Mode: "all"}, nil)
	h.updateOnce(id, "exec-1", agentapi.UpdateSetToolExecution, agentapi.SettingRequest{Mode: "sequential"}, nil)
	h.updateOnce(id, "follow-up-1", agentapi.UpdateFollowUp, agent.UserText("go on", 0), nil)
	h.updateOnce(id, "continue-1", agentapi.UpdateContinue, nil, nil)
	h.waitRunEnd(run, 2)
	h.updateOnce(id, "reset-1", agentapi.UpdateReset, nil, nil)
	h.updateOnce(id, "prompt-2", agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "fresh"}, nil)
	h.waitRunEnd(run, 3)
	return h.c, id
}

// An AgentLoop run that continues as new every two turns, with a steer
// Update and a parallel batch (whose release timer fires).
func recordLoopContinueAsNew(t *testing.T) (client.Client, string) {
	var script []llm.ScriptedResponse
	for i := range 5 {
		script = append(script, answer(text(fmt.Sprintf("turn %d", i)),
			call(fmt.Sprintf("c%da", i), "quick"), call(fmt.Sprintf("c%db", i), "quick")))
	}
	script = append(script, answer(text("done")))
	h := recording(t, script, okTool("quick"))
	in := h.input("go", "quick")
	in.ContinueAsNewAfterTurns = 2
	run := h.start(in)
	h.updateOnce(run.GetID(), "steer-1", agentapi.UpdateSteer, agent.UserText("faster", 0), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res agentapi.AgentLoopResult
	require.NoError(t, h.c.GetWorkflow(ctx, run.GetID(), "").Get(ctx, &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	return h.c, run.GetID()
}

// An AgentLoop run whose call waits for a person who never answers: the
// approval's timer fires and the call is blocked.
func recordLoopApprovalTimeout(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{answer(call("c1", "quick")), answer(text("blocked"))}, okTool("quick"))
	in := h.input("go", "quick")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"quick"}, Timeout: "1s"}
	run := h.start(in)
	res := h.result(run)
	require.True(t, strings.HasPrefix(agent.TextOf(res.Messages[2].Content), "No approval within 1s"))
	return h.c, run.GetID()
}
