package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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

// holds is the children's tool "hold": a call of it (whose "who" is its
// child's prompt) waits until the test releases that child, or its
// context ends; entered and stopped report each.
type holds struct {
	mu      sync.Mutex
	gates   map[string]chan struct{}
	entered chan string
	stopped chan time.Time
}

func newHolds(who ...string) *holds {
	h := &holds{gates: map[string]chan struct{}{}, entered: make(chan string, 8), stopped: make(chan time.Time, 8)}
	for _, w := range who {
		h.gates[w] = make(chan struct{})
	}
	return h
}

func (h *holds) release(who string) { close(h.gates[who]) }

// next is the next child to enter hold.
func (h *holds) next(t *testing.T) string {
	t.Helper()
	select {
	case who := <-h.entered:
		return who
	case <-time.After(settleTimeout):
		t.Fatal("no child entered hold")
		return ""
	}
}

func (h *holds) tool() tools.FuncTool {
	return tool("hold", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		who, gate := h.enter(c)
		if gate == nil {
			return agent.TextResult("held " + who), nil
		}
		select {
		case <-gate:
			return agent.TextResult("held " + who), nil
		case <-ctx.Done():
			h.stopped <- time.Now()
			return agent.ToolResult{}, ctx.Err()
		}
	})
}

// enter reports a call of hold entered: whose it is, and its gate (nil
// when the test holds it not).
func (h *holds) enter(c tools.Call) (string, chan struct{}) {
	who, _ := c.Args["who"].(string)
	h.mu.Lock()
	gate := h.gates[who]
	h.mu.Unlock()
	h.entered <- who
	return who, gate
}

// holdScript is a child's model: its first turn calls hold with its
// prompt, its next answers "done: <prompt>".
func holdScript() llm.Script {
	return llm.Script{Reply: func(req llm.Request) llm.ScriptedResponse {
		prompt := req.Messages[0].Content[0].Text
		for _, m := range req.Messages {
			if m.Role == agent.RoleAssistant {
				return answer(text("done: " + prompt))
			}
		}
		return answer(agent.ToolCall("h1", "hold", map[string]any{"who": prompt}))
	}}
}

// threeTasks is a parent's first answer: three task calls in one batch.
func threeTasks() llm.ScriptedResponse {
	return answer(text("Splitting it up."), taskCall("t1", "helper", "alpha"), taskCall("t2", "helper", "beta"),
		taskCall("t3", "helper", "gamma"))
}

// holdInput is a parent whose helper children call hold; every events
// past two continue it as new (its first chance in a batch that waits on
// children alone, then after each child's news).
func (h *harness) holdInput(rollOver bool) agentapi.AgentLoopInput {
	in := h.subAgentInput("split the work", &agent.SubAgentLimits{CheckInterval: "1s"}, agent.SubAgent{
		Name: "helper", Description: "holds", Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"hold"}})
	if rollOver {
		in.ContinueAsNewAfterEvents = 2
	}
	return in
}

// startHolding starts a parent of three holding children and waits until
// all three hold and the parent has continued as new once.
func (h *harness) startHolding(hs *holds) client.WorkflowRun {
	h.t.Helper()
	h.scripted.Add("child", holdScript())
	run := h.start(h.holdInput(true))
	hs.waitEntered(h.t, run.GetID(), h.c)
	return run
}

// waitEntered waits until three children hold and the workflow has
// continued as new once.
func (hs *holds) waitEntered(t *testing.T, id string, c client.Client) {
	t.Helper()
	for range 3 {
		hs.next(t)
	}
	waitRuns(t, c, id, 2)
}

// twoSeams releases beta, waits for a second continue-as-new, releases
// gamma and returns the parent's result.
func (h *harness) twoSeams(hs *holds, run client.WorkflowRun) agentapi.AgentLoopResult {
	h.t.Helper()
	hs.release("beta")
	waitRuns(h.t, h.c, run.GetID(), 3)
	hs.release("gamma")
	return h.latestResult(run)
}

// latestResult is the result of a workflow's last run.
func (h *harness) latestResult(run client.WorkflowRun) agentapi.AgentLoopResult {
	h.t.Helper()
	return testenv.Result(h.t, h.c.GetWorkflow(context.Background(), run.GetID(), ""), time.Minute)
}

