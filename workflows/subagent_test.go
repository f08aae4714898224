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

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// taskCall is a call of the sub-agent tool.
func taskCall(id, profile, prompt string) agent.Content {
	return agent.ToolCall(id, agent.SubAgentTool, map[string]any{"agent": profile, "prompt": prompt})
}

// childScript is a sub-agent's model: its first turn calls the named tool
// (none: no tool), its next answers "done: <its prompt>".
func childScript(toolName string) llm.Script {
	return llm.Script{Reply: func(req llm.Request) llm.ScriptedResponse {
		prompt := req.Messages[0].Content[0].Text
		turns := 0
		for _, m := range req.Messages {
			if m.Role == agent.RoleAssistant {
				turns++
			}
		}
		if turns == 0 && toolName != "" {
			return answer(agent.ToolCall("c1", toolName, map[string]any{}))
		}
		if turns == 0 && strings.HasPrefix(prompt, "delegate:") {
			return answer(taskCall("d1", "deep", strings.TrimPrefix(prompt, "delegate:")))
		}
		return answer(text("done: " + prompt))
	}}
}

// subAgentInput is a run of the scripted parent with one profile, "helper",
// whose model is the script registered as "child".
func (h *harness) subAgentInput(prompt string, limits *agent.SubAgentLimits, profiles ...agent.SubAgent) agentapi.AgentLoopInput {
	in := h.input(prompt)
	if len(profiles) == 0 {
		profiles = []agent.SubAgent{{Name: "helper", Description: "does one thing well", SystemPrompt: "You help.",
			Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"meet"}}}
	}
	in.SubAgents, in.SubAgentLimits = profiles, limits
	return in
}

// barrier is a tool every call of which waits until n calls are in it:
// calls that all return ran at the same time.
func barrier(name string, n int) tools.FuncTool {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	return tool(name, func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		mu.Lock()
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return agent.TextResult("met"), nil
		case <-ctx.Done():
			return agent.ToolResult{}, ctx.Err()
		}
	})
}

// holdTool is a tool whose calls say so on running and then run until
// they are cancelled, saying when on cancelled (when not nil).
func holdTool(name string, running chan<- struct{}, cancelled chan<- time.Time) tools.FuncTool {
	return tool(name, func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		running <- struct{}{}
		<-ctx.Done()
		if cancelled != nil {
			cancelled <- time.Now()
		}
		return agent.ToolResult{}, ctx.Err()
	})
}

// TestSubAgentsFanOutInOneBatch: three task calls of one parallel batch run
// three child workflows at once (their tools meet at a barrier only all
// three reach); each answer is its call's result, with the child's id and
// usage in details, the parent's usage counts the children's, and the
// parent's events are an ordinary tool batch's.
func TestSubAgentsFanOutInOneBatch(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(text("Splitting it up."), taskCall("t1", "helper", "alpha"), taskCall("t2", "helper", "beta"), taskCall("t3", "helper", "gamma")),
		answer(text("All three answered.")),
	}, barrier("meet", 3))
	h.scripted.Add("child", childScript("meet"))
	run := h.start(h.subAgentInput("split the work", nil))
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)

	var childUsage agent.Usage
	results := res.Messages[len(res.Messages)-4 : len(res.Messages)-1]
	for i, want := range []string{"alpha", "beta", "gamma"} {
		m := results[i]
		require.Equal(t, agent.RoleToolResult, m.Role)
		require.Equal(t, fmt.Sprintf("t%d", i+1), m.ToolCallID)
		require.False(t, m.IsError, m.Content)
		require.Equal(t, "done: "+want, m.Content[0].Text)
		var d agentapi.SubAgentDetails
		require.NoError(t, json.Unmarshal(m.Details, &d))
		require.Equal(t, "helper", d.Agent)
		require.Equal(t, fmt.Sprintf("%s/task-1-%d-t%d", run.GetID(), i+1, i+1), d.WorkflowID)
		require.Equal(t, agent.StopReasonStop, d.StopReason)
		require.Equal(t, 2, d.Turns)
		require.NotNil(t, d.Usage)
		require.Positive(t, d.Usage.Input)
		childUsage = childUsage.Add(*d.Usage)

		desc, err := h.c.DescribeWorkflow(context.Background(), d.WorkflowID, d.RunID)
		require.NoError(t, err)
		info := desc.RawResponse.GetWorkflowExecutionInfo()
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, info.GetStatus())
		require.Equal(t, run.GetID(), info.GetParentExecution().GetWorkflowId())
	}
	var own agent.Usage
	for _, m := range res.Messages {
		if m.Role == agent.RoleAssistant && m.Usage != nil {
			own = own.Add(*m.Usage)
		}
	}
	require.Equal(t, own.Input+childUsage.Input, res.Usage.Input)
	require.Equal(t, own.Output+childUsage.Output, res.Usage.Output)

	// An ordinary parallel batch to pi: starts in call order, then each
	// child's progress (its first turn, a partial result), then the ends.
	var kinds []string
	for _, e := range h.events(run) {
		if strings.HasPrefix(string(e.Type), "tool_execution") {
			kinds = append(kinds, string(e.Type)+" "+e.ToolCallID)
		}
		if e.Type == agent.EventToolExecutionUpdate {
			require.Equal(t, "[helper] turn 1\n⚙ meet", agent.TextOf(e.PartialResult.Content))
		}
	}
	require.Len(t, kinds, 9)
	require.Equal(t, []string{"tool_execution_start t1", "tool_execution_start t2", "tool_execution_start t3"}, kinds[:3])
	require.ElementsMatch(t, []string{"tool_execution_update t1", "tool_execution_update t2", "tool_execution_update t3"}, kinds[3:6])
	require.ElementsMatch(t, []string{"tool_execution_end t1", "tool_execution_end t2", "tool_execution_end t3"}, kinds[6:])

	// The model saw the task tool, its profiles listed, and the child at
	// the depth limit was not offered it.
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, req := range h.requests {
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Name)
		}
		if req.SystemPrompt == "You help." {
			require.Equal(t, []string{"meet"}, names)
			continue
		}
		require.Equal(t, []string{agent.SubAgentTool}, names)
		require.Contains(t, req.Tools[0].Description, "- helper: does one thing well")
	}
}

