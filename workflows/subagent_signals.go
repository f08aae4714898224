package workflows

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// A child tells its parent what it spends, what it does and what waits for
// a person, with the subAgent Signal (agentapi.SubAgentSignal), sent from
// its main coroutine; the parent takes it in its main coroutine with the
// other signals, before each decision:
//
//   - Spending: each signal carries the child's usage so far (its own
//     children's included); the parent counts the growth at once, so its
//     usage, ledger and budget follow the children as they spend. A
//     parent whose cost or token limit the spending reaches cancels its
//     running children (they end as aborted runs do) and stops before its
//     next model turn, as any budget stop.
//   - Progress: after each model turn the child sends what it said and
//     called, which the parent records as a partial result of the task
//     call (tool_execution_update, in pi's order among the batch's
//     events); a grandchild's progress goes up indented. At most
//     agentapi.MaxSubAgentProgress such signals per child.
//   - Approvals: a child's request goes up to the top run, whose watchers
//     see it as an approval_request naming the sub-agent; the top run's
//     approve Update (or the child's own) answers it, the decision going
//     straight to the child that waits. A tool allowed "always" on a
//     parent is allowed in every child it starts and in every running
//     child that asks for it.

// childCall is a running sub-agent of this run.
type childCall struct {
	key        callKey
	agent      string
	workflowID string
	cancel     workflow.CancelFunc
	// counted is the child's usage this run has counted so far.
	counted agent.Usage
	// stopped says why this run stopped the child, "" when it did not.
	stopped string
	// runID is its first run's id once it has started; start is when its
	// call's execute started.
	runID string
	start time.Time
	// sendsResult says it was started with the abandon close policy and
	// sends its result by signal (subAgentCarryChange); result is that
	// signal's result once in; ended is set once this run has its end
	// (its future answered, or its result was taken).
	sendsResult bool
	result      *agentapi.SubAgentResult
	ended       bool
	// cancelled says this run or an earlier one asked it to stop (an
	// abort, the budget); once says its batch asks a carried child only
	// once (agentapi.PausedBatch.Tidy).
	cancelled, once bool
	// carried is its execute stage when an earlier workflow run started
	// it (subagent_carry.go), nil otherwise.
	carried *carriedExec
}

// childApproval is a sub-agent's call waiting for a person, seen here.
type childApproval struct {
	agentapi.SubAgentApproval
	call callKey // this run's task call it came through
}

// childOf finds the running child of a task call.
func (l *loop) childOf(id string, pos int) *childCall {
	for _, c := range l.children {
		if c.key.id == id && (pos == 0 || c.key.pos == pos) {
			return c
		}
	}
	return nil
}

// subAgentSignal takes a child's news.
func (l *loop) subAgentSignal(ctx workflow.Context, m agentapi.SubAgentSignal) {
	c := l.childOf(m.ToolCallID, m.Position)
	if c == nil {
		return // the call has ended: its result counted everything
	}
	if l.batch != nil {
		l.batch.news = true
		l.batch.arrived++
	}
	if m.Usage != nil {
		l.countChildUsage(c, *m.Usage)
	}
	if m.Progress != nil {
		l.toolUpdate(agentapi.ToolUpdate{ToolCallID: c.key.id, Position: c.key.pos,
			Results: []agent.ToolResult{*m.Progress}, Offsets: []time.Duration{m.Offset}})
	}
	if l.parent != nil && (m.Progress != nil || m.Usage != nil) {
		// Up to this run's parent: the progress indented, the spending
		// as this run's own.
		if m.Progress != nil {
			l.reportProgress(ctx, indent(*m.Progress))
		} else {
			l.reportUsage()
		}
	}
	if m.Approval != nil {
		l.childApprovalSignal(ctx, c, *m.Approval)
	}
	if m.Result != nil {
		l.childResultSignal(c, *m.Result)
	}
	l.budgetStopChildren()
}

// countChildUsage adds what a child spent since it was last counted.
func (l *loop) countChildUsage(c *childCall, total agent.Usage) {
	l.usage = l.usage.Add(usageSince(total, c.counted))
	c.counted = total
}

// reportUsage tells the parent what this run has spent so far.
func (l *loop) reportUsage() {
	u := l.usage
	l.sendParent(agentapi.SubAgentSignal{Usage: &u})
}