// runIDs are a workflow's runs, first to last.
func runIDs(t *testing.T, c client.Client, id string) []string {
	t.Helper()
	d, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	var runs []string
	for runID := d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(); runID != ""; {
		runs = append([]string{runID}, runs...)
		hist, err := testenv.History(context.Background(), c, id, runID)
		require.NoError(t, err)
		runID = hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	}
	return runs
}

// waitRuns waits until a workflow has at least n runs.
func waitRuns(t *testing.T, c client.Client, id string, n int) {
	t.Helper()
	if !assert.Eventually(t, func() bool { return len(runIDs(t, c, id)) >= n }, 20*time.Second, 50*time.Millisecond,
		"%s did not continue as new", id) {
		dumpRuns(t, c, id)
		t.FailNow()
	}
}

// waitEvent waits until a workflow's latest run's history has an event of
// the type.
func waitEvent(t *testing.T, c client.Client, id string, typ enumspb.EventType) {
	t.Helper()
	require.Eventually(t, func() bool {
		hist, err := testenv.History(context.Background(), c, id, "")
		return err == nil && slices.ContainsFunc(hist.GetEvents(), func(e *historypb.HistoryEvent) bool { return e.GetEventType() == typ })
	}, settleTimeout, 20*time.Millisecond, "%s has no %s", id, typ)
}

// waitStatus waits until a workflow's latest run has the status: a child
// sends its result before it completes, so its parent may end first.
func waitStatus(t *testing.T, c client.Client, id string, want enumspb.WorkflowExecutionStatus) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := c.DescribeWorkflow(context.Background(), id, "")
		return err == nil && d.RawResponse.GetWorkflowExecutionInfo().GetStatus() == want
	}, settleTimeout, 20*time.Millisecond, "%s is not %s", id, want)
}

// dumpRuns logs each run's history, signals and failures spelled out, for
// a test that fails waiting on a continue-as-new.
func dumpRuns(t *testing.T, c client.Client, id string) {
	for _, r := range runIDs(t, c, id) {
		hist, err := testenv.History(context.Background(), c, id, r)
		require.NoError(t, err)
		t.Logf("run %s", r)
		for _, e := range hist.GetEvents() {
			s := e.GetEventType().String()
			if a := e.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
				s += " " + a.GetSignalName() + " " + string(a.GetInput().GetPayloads()[0].GetData())
			}
			if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
				s += " " + a.GetFailure().GetMessage()
			}
			t.Logf("%d %s", e.GetEventId(), clipText(s, 300))
		}
	}
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// batchShape is a run's events as pi's order fixes them: the tool events
// of the batch between the starts and the result messages as a sorted
// block (children report and end in whatever order they run), the rest
// in order.
func batchShape(evs []agent.Event) []string {
	var out, block []string
	in := false
	for _, e := range evs {
		s := string(e.Type)
		switch {
		case e.Type == agent.EventToolExecutionStart:
			s += " " + e.ToolCallID
		case e.Type == agent.EventToolExecutionUpdate:
			s += " " + e.ToolCallID + " " + agent.TextOf(e.PartialResult.Content)
		case e.Type == agent.EventToolExecutionEnd:
			s += " " + e.ToolCallID + " " + agent.TextOf(e.Result.Content)
			in = true
		case e.Message != nil && e.Message.Role == agent.RoleToolResult:
			s += " " + e.Message.ToolCallID + " " + agent.TextOf(e.Message.Content)
		}
		if e.Type == agent.EventToolExecutionUpdate || e.Type == agent.EventToolExecutionEnd {
			block = append(block, s)
			continue
		}
		if in && len(block) > 0 {
			slices.Sort(block)
			out = append(out, block...)
			block = nil
		}
		out = append(out, s)
	}
	return out
}