// TestSubAgentFanOutLimit: calls past subAgentLimits.maxFanOut end with an
// error result saying so, and the others run.
func TestSubAgentFanOutLimit(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "one"), taskCall("t2", "helper", "two"), taskCall("t3", "helper", "three")),
		answer(text("ok")),
	}, barrier("meet", 2))
	h.scripted.Add("child", childScript("meet"))
	res := h.result(h.start(h.subAgentInput("go", &agent.SubAgentLimits{MaxFanOut: 2})))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	results := res.Messages[len(res.Messages)-4 : len(res.Messages)-1]
	require.Equal(t, "done: one", results[0].Content[0].Text)
	require.Equal(t, "done: two", results[1].Content[0].Text)
	require.True(t, results[2].IsError)
	require.Contains(t, results[2].Content[0].Text, "at most 2 may run at a time")
}

// TestSubAgentBadArguments: a task call naming no profile fails its
// validation as any tool's call does, with TypeBox's text.
func TestSubAgentBadArguments(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("t1", agent.SubAgentTool, map[string]any{"agent": "nobody", "prompt": "x"})),
		answer(text("ok")),
	})
	res := h.result(h.start(h.subAgentInput("go", nil)))
	m := res.Messages[len(res.Messages)-2]
	require.True(t, m.IsError)
	require.Contains(t, m.Content[0].Text, "Validation failed for tool \"task\"")
}

// TestSubAgentTerminatedChild: a child terminated from outside ends its
// call with an error result naming it, and the parent goes on.
func TestSubAgentTerminatedChild(t *testing.T) {
	started := make(chan struct{}, 1)
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "wait")),
		answer(text("The helper is gone.")),
	}, holdTool("meet", started, nil))
	h.scripted.Add("child", childScript("meet"))
	run := h.start(h.subAgentInput("go", nil))
	<-started
	childID := run.GetID() + "/task-1-1-t1"
	require.NoError(t, h.c.TerminateWorkflow(context.Background(), childID, "", "gone for good"))
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	m := res.Messages[len(res.Messages)-2]
	require.True(t, m.IsError)
	require.Equal(t, fmt.Sprintf("Sub-agent helper (workflow %s) ended without an answer: it was terminated", childID), m.Content[0].Text)
}