// usageSince is what u has beyond before, never negative.
func usageSince(u, before agent.Usage) agent.Usage {
	d := func(a, b int64) int64 { return max(a-b, 0) }
	f := func(a, b float64) float64 { return max(a-b, 0) }
	return agent.Usage{
		Input: d(u.Input, before.Input), Output: d(u.Output, before.Output),
		CacheRead: d(u.CacheRead, before.CacheRead), CacheWrite: d(u.CacheWrite, before.CacheWrite),
		TotalTokens: d(u.TotalTokens, before.TotalTokens),
		Cost: agent.Cost{Input: f(u.Cost.Input, before.Cost.Input), Output: f(u.Cost.Output, before.Cost.Output),
			CacheRead: f(u.Cost.CacheRead, before.Cost.CacheRead), CacheWrite: f(u.Cost.CacheWrite, before.Cost.CacheWrite),
			Total: f(u.Cost.Total, before.Cost.Total)},
	}
}

// budgetStopChildren cancels the running children once the run's cost or
// token limit is reached: what they would spend next is past it.
func (l *loop) budgetStopChildren() {
	b := l.cfg.Budget
	if b.IsZero() || (b.MaxCostUSD == 0 && b.MaxTokens == 0) {
		return
	}
	money := agent.Budget{MaxCostUSD: b.MaxCostUSD, MaxTokens: b.MaxTokens}
	spent := l.spend()
	why := money.Exhausted(agent.Spend{CostUSD: spent.CostUSD, Tokens: spent.Tokens})
	if why == "" {
		return
	}
	for _, p := range l.pending {
		if c := l.childOf(p.call.ID, p.pos); c != nil && c.stopped == "" {
			c.stopped = why
			l.cancelChild(c)
		}
	}
}

// sendParent signals this run's parent, when it has one. A parent that has
// ended no longer listens: the signal's failure changes nothing.
func (l *loop) sendParent(m agentapi.SubAgentSignal) {
	if l.parent == nil {
		return
	}
	m.ToolCallID, m.Position = l.parent.ToolCallID, l.parent.Position
	l.noteParentGone()
	l.parentSignals = slices.DeleteFunc(l.parentSignals, workflow.Future.IsReady)
	l.parentSignals = append(l.parentSignals,
		workflow.SignalExternalWorkflow(l.baseCtx, l.parent.WorkflowID, "", agentapi.SignalSubAgent, m))
}

// awaitParentSignals waits until the parent has every signal sent to it,
// so that its history holds them before this run's result, as a tool's
// partial results come before its end.
func (l *loop) awaitParentSignals() {
	_ = workflow.Await(l.baseCtx, func() bool {
		for _, f := range l.parentSignals {
			if !f.IsReady() {
				return false
			}
		}
		return true
	})
}

// reportTurn tells the parent what a model turn said and called, and what
// the run has spent.
func (l *loop) reportTurn(ctx workflow.Context, msg agent.Message) {
	if l.parent == nil || (len(msg.ToolCalls()) == 0 && !msg.StopReason.Unanswered()) {
		// The answer itself comes as the call's result.
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] turn %d", l.parent.Agent, l.turn)
	if t := strings.Join(strings.Fields(agent.TextOf(msg.Content)), " "); t != "" {
		b.WriteString(": " + clip(t, 200))
	}
	for _, c := range msg.ToolCalls() {
		b.WriteString("\n⚙ " + callSummary(c.Name, c.Arguments))
	}
	if msg.StopReason.Unanswered() {
		fmt.Fprintf(&b, " (%s)", msg.StopReason)
	}
	l.reportProgress(ctx, agent.TextResult(b.String()))
}

// reportProgress sends a partial result up, with the run's usage, while
// the bound allows; past it, only the usage.
func (l *loop) reportProgress(ctx workflow.Context, r agent.ToolResult) {
	u := l.usage
	m := agentapi.SubAgentSignal{Usage: &u}
	if l.parent.Sent < agentapi.MaxSubAgentProgress {
		l.parent.Sent++
		m.Progress = &r
		m.Offset = workflow.Now(ctx).Sub(time.UnixMilli(l.parent.Start))
	}
	l.sendParent(m)
}