// TestSubAgentsParentContinuesAsNewMidBatch: three children in one batch;
// alpha answers at once, beta and gamma hold. The parent continues as new
// while they hold and again after news of them (beta answers after the
// first roll-over, gamma after the second). Every answer reaches the parent once, its usage counts each
// child once, no child is started twice, and its events are those of the
// same batch run without a continue-as-new, in pi's order.
func TestSubAgentsParentContinuesAsNewMidBatch(t *testing.T) {
	script := []llm.ScriptedResponse{threeTasks(), answer(text("All three answered."))}

	plainHolds := newHolds()
	plain := newHarness(t, script, plainHolds.tool())
	plain.scripted.Add("child", holdScript())
	plainRun := plain.start(plain.holdInput(false))
	require.Equal(t, agent.StopReasonStop, plain.result(plainRun).StopReason)
	want := batchShape(plain.events(plainRun))

	hs := newHolds("beta", "gamma")
	h := newHarness(t, script, hs.tool())
	run := h.startHolding(hs)
	res := h.twoSeams(hs, run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)

	evs := testenv.Events(t, h.c, h.c.GetWorkflow(context.Background(), run.GetID(), ""))
	require.Equal(t, want, batchShape(evs))
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.Seq, "the log goes on across the runs without a gap")
	}

	var childUsage agent.Usage
	for i, who := range []string{"alpha", "beta", "gamma"} {
		id := fmt.Sprintf("%s/task-1-%d-t%d", run.GetID(), i+1, i+1)
		var ends []agent.Event
		for _, e := range evs {
			if e.Type == agent.EventToolExecutionEnd && e.ToolCallID == fmt.Sprintf("t%d", i+1) {
				ends = append(ends, e)
			}
		}
		require.Len(t, ends, 1, "%s's answer reached the parent once", who)
		require.False(t, ends[0].IsError, ends[0].Result.Content)
		require.Equal(t, "done: "+who, agent.TextOf(ends[0].Result.Content))
		var d agentapi.SubAgentDetails
		require.NoError(t, json.Unmarshal(ends[0].Result.Details, &d))
		require.Equal(t, id, d.WorkflowID)
		require.NotNil(t, d.Usage)
		childUsage = childUsage.Add(*d.Usage)

		waitStatus(t, h.c, id, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
		desc, err := h.c.DescribeWorkflow(context.Background(), id, "")
		require.NoError(t, err)
		require.Equal(t, d.RunID, desc.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	}
	var own agent.Usage
	for _, e := range evs {
		if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleAssistant && e.Message.Usage != nil {
			own = own.Add(*e.Message.Usage)
		}
	}
	require.Equal(t, own.Input+childUsage.Input, res.Usage.Input)
	require.Equal(t, own.Output+childUsage.Output, res.Usage.Output)

	runs := runIDs(t, h.c, run.GetID())
	require.GreaterOrEqual(t, len(runs), 3)
	starts := 0
	for _, r := range runs {
		hist, err := testenv.History(context.Background(), h.c, run.GetID(), r)
		require.NoError(t, err)
		for _, e := range hist.GetEvents() {
			if e.GetEventType() == enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED {
				starts++
			}
		}
	}
	require.Equal(t, 3, starts, "no child started twice")
}

// TestSubAgentsAbortAfterRollOver: aborting a parent that continued as
// new while its children hold reaches each child's running tool within a
// second; each call ends with its aborted child's result.
func TestSubAgentsAbortAfterRollOver(t *testing.T) {
	hs := newHolds("alpha", "beta", "gamma")
	h := newHarness(t, []llm.ScriptedResponse{threeTasks(), answer(text("unreached"))}, hs.tool())
	run := h.startHolding(hs)

	sent := time.Now()
	handle, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), UpdateName: agentapi.UpdateAbort, Args: []any{agentapi.AbortRequest{Reason: "stop"}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	require.NoError(t, handle.Get(context.Background(), nil))
	for range 3 {
		select {
		case at := <-hs.stopped:
			require.Less(t, at.Sub(sent), time.Second, "a carried child's tool learned of the abort too late")
		case <-time.After(settleTimeout):
			t.Fatal("a carried child's tool never learned of the abort")
		}
	}
	res := h.latestResult(run)
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	n := 0
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			n++
			require.True(t, m.IsError)
			require.True(t, strings.HasPrefix(m.Content[0].Text, "Sub-agent helper ended with stopReason aborted"), m.Content[0].Text)
		}
	}
	require.Equal(t, 3, n)
	for i := 1; i <= 3; i++ {
		waitStatus(t, h.c, fmt.Sprintf("%s/task-1-%d-t%d", run.GetID(), i, i), enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED)
	}
}