// startDeepTree starts a run whose sub-agent "deep" delegates its prompt
// to another "deep" (depth 2), whose call of hold runs until it is
// cancelled; it returns once hold runs. cancelled hears when hold's
// context ended.
func startDeepTree(t *testing.T, harnessFor func(*testing.T, []llm.ScriptedResponse, ...tools.Tool) *harness) (*harness, client.WorkflowRun, <-chan time.Time) {
	running := make(chan struct{}, 1)
	cancelled := make(chan time.Time, 1)
	h := harnessFor(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "deep", "delegate:dig")),
		answer(text("unreached")),
	}, holdTool("hold", running, cancelled))
	h.scripted.Add("deep", llm.Script{Reply: func(req llm.Request) llm.ScriptedResponse {
		prompt := req.Messages[0].Content[0].Text
		if strings.HasPrefix(prompt, "delegate:") {
			return answer(taskCall("d1", "deep", strings.TrimPrefix(prompt, "delegate:")))
		}
		return answer(agent.ToolCall("h1", "hold", map[string]any{}))
	}})
	in := h.subAgentInput("dig deep", &agent.SubAgentLimits{MaxDepth: 2}, agent.SubAgent{
		Name: "deep", Description: "digs", Model: &agent.ModelRef{Provider: "test", ID: "deep"}, Tools: []string{"hold"}})
	run := h.start(in)
	<-running
	return h, run, cancelled
}

// TestSubAgentAbortReachesDescendants: aborting the parent aborts its
// child and the child's child within a second; each call ends with its
// aborted child's result and every workflow of the tree closes.
func TestSubAgentAbortReachesDescendants(t *testing.T) {
	h, run, cancelled := startDeepTree(t, newHarness)
	child := run.GetID() + "/task-1-1-t1"
	grandchild := child + "/task-1-1-d1"

	sent := time.Now()
	handle, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), UpdateName: agentapi.UpdateAbort, Args: []any{agentapi.AbortRequest{Reason: "stop"}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(t, err)
	require.NoError(t, handle.Get(context.Background(), nil))
	require.Less(t, (<-cancelled).Sub(sent), time.Second, "the grandchild's tool learned of the abort too late")
	for _, id := range []string{grandchild, child} {
		require.Eventually(t, func() bool {
			d, err := h.c.DescribeWorkflow(context.Background(), id, "")
			return err == nil && d.RawResponse.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		}, time.Second, 10*time.Millisecond, "%s still runs a second after the abort", id)
		d, err := h.c.DescribeWorkflow(context.Background(), id, "")
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, d.RawResponse.GetWorkflowExecutionInfo().GetStatus(), id)
	}
	res := h.result(run)
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	var m agent.Message
	for _, x := range res.Messages {
		if x.Role == agent.RoleToolResult {
			m = x
		}
	}
	require.True(t, m.IsError)
	require.True(t, strings.HasPrefix(m.Content[0].Text, "Sub-agent deep ended with stopReason aborted"), m.Content[0].Text)
}

// TestSubAgentApprovalsThroughTheParent: two sub-agents' calls that need a
// person wait on the parent's watchers, naming the sub-agent; an approval
// sent to the parent without saying which sub-agent is refused as
// ambiguous; "always" given to the parent for one lets both through.
func TestSubAgentApprovalsThroughTheParent(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "one"), taskCall("t2", "helper", "two")),
		answer(text("both done")),
	}, okTool("risky"))
	h.scripted.Add("child", childScript("risky"))
	in := h.subAgentInput("go", nil, agent.SubAgent{Name: "helper", Description: "risks",
		Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"risky"}})
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"risky"}}
	run := h.start(in)
	st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 2 })
	var children []string
	for _, p := range st.PendingApprovals {
		require.Equal(t, "c1", p.ToolCallID)
		require.Equal(t, "risky", p.ToolName)
		require.NotNil(t, p.SubAgent)
		require.Equal(t, "helper", p.SubAgent.Agent)
		children = append(children, p.SubAgent.WorkflowID)
	}
	require.ElementsMatch(t, []string{run.GetID() + "/task-1-1-t1", run.GetID() + "/task-1-2-t2"}, children)

	approve := func(r agentapi.ApproveRequest) error {
		h, err := h.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{WorkflowID: run.GetID(),
			UpdateName: agentapi.UpdateApprove, Args: []any{r}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return h.Get(context.Background(), nil)
	}
	err := approve(agentapi.ApproveRequest{ToolCallID: "c1", Decision: agent.ApprovalAllow})
	require.ErrorContains(t, err, "say which with workflowId")
	// A child is steered as any run is, with its own id.
	_, err = update(t, h.c, h.c.GetWorkflow(context.Background(), children[1], ""), agentapi.UpdateSteer, agent.UserText("also look at the docs", 0))
	require.NoError(t, err)
	require.NoError(t, approve(agentapi.ApproveRequest{ToolCallID: "c1", WorkflowID: children[0], Decision: agent.ApprovalAlways}))

	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	for _, m := range res.Messages[len(res.Messages)-3 : len(res.Messages)-1] {
		require.False(t, m.IsError, m.Content)
	}
	var requests, decisions int
	for _, e := range h.events(run) {
		switch e.Type {
		case agent.EventApprovalRequest:
			requests++
			require.Equal(t, "helper", e.Approval.SubAgent.Agent)
		case agent.EventApprovalDecision:
			decisions++
			require.Equal(t, agent.ApprovalAlways, e.Approval.Decision)
		}
	}
	require.Equal(t, 2, requests)
	require.Equal(t, 2, decisions)
	steered := testenv.Result(t, h.c.GetWorkflow(context.Background(), children[1], ""), time.Minute)
	require.True(t, slices.ContainsFunc(steered.Messages, func(m agent.Message) bool {
		return m.Role == agent.RoleUser && agent.TextOf(m.Content) == "also look at the docs"
	}), "the steered child took the message")
}