// indent makes a grandchild's progress a line below its parent's.
func indent(r agent.ToolResult) agent.ToolResult {
	text := agent.TextOf(r.Content)
	return agent.TextResult("  " + strings.ReplaceAll(text, "\n", "\n  "))
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// childApprovalSignal takes a child's approval request or decision: a
// request joins the pending list and the event log, naming the sub-agent,
// and goes on up; a tool allowed "always" here is allowed at once.
func (l *loop) childApprovalSignal(ctx workflow.Context, c *childCall, ap agentapi.SubAgentApproval) {
	i := slices.IndexFunc(l.childApprovals, func(x *childApproval) bool {
		return x.WorkflowID == ap.WorkflowID && x.ToolCallID == ap.ToolCallID && x.Position == ap.Position
	})
	ref := &agent.SubAgentRef{Agent: ap.Agent, WorkflowID: ap.WorkflowID}
	if ap.Decision != "" {
		if i < 0 {
			return
		}
		l.childApprovals = slices.Delete(l.childApprovals, i, i+1)
		l.childApprovalStatus(ctx)
		l.emit(agent.Event{Type: agent.EventApprovalDecision, ToolCallID: ap.ToolCallID, ToolName: ap.ToolName,
			Approval: &agent.ApprovalInfo{Decision: ap.Decision, Position: ap.Position, SubAgent: ref}})
		l.sendParent(agentapi.SubAgentSignal{Approval: &ap})
		return
	}
	if i >= 0 {
		return
	}
	l.childApprovals = append(l.childApprovals, &childApproval{SubAgentApproval: ap, call: c.key})
	l.emit(agent.Event{Type: agent.EventApprovalRequest, ToolCallID: ap.ToolCallID, ToolName: ap.ToolName, Args: ap.Args,
		Approval: &agent.ApprovalInfo{Reason: ap.Reason, Deadline: ap.Deadline, Position: ap.Position, SubAgent: ref}})
	if l.allowed[ap.ToolName] {
		l.forwardApproval(ap, agentapi.ApproveRequest{Decision: agent.ApprovalAlways})
		return
	}
	l.childApprovalStatus(ctx)
	l.sendParent(agentapi.SubAgentSignal{Approval: &ap})
}

// reportApproval tells the parent of this run's own approval request or
// decision.
func (l *loop) reportApproval(call agent.Content, pos int, reason string, deadline int64, decision string) {
	if l.parent == nil {
		return
	}
	l.sendParent(agentapi.SubAgentSignal{Approval: &agentapi.SubAgentApproval{
		Agent: l.parent.Agent, WorkflowID: workflow.GetInfo(l.baseCtx).WorkflowExecution.ID,
		ToolCallID: call.ID, Position: pos, ToolName: call.Name, Args: call.Arguments,
		Reason: reason, Deadline: deadline, Decision: decision,
	}})
}

// childApprovalFor finds the sub-agent's waiting call an approval names:
// by workflow id when it gives one, else by tool call id when this run
// has no undecided call of that id and exactly one sub-agent call has it.
func (l *loop) childApprovalFor(r agentapi.ApproveRequest) (*childApproval, error) {
	if r.WorkflowID == "" {
		for _, k := range l.approvalOrder {
			if k.id == r.ToolCallID && l.approvals[k].decision == "" {
				return nil, nil // the run's own
			}
		}
	}
	var found []*childApproval
	for _, ca := range l.childApprovals {
		if ca.ToolCallID == r.ToolCallID && (r.WorkflowID == "" || ca.WorkflowID == r.WorkflowID) &&
			(r.Position == 0 || ca.Position == 0 || ca.Position == r.Position) {
			found = append(found, ca)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		ids := make([]string, 0, len(found))
		for _, ca := range found {
			ids = append(ids, ca.WorkflowID)
		}
		return nil, fmt.Errorf("sub-agents %q each wait with tool call %q: say which with workflowId", ids, r.ToolCallID)
	case r.WorkflowID != "":
		return nil, fmt.Errorf("no sub-agent call %q of workflow %q is waiting for approval", r.ToolCallID, r.WorkflowID)
	}
	return nil, nil
}

// forwardApproval sends a decision to the sub-agent whose call waits; an
// "always" is this run's rule too, for its later calls and children.
func (l *loop) forwardApproval(ap agentapi.SubAgentApproval, r agentapi.ApproveRequest) {
	if r.Decision == agent.ApprovalAlways {
		l.allowed[ap.ToolName] = true
	}
	r.ToolCallID, r.Position, r.WorkflowID = ap.ToolCallID, ap.Position, ""
	workflow.SignalExternalWorkflow(l.baseCtx, ap.WorkflowID, "", agentapi.SignalApprove, r)
	if r.Decision != agent.ApprovalAlways {
		return
	}
	for _, other := range l.childApprovals {
		if other.ToolName == ap.ToolName && !(other.WorkflowID == ap.WorkflowID && other.ToolCallID == ap.ToolCallID) {
			o := r
			o.ToolCallID, o.Position = other.ToolCallID, other.Position
			workflow.SignalExternalWorkflow(l.baseCtx, other.WorkflowID, "", agentapi.SignalApprove, o)
		}
	}
}

// childPendingApprovals are the sub-agents' waiting calls, for the state.
func (l *loop) childPendingApprovals() []agentapi.PendingApproval {
	var out []agentapi.PendingApproval
	for _, ca := range l.childApprovals {
		out = append(out, agentapi.PendingApproval{ToolCallID: ca.ToolCallID, ToolName: ca.ToolName, Args: ca.Args,
			Reason: ca.Reason, Deadline: ca.Deadline, Position: ca.Position,
			SubAgent: &agent.SubAgentRef{Agent: ca.Agent, WorkflowID: ca.WorkflowID}})
	}
	return out
}