// TestSubAgentCarriedChildTerminated: a child the parent carried across
// its continue-as-new is terminated from outside: the parent's status
// check ends its call with the error result of a terminated child, and
// the other children's answers still come.
func TestSubAgentCarriedChildTerminated(t *testing.T) {
	hs := newHolds("alpha", "beta", "gamma")
	h := newHarness(t, []llm.ScriptedResponse{threeTasks(), answer(text("Gamma is gone."))}, hs.tool())
	run := h.startHolding(hs)
	gamma := run.GetID() + "/task-1-3-t3"
	require.NoError(t, h.c.TerminateWorkflow(context.Background(), gamma, "", "gone for good"))
	hs.release("alpha")
	hs.release("beta")
	res := h.latestResult(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	results := res.Messages[len(res.Messages)-4 : len(res.Messages)-1]
	require.Equal(t, "done: alpha", results[0].Content[0].Text)
	require.Equal(t, "done: beta", results[1].Content[0].Text)
	require.True(t, results[2].IsError)
	require.Equal(t, fmt.Sprintf("Sub-agent helper (workflow %s) ended without an answer: it was terminated", gamma),
		results[2].Content[0].Text)
}

// recordSubAgentContinueMidBatch records a parent that continues as new
// twice while its children hold (the batch carried, results by signal),
// and beta's history as subagent-can-child.<n>.json.
func recordSubAgentContinueMidBatch(t *testing.T) (client.Client, string) {
	hs := newHolds("beta", "gamma")
	h := recording(t, []llm.ScriptedResponse{threeTasks(), answer(text("All three answered."))}, hs.tool())
	run := h.startHolding(hs)
	res := h.twoSeams(hs, run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	saveChain(t, h.c, run.GetID()+"/task-1-2-t2", filepath.Join("..", "testdata", "histories"), "subagent-can-child")
	return h.c, run.GetID()
}

// TestSubAgentsSessionContinuesAsNewMidBatch: a session's run pauses its
// batch across the session's continue-as-new as a run does; each answer
// reaches the run once and the session goes idle after it.
func TestSubAgentsSessionContinuesAsNewMidBatch(t *testing.T) {
	hs := newHolds("beta", "gamma")
	h := newHarness(t, []llm.ScriptedResponse{threeTasks(), answer(text("All three answered."))}, hs.tool())
	h.scripted.Add("child", holdScript())
	in := h.holdInput(true)
	run := h.startSession(agentapi.SessionInput{LoopConfig: in.LoopConfig, ContinueAsNewAfterEvents: 2})
	require.NoError(t, h.c.SignalWorkflow(context.Background(), run.GetID(), "", agentapi.SignalPrompt,
		agentapi.PromptRequest{Text: "split the work"}))
	hs.waitEntered(t, run.GetID(), h.c)
	hs.release("beta")
	hs.release("gamma")
	var ends []string
	for _, e := range h.waitRunEnd(run, 1) {
		if e.Type == agent.EventToolExecutionEnd {
			ends = append(ends, e.ToolCallID+" "+agent.TextOf(e.Result.Content))
		}
	}
	require.ElementsMatch(t, []string{"t1 done: alpha", "t2 done: beta", "t3 done: gamma"}, ends)
}

// TestSubAgentOutlivesNoTerminatedParent: a child started with the
// abandon close policy whose parent is terminated aborts itself at its
// next turn boundary once a signal to its parent has failed, instead of
// spending unattended.
func TestSubAgentOutlivesNoTerminatedParent(t *testing.T) {
	hs := newHolds("solo-1", "solo-2")
	h := newHarness(t, []llm.ScriptedResponse{answer(taskCall("t1", "helper", "solo")), answer(text("unreached"))}, hs.tool())
	h.scripted.Add("child", llm.Script{Reply: func(req llm.Request) llm.ScriptedResponse {
		turns := 0
		for _, m := range req.Messages {
			if m.Role == agent.RoleAssistant {
				turns++
			}
		}
		if turns < 2 {
			return answer(agent.ToolCall(fmt.Sprintf("h%d", turns+1), "hold", map[string]any{"who": fmt.Sprintf("solo-%d", turns+1)}))
		}
		return answer(text("done: solo"))
	}})
	run := h.start(h.holdInput(false))
	require.Equal(t, "solo-1", hs.next(t))
	// The child's first signal (its turn-1 progress) reaches the parent
	// before the parent is terminated: the next one fails.
	child := run.GetID() + "/task-1-1-t1"
	waitEvent(t, h.c, run.GetID(), enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)
	require.NoError(t, h.c.TerminateWorkflow(context.Background(), run.GetID(), "", "gone for good"))
	hs.release("solo-1")
	require.Equal(t, "solo-2", hs.next(t))
	waitEvent(t, h.c, child, enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED)
	hs.release("solo-2")

	res := testenv.Result(t, h.c.GetWorkflow(context.Background(), child, ""), time.Minute)
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	require.Equal(t, int32(3), h.modelCalls.Load(), "the parent's one model call and the child's two: none after the parent was found gone")
}

// TestSubAgentApprovalAcrossRollOver: a child's call waiting for a person
// travels with the batch. The child's request reaches one run of the
// parent, which then continues as new (the request is news); the next run
// has no request of its own, yet the call is pending there
// (waiting_approval), and that run, by its run id, takes the approve
// Update and forwards the decision to the child.
func TestSubAgentApprovalAcrossRollOver(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(taskCall("t1", "helper", "one")), answer(text("approved and done"))}, okTool("risky"))
	h.scripted.Add("child", childScript("risky"))
	in := h.subAgentInput("go", nil, agent.SubAgent{Name: "helper", Description: "risks",
		Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"risky"}})
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"risky"}}
	in.ContinueAsNewAfterEvents = 2
	run := h.start(in)
	id, child := run.GetID(), run.GetID()+"/task-1-1-t1"

	// The run the request reached, and the run after it: the child waits
	// for the person, so no news of it moves the parent on again.
	var asked int
	var runs []string
	require.Eventually(t, func() bool {
		runs = runIDs(t, h.c, id)
		asked = slices.IndexFunc(runs, func(r string) bool { return approvalRequests(t, h.c, id, r) > 0 })
		return asked >= 0 && len(runs) > asked+1
	}, settleTimeout, 50*time.Millisecond, "the request never reached a run that continued as new")
	carrier := runs[len(runs)-1]
	require.Zero(t, approvalRequests(t, h.c, id, carrier), "the run after the request got none of its own")
	st := h.waitState(h.c.GetWorkflow(context.Background(), id, carrier), func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 1 })
	require.Equal(t, agentapi.StatusWaitingApproval, st.Status)
	require.Equal(t, child, st.PendingApprovals[0].SubAgent.WorkflowID)

	handle, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: id, RunID: carrier, UpdateID: "approve-1", UpdateName: agentapi.UpdateApprove,
		Args:         []any{agentapi.ApproveRequest{ToolCallID: "c1", Decision: agent.ApprovalAllow}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	require.NoError(t, handle.Get(context.Background(), nil))
	hist, err := testenv.History(context.Background(), h.c, id, carrier)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(hist.GetEvents(), func(e *historypb.HistoryEvent) bool {
		a := e.GetSignalExternalWorkflowExecutionInitiatedEventAttributes()
		return a.GetSignalName() == agentapi.SignalApprove && a.GetWorkflowExecution().GetWorkflowId() == child
	}), "the run that carried the request forwarded the decision")
	res := h.latestResult(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	m := res.Messages[len(res.Messages)-2]
	require.False(t, m.IsError, m.Content)
	require.Equal(t, "done: one", m.Content[0].Text)
}

// approvalRequests counts the sub-agents' approval requests (not their
// decisions) signalled to a workflow run.
func approvalRequests(t *testing.T, c client.Client, id, runID string) int {
	t.Helper()
	hist, err := testenv.History(context.Background(), c, id, runID)
	require.NoError(t, err)
	n := 0
	for _, e := range hist.GetEvents() {
		a := e.GetWorkflowExecutionSignaledEventAttributes()
		if a.GetSignalName() != agentapi.SignalSubAgent {
			continue
		}
		var m agentapi.SubAgentSignal
		require.NoError(t, json.Unmarshal(a.GetInput().GetPayloads()[0].GetData(), &m))
		if m.Approval != nil && m.Approval.Decision == "" {
			n++
		}
	}
	return n
}
