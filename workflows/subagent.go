package workflows

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Sub-agents (not in pi, where a sub-agent is an extension's tool): a run
// with profiles (agent.LoopConfig.SubAgents) offers its model the task
// tool, and each call of it runs a child AgentLoop workflow whose final
// answer is the call's result. To pi's loop it is an ordinary tool: start,
// prepare (validation against the tool's schema and the before hooks, in
// PrepareToolCall), execute, finalize, end, in sequential or parallel
// batches; only the execute stage differs, a child workflow instead of the
// ExecuteToolCall activity, behind the same future (startExecute).
//
// The child's workflow id is the parent's id, the turn, the call's
// position and its id, so a replayed parent issues the same command, and
// no two calls of a workflow id's chain share one (the turn count goes on
// across continue-as-new; models reuse call ids across turns).
//
// The parent is in charge. An abort (or a cancellation from the CLI or
// UI) cancels the children, which abort as a cancelled run does, and
// theirs in turn; the call then ends with what the child returned. A
// parent may continue as new while its children run (subagent_carry.go):
// since subAgentCarryChange children are started with the abandon close
// policy (Temporal applies the policy at a parent's continue-as-new too)
// and send their result by signal, which a later run of the parent takes;
// before it, the policy was RequestCancel and a run continued as new only
// between turns. A parent whose worker dies keeps its children: they run
// on, and their completion waits in the parent's history for the next
// worker, which replays to the same futures and gets it once. A child
// terminated or timed out ends its call with an error result saying so.

// subAgentDetails is the task tool's result details.
type subAgentDetails = agentapi.SubAgentDetails

// subAgentCall reports whether a call is the run's task tool.
func (l *loop) subAgentCall(name string) bool {
	return name == agent.SubAgentTool && l.cfg.SubAgentsOffered()
}

// definedTools are the tools the run defines itself, for the model turn.
func (l *loop) definedTools() []agent.ToolSpec {
	if !l.cfg.SubAgentsOffered() {
		return nil
	}
	return []agent.ToolSpec{l.cfg.SubAgentToolSpec()}
}

// fanOutRefusal says why a sub-agent call may not run beside the
// sub-agent calls started before it and still running, "" when it may.
func (l *loop) fanOutRefusal(call agent.Content) string {
	n := 0
	for _, p := range l.pending {
		if p.call.Name == call.Name {
			n++
		}
	}
	if max := l.cfg.SubAgentLimits.FanOut(); n > max {
		return fmt.Sprintf("Too many sub-agents at once: at most %d may run at a time (subAgentLimits.maxFanOut); "+
			"call the others after these have answered", max)
	}
	return ""
}

// startSubAgent starts the child workflow of a prepared task call and
// returns a future of its ExecuteOutput, as startExecute's.
func (l *loop) startSubAgent(call agent.Content, pos int, args map[string]any) workflow.Future {
	ctx := l.baseCtx
	f, set := workflow.NewFuture(ctx)
	name, _ := args["agent"].(string)
	prompt, _ := args["prompt"].(string)
	profile, ok := l.cfg.SubAgentProfile(name)
	fail := func(text string) workflow.Future {
		set.Set(activities.ExecuteOutput{Result: agent.ErrorResult(text), IsError: true}, nil)
		return f
	}
	switch {
	case !ok:
		return fail(fmt.Sprintf("Sub-agent %q not found", name))
	case strings.TrimSpace(prompt) == "":
		return fail("The task needs a prompt: the sub-agent sees nothing else")
	case l.aborted:
		return fail(fmt.Sprintf("Sub-agent %s was not started: the run was aborted", name))
	}
	budget, why := l.childBudget(profile)
	if why != "" {
		return fail(fmt.Sprintf("Sub-agent %s was not started: %s", name, agent.BudgetErrorMessage(why)))
	}
	parentID := workflow.GetInfo(ctx).WorkflowExecution.ID
	id := fmt.Sprintf("%s/task-%d-%d-%s", parentID, l.turn, pos, call.ID)
	// A child that sends its result survives its parent's continue-as-new
	// (subagent_carry.go).
	v := workflow.GetVersion(ctx, subAgentCarryChange, workflow.DefaultVersion, subAgentTidyVersion)
	sends := v >= 1
	policy := enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL
	if sends {
		policy = enumspb.PARENT_CLOSE_POLICY_ABANDON
		if l.batch != nil {
			l.batch.wakeOnNews = true
			l.batch.tidy = v >= subAgentTidyVersion
		}
	}
	start := workflow.Now(ctx)
	cctx, cancel := workflow.WithCancel(l.abortCtx)
	c := &childCall{key: callKey{call.ID, pos}, agent: name, workflowID: id, cancel: cancel, sendsResult: sends, start: start}
	l.children = append(l.children, c)
	cctx = workflow.WithChildOptions(cctx, workflow.ChildWorkflowOptions{
		WorkflowID:          id,
		TaskQueue:           profile.TaskQueue,
		ParentClosePolicy:   policy,
		WaitForCancellation: true,
		StaticSummary:       childSummary(name, prompt),
	})
	in := agentapi.AgentLoopInput{LoopConfig: l.childConfig(profile, budget), Prompt: prompt,
		Parent: &agentapi.ParentCall{WorkflowID: parentID, ToolCallID: call.ID, Position: pos, Agent: name,
			Start: start.UnixMilli(), Allowed: l.allowedTools(), SendsResult: sends}}
	child := workflow.ExecuteChildWorkflow(cctx, agentapi.AgentLoopWorkflow, in)
	workflow.Go(ctx, func(gctx workflow.Context) {
		out := l.subAgentOutput(gctx, c, child)
		out.Duration = c.took(workflow.Now(gctx))
		l.childEnded(c)
		set.Set(out, nil)
	})
	return f
}

// childConfig is a child's run: the profile's prompt, model and tools; the
// parent's workspace, hooks, approval policy, sandbox and timeouts, so a
// child can do nothing its parent could not; the profiles one level down.
func (l *loop) childConfig(p agent.SubAgent, budget *agent.Budget) agent.LoopConfig {
	c := l.cfg
	cfg := agent.LoopConfig{
		SystemPrompt:       p.SystemPrompt,
		Model:              c.Model,
		ModelOptions:       c.ModelOptions,
		Tools:              p.Tools,
		ToolExecution:      c.ToolExecution,
		BeforeToolCall:     c.BeforeToolCall,
		AfterToolCall:      c.AfterToolCall,
		Approval:           c.Approval,
		Workspace:          c.Workspace,
		ToolTaskQueue:      c.ToolTaskQueue,
		HostStartTimeout:   c.HostStartTimeout,
		Sandbox:            c.Sandbox,
		EventOrderWindow:   c.EventOrderWindow,
		Budget:             budget,
		ConfigDriftTimeout: c.ConfigDriftTimeout,
		ModelRetryTimeout:  c.ModelRetryTimeout,
		SubAgents:          c.SubAgents,
		SubAgentLimits:     c.SubAgentLimits,
		SubAgentDepth:      c.SubAgentDepth + 1,
	}
	if p.Model != nil {
		cfg.Model, cfg.ModelOptions = *p.Model, agent.ModelOptions{}
	}
	if p.ModelOptions != nil {
		cfg.ModelOptions = *p.ModelOptions
	}
	return cfg
}

// childBudget is a child's budget: the profile's, tightened to what the
// parent has left of its cost and token limits, or why the parent has
// nothing left for it.
func (l *loop) childBudget(p agent.SubAgent) (*agent.Budget, string) {
	var b agent.Budget
	if p.Budget != nil {
		b = *p.Budget
	}
	parent := l.cfg.Budget
	if !parent.IsZero() {
		left := parent.Remaining(l.spend())
		if left.CostUSD != nil {
			if *left.CostUSD <= 0 {
				return nil, fmt.Sprintf("$%.4f spent of maxCostUSD %g", l.spend().CostUSD, parent.MaxCostUSD)
			}
			if b.MaxCostUSD == 0 || *left.CostUSD < b.MaxCostUSD {
				b.MaxCostUSD = *left.CostUSD
			}
		}
		if left.Tokens != nil {
			if *left.Tokens <= 0 {
				return nil, fmt.Sprintf("%d tokens spent of maxTokens %d", l.spend().Tokens, parent.MaxTokens)
			}
			if b.MaxTokens == 0 || *left.Tokens < b.MaxTokens {
				b.MaxTokens = *left.Tokens
			}
		}
	}
	if b.IsZero() {
		return nil, ""
	}
	return &b, ""
}

// subAgentOutput waits for a child and makes its end the call's result:
// the final answer's text, or an error naming how the child ended. It runs
// in a coroutine of its own and touches no signal channel.
func (l *loop) subAgentOutput(ctx workflow.Context, c *childCall, child workflow.ChildWorkflowFuture) activities.ExecuteOutput {
	name, id := c.agent, c.workflowID
	details := subAgentDetails{Agent: name, WorkflowID: id}
	var exec workflow.Execution
	if err := child.GetChildWorkflowExecution().Get(ctx, &exec); err != nil {
		return errorOutput(fmt.Sprintf("Sub-agent %s could not start (workflow %s): %s", name, id, failureText(err)), details)
	}
	details.RunID = exec.RunID
	c.runID = exec.RunID
	var res agentapi.AgentLoopResult
	err := child.Get(ctx, &res)
	c.ended = true
	var cancelled *temporal.CanceledError
	if errors.As(err, &cancelled) && cancelled.HasDetails() && cancelled.Details(&res) == nil {
		// An aborted parent cancelled it: it ended as an aborted run does.
		err = nil
	}
	if err != nil {
		return c.noAnswer(childFailure(err), details)
	}
	return l.childAnswer(ctx, c, res, details)
}

// noAnswer is the call's error result for a child that ended without an
// answer, why saying how ("it was terminated").
func (c *childCall) noAnswer(why string, details subAgentDetails) activities.ExecuteOutput {
	return errorOutput(fmt.Sprintf("Sub-agent %s (workflow %s) ended without an answer: %s", c.agent, c.workflowID, why), details)
}

// childAnswer makes a child's result its call's: the final answer's text,
// or an error naming how the child ended. It counts what the child spent.
func (l *loop) childAnswer(ctx workflow.Context, c *childCall, res agentapi.AgentLoopResult, details subAgentDetails) activities.ExecuteOutput {
	name := c.agent
	l.countChildUsage(c, res.Usage)
	if l.parent != nil {
		l.reportUsage()
	}
	details.StopReason, details.Turns, details.Usage = res.StopReason, res.Turns, &res.Usage
	final := finalAnswer(res)
	if refs := foreignRefs(workflow.GetInfo(ctx).WorkflowExecution.ID, []agent.Message{final}); len(refs) > 0 {
		// The answer's large blocks are stored in the child's scope, swept
		// with the child: the parent keeps copies of its own (adopt.go).
		if err := l.adoptContent(fmt.Sprintf("copy %d blobs of a sub-agent's answer into this run's scope", len(refs)), refs).Get(ctx, nil); err != nil {
			return errorOutput(fmt.Sprintf("Sub-agent %s answered, but its answer could not be kept: %s", name, failureText(err)), details)
		}
		final = ownStubs(workflow.GetInfo(ctx).WorkflowExecution.ID, refs, []agent.Message{final})[0]
	}
	result := agent.ToolResult{Content: textBlocks(final), Details: details.JSON()}
	switch res.StopReason {
	case agent.StopReasonStop, agent.StopReasonLength, agent.StopReasonToolUse:
		if len(result.Content) == 0 {
			result.Content = []agent.Content{agent.Text(fmt.Sprintf("Sub-agent %s ended without a text answer", name))}
		}
		return activities.ExecuteOutput{Result: result}
	}
	why := fmt.Sprintf("Sub-agent %s ended with stopReason %s", name, res.StopReason)
	if c.stopped != "" {
		why = fmt.Sprintf("Sub-agent %s was stopped: %s", name, agent.BudgetErrorMessage(c.stopped))
	} else if res.ErrorMessage != "" {
		why += ": " + res.ErrorMessage
	}
	result.Content = append([]agent.Content{agent.Text(why)}, result.Content...)
	return activities.ExecuteOutput{Result: result, IsError: true}
}

// childEnded forgets a child whose result is in: later news of it (a
// signal sent before its end, delivered after) is not counted twice, and
// its calls no longer wait.
func (l *loop) childEnded(c *childCall) {
	l.children = slices.DeleteFunc(l.children, func(x *childCall) bool { return x == c })
	l.childApprovals = slices.DeleteFunc(l.childApprovals, func(x *childApproval) bool { return x.call == c.key })
	l.childApprovalStatus(l.baseCtx)
}

// adoptParent takes what a sub-agent's run knows of its parent's call.
func (l *loop) adoptParent(p *agentapi.ParentCall) {
	if p == nil {
		return
	}
	c := *p
	l.parent = &c
	for _, t := range c.Allowed {
		l.allowed[t] = true
	}
}

// allowedTools are the tools a person allowed "always" here, sorted.
func (l *loop) allowedTools() []string {
	return slices.Sorted(maps.Keys(l.allowed))
}

// finalAnswer is the child's last assistant message.
func finalAnswer(res agentapi.AgentLoopResult) agent.Message {
	for i := len(res.Messages) - 1; i >= 0; i-- {
		if res.Messages[i].Role == agent.RoleAssistant {
			return res.Messages[i]
		}
	}
	return agent.Message{Role: agent.RoleAssistant}
}

// textBlocks are a message's text blocks (stored ones as their stubs).
func textBlocks(m agent.Message) []agent.Content {
	var out []agent.Content
	for _, c := range m.Content {
		if c.Type == agent.ContentText {
			out = append(out, c)
		}
	}
	return out
}

func errorOutput(text string, d subAgentDetails) activities.ExecuteOutput {
	r := agent.ErrorResult(text)
	r.Details = d.JSON()
	return activities.ExecuteOutput{Result: r, IsError: true}
}

// childFailure says how a child ended without a result.
func childFailure(err error) string {
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &terminated):
		return "it was terminated"
	case errors.As(err, &timeout):
		return "it timed out"
	}
	return failureText(err)
}

// childSummary is the child's one line in the Web UI.
func childSummary(name, prompt string) string {
	const max = 100
	line := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(line); len(r) > max {
		line = string(r[:max-1]) + "…"
	}
	return "sub-agent " + name + ": " + line
}