// TestSubAgentsSpendingStopsAtTheParentsBudget: two children, each within
// what the parent has left, together spend past the parent's token limit
// while they run: the parent counts their spending as it happens, stops
// both, and ends with pi-shaped budget events before its next model call.
func TestSubAgentsSpendingStopsAtTheParentsBudget(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "one"), taskCall("t2", "helper", "two")),
		answer(text("unreached")),
	}, barrier("meet", 3)) // never met: the budget stops them first
	h.scripted.Add("child", childScript("meet"))
	in := h.subAgentInput("go", nil, agent.SubAgent{Name: "helper", Description: "reads a lot",
		SystemPrompt: strings.Repeat("context ", 500), // about 1,000 tokens a turn
		Model:        &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"meet"}})
	in.Budget = &agent.Budget{MaxTokens: 1500}
	run := h.start(in)
	res := h.result(run)
	require.Equal(t, agent.StopReasonBudget, res.StopReason)
	require.Contains(t, res.ErrorMessage, "maxTokens 1500")
	require.GreaterOrEqual(t, res.Usage.TotalTokens, int64(2000))
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			require.True(t, m.IsError)
			require.True(t, strings.HasPrefix(m.Content[0].Text, "Sub-agent helper was stopped: Budget exhausted:"), m.Content[0].Text)
		}
	}
	evs := h.events(run)
	last := evs[len(evs)-4:]
	require.Equal(t, agent.EventMessageStart, last[0].Type)
	require.Equal(t, agent.EventMessageEnd, last[1].Type)
	require.Equal(t, agent.StopReasonBudget, last[1].Message.StopReason)
	require.Equal(t, agent.EventTurnEnd, last[2].Type)
	require.Equal(t, agent.EventAgentEnd, last[3].Type)
	require.Equal(t, int32(3), h.modelCalls.Load(), "the parent made one model call, each child one")
}

// TestSubAgentsOutliveTheirParentsWorker: the parent's worker stops while
// its three children run on a task queue of their own; they finish while
// the parent has no worker; a new worker (an empty cache: it replays the
// parent from history) gets each child's result once, and the parent then
// continues as new with them. No child is started twice.
func TestSubAgentsOutliveTheirParentsWorker(t *testing.T) {
	g := newGate()
	started := make(chan struct{}, 3)
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "one"), taskCall("t2", "helper", "two"), taskCall("t3", "helper", "three")),
		answer(text("all answered")),
	}, tool("meet", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		started <- struct{}{}
		return g.tool("meet").Fn(ctx, c)
	}))
	h.scripted.Add("child", childScript("meet"))
	childQueue := h.queue + "-children"
	opts := workflows.WorkerOptions()
	w, err := agentworker.New(agentworker.Options{Client: h.c, TaskQueue: childQueue, WorkerOptions: &opts, Activities: h.acts})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	in := h.subAgentInput("go", nil, agent.SubAgent{Name: "helper", Description: "helps", TaskQueue: childQueue,
		Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"meet"}})
	in.ToolTaskQueue = childQueue // the children's tools run beside them
	in.ContinueAsNewAfterTurns = 1
	run := h.start(in)
	for range 3 {
		<-started
	}
	h.stopWorker()
	close(g.release)
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("%s/task-1-%d-t%d", run.GetID(), i, i)
		require.Eventually(t, func() bool {
			d, err := h.c.DescribeWorkflow(context.Background(), id, "")
			return err == nil && d.RawResponse.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
		}, settleTimeout, 20*time.Millisecond, "%s did not finish while its parent had no worker", id)
	}
	h.startWorker()

	res := testenv.Result(t, h.c.GetWorkflow(context.Background(), run.GetID(), ""), time.Minute)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	var answers []string
	for _, e := range testenv.Events(t, h.c, h.c.GetWorkflow(context.Background(), run.GetID(), "")) {
		if e.Type == agent.EventToolExecutionEnd {
			answers = append(answers, e.ToolCallID+" "+agent.TextOf(e.Result.Content))
		}
	}
	require.ElementsMatch(t, []string{"t1 done: one", "t2 done: two", "t3 done: three"}, answers)

	hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	starts := 0
	for _, e := range hist.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED {
			starts++
		}
	}
	require.Equal(t, 3, starts)
	d, err := h.c.DescribeWorkflow(context.Background(), run.GetID(), "")
	require.NoError(t, err)
	require.NotEqual(t, run.GetRunID(), d.RawResponse.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the parent continued as new")
}

