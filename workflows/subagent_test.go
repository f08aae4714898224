package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
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

		desc, err := h.c.DescribeWorkflowExecution(context.Background(), d.WorkflowID, d.RunID)
		require.NoError(t, err)
		info := desc.GetWorkflowExecutionInfo()
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
	}, tool("meet", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return agent.ToolResult{}, ctx.Err()
	}))
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

// TestSubAgentAbortReachesDescendants: aborting the parent aborts its
// child and the child's child within a second; each call ends with its
// aborted child's result and every workflow of the tree closes.
func TestSubAgentAbortReachesDescendants(t *testing.T) {
	running := make(chan struct{}, 1)
	cancelled := make(chan time.Time, 1)
	h := newHarness(t, []llm.ScriptedResponse{
		answer(taskCall("t1", "deep", "delegate:dig")),
		answer(text("unreached")),
	}, tool("hold", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		running <- struct{}{}
		<-ctx.Done()
		cancelled <- time.Now()
		return agent.ToolResult{}, ctx.Err()
	}))
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
			d, err := h.c.DescribeWorkflowExecution(context.Background(), id, "")
			return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		}, time.Second, 10*time.Millisecond, "%s still runs a second after the abort", id)
		d, err := h.c.DescribeWorkflowExecution(context.Background(), id, "")
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, d.GetWorkflowExecutionInfo().GetStatus(), id)
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