// recordSubAgents records a parent fanning out two sub-agents beside a
// tool, the first sub-agent's call approved "always" through the parent
// (the second's then goes through), and the first child's own history as
// subagent-child.<n>.json.
func recordSubAgents(t *testing.T) (client.Client, string) {
	h := recording(t, []llm.ScriptedResponse{
		answer(text("Two helpers and a check."), taskCall("t1", "helper", "one"), call("q1", "quick"), taskCall("t2", "helper", "two")),
		answer(text("All answered.")),
	}, okTool("risky"), okTool("quick"))
	h.scripted.Add("child", childScript("risky"))
	in := h.subAgentInput("go", nil, agent.SubAgent{Name: "helper", Description: "risks",
		Model: &agent.ModelRef{Provider: "test", ID: "child"}, Tools: []string{"risky"}})
	in.Tools = []string{"quick"}
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"risky"}}
	run := h.start(in)
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 2 })
	child := run.GetID() + "/task-1-1-t1"
	h.updateOnce(run.GetID(), "approve-1", agentapi.UpdateApprove,
		agentapi.ApproveRequest{ToolCallID: "c1", WorkflowID: child, Decision: agent.ApprovalAlways}, nil)
	require.Equal(t, agent.StopReasonStop, h.result(run).StopReason)
	saveChain(t, h.c, child, filepath.Join("..", "testdata", "histories"), "subagent-child")
	return h.c, run.GetID()
}

// recordSubAgentAbort records a parent, its child and grandchild (depth
// 2), the parent aborted while the grandchild's tool runs; the child's
// history (itself a parent) as subagent-abort-child.<n>.json.
func recordSubAgentAbort(t *testing.T) (client.Client, string) {
	h, run, _ := startDeepTree(t, recording)
	h.updateOnce(run.GetID(), "abort-1", agentapi.UpdateAbort, agentapi.AbortRequest{Reason: "enough"}, nil)
	require.Equal(t, agent.StopReasonAborted, h.result(run).StopReason)
	saveChain(t, h.c, run.GetID()+"/task-1-1-t1", filepath.Join("..", "testdata", "histories"), "subagent-abort-child")
	return h.c, run.GetID()
}

// TestSubAgentsSequential: in a sequential batch each task call's child
// ends, result message included, before the next call starts its own.
func TestSubAgentsSequential(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "helper", "first"), taskCall("t2", "helper", "second")),
		answer(text("in order")),
	}, okTool("meet"))
	h.scripted.Add("child", childScript("meet"))
	in := h.subAgentInput("go", nil)
	in.ToolExecution = agent.ExecutionSequential
	run := h.start(in)
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	var order []string
	for _, e := range h.events(run) {
		switch {
		case e.Type == agent.EventToolExecutionStart, e.Type == agent.EventToolExecutionEnd:
			order = append(order, string(e.Type)+" "+e.ToolCallID)
		case e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleToolResult:
			order = append(order, "result "+e.Message.ToolCallID+" "+agent.TextOf(e.Message.Content))
		}
	}
	require.Equal(t, []string{
		"tool_execution_start t1", "tool_execution_end t1", "result t1 done: first",
		"tool_execution_start t2", "tool_execution_end t2", "result t2 done: second",
	}, order)
	first, err := h.c.DescribeWorkflow(context.Background(), run.GetID()+"/task-1-1-t1", "")
	require.NoError(t, err)
	second, err := h.c.DescribeWorkflow(context.Background(), run.GetID()+"/task-1-2-t2", "")
	require.NoError(t, err)
	require.False(t, second.RawResponse.GetWorkflowExecutionInfo().GetStartTime().AsTime().Before(
		first.RawResponse.GetWorkflowExecutionInfo().GetCloseTime().AsTime()), "the second child started before the first ended")
}
