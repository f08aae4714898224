package workflows

import (
	"errors"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// A parent continues as new while its sub-agents run. Children that run
// for hours send many subAgent Signals (progress, usage, approvals), so a
// parent's history must be able to roll over in the middle of a tool
// batch, not only between turns:
//
//   - When the history needs it (the server suggests it, or the run's
//     ContinueAsNewAfterEvents is reached) while a parallel batch waits on
//     sub-agent children alone, the run pauses the batch and continues as
//     new carrying it (agentapi.PausedBatch): the results of the calls
//     that ended, the running children, their usage counted so far and
//     their calls waiting for a person. The assistant message, the event
//     log's position and the rest travel in the carry as between turns.
//     It pauses only when every event of the batch has been emitted
//     (none held back for pi's order, which the order window bounds) and
//     no activity runs: a batch whose other calls run tools or finalize
//     waits for them to end first, since an activity's result cannot
//     reach another workflow run; a sequential batch never pauses.
//   - Children started since subAgentCarryChange have the abandon close
//     policy: Temporal applies a child's policy when its parent's run
//     closes, continued as new included (temporalio/temporal#373 and
//     #3666), so RequestCancel would cancel them at the roll-over. An
//     abort still cancels each child: those of this run through their
//     context, carried ones by RequestCancelExternalWorkflow.
//   - The new run holds no future of a carried child, so each such child
//     sends its result as its last subAgent Signal to the parent's
//     workflow id (agentapi.SubAgentResult), before it completes; the run
//     takes a child's result once (the call ends when it is taken, and a
//     repeat finds no running child). A run that holds a child's future
//     keeps the future's answer and only notes the signal, and does not
//     pause while a child's signal is in but its future is not.
//   - A carried child lost for good (terminated, timed out, failed: none
//     of its code runs to signal) is found by a status check of the
//     carried children every SubAgentLimits.CheckInterval (10 minutes by
//     default: one timer and one local activity, about six history events,
//     per interval and per parent, whatever the number of children); its
//     call ends with the error result of a child that ended without an
//     answer. A child completed whose result has not come by the next
//     check ends its call the same way.
//
// An abandoned child outlives a parent terminated from outside, which
// the close policy no longer cancels: such a child aborts itself at its
// next turn boundary once a signal it sent its parent has failed for want
// of a running parent (parentGone). It costs no command: a child signals
// its parent after each turn that calls tools. A child inside one long
// tool call learns it only when the call ends.
const subAgentCarryChange = "subagent-continue-mid-batch"

// subAgentTidyVersion is subAgentCarryChange's version at which a batch
// with children spends no history on repeats: a carried child is asked to
// stop once over the whole batch (its RequestCancelExternal costs two
// events, and an abort after a budget stop, or a run resumed after an
// abort at the hand-over, asked again), and a pausing batch leaves its
// timers to the continue-as-new instead of cancelling them. The version is
// taken where the batch's children start, at no extra cost; the runs that
// resume the batch learn it from the carry (agentapi.PausedBatch.Tidy),
// with no marker of their own.
const subAgentTidyVersion = 2

// carriedExec is the execute stage of a child started by an earlier
// workflow run: its result arrives by signal, or the status check ends it.
type carriedExec struct {
	future workflow.Future
	set    workflow.Settable
	// closed counts the status checks that found the child ended without
	// its result here.
	closed int
}

// pauseBatchNow says whether the batch should pause for a continue-as-new
// now: the history needs rolling over, and every call still running is a
// started sub-agent that sends its result and has not ended here.
func (l *loop) pauseBatchNow(ctx workflow.Context, b *batch) bool {
	if !b.news || len(b.held) > 0 || l.aborted || l.cancelled || !l.historyFull(ctx) {
		return false
	}
	running := 0
	for _, c := range b.chains {
		if c.done != nil {
			continue
		}
		running++
		if c.exec == nil || c.fin != nil || c.lookup != nil || !l.subAgentCall(c.call.Name) {
			return false
		}
		ch := l.childOf(c.call.ID, c.index+1)
		if ch == nil || !ch.sendsResult || ch.runID == "" || ch.ended || ch.result != nil {
			return false
		}
	}
	return running > 0
}

// historyFull says whether this workflow run's history should roll over.
func (l *loop) historyFull(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	if info.GetContinueAsNewSuggested() {
		return true
	}
	n := l.continueAfterEvents
	return n > 0 && info.GetCurrentHistoryLength() >= n
}

// pauseBatch hands the batch over: the ended calls' results and the
// running calls' chains. The children's own state is read when the carry
// is built (carryChildren), after the last signals are in.
func (l *loop) pauseBatch(b *batch, done []*finalized) *agentapi.PausedBatch {
	p := &agentapi.PausedBatch{Start: b.start.UnixMilli(), Done: make([]*agentapi.DoneCall, len(done)), Tidy: b.tidy}
	for _, c := range b.chains {
		if c.done != nil {
			done[c.index] = c.done
			continue
		}
		// pauseBatchNow found the running child of each running chain.
		id := ""
		if ch := l.childOf(c.call.ID, c.index+1); ch != nil {
			id = ch.workflowID
		}
		p.Children = append(p.Children, agentapi.CarriedChild{Index: c.index, Args: c.args, Progress: c.progress, WorkflowID: id})
	}
	for i, f := range done {
		if f != nil {
			p.Done[i] = &agentapi.DoneCall{Result: f.result, IsError: f.isError}
		}
	}
	return p
}

// carryChildren fills a paused batch's children with what this run knows
// of them now, and an abort that came as the run handed over.
func (l *loop) carryChildren(p *agentapi.PausedBatch) {
	if l.aborted {
		p.Aborted = l.abortReason
	}
	for i := range p.Children {
		cc := &p.Children[i]
		ch := l.childByWorkflow(cc.WorkflowID)
		if ch == nil {
			continue // cannot happen: a child ends here only in a batch
		}
		cc.Agent, cc.RunID, cc.Start = ch.agent, ch.runID, ch.start.UnixMilli()
		cc.Counted, cc.Stopped, cc.Result, cc.Cancelled = ch.counted, ch.stopped, ch.result, ch.cancelled
		for _, ca := range l.childApprovals {
			if ca.call == ch.key {
				cc.Approvals = append(cc.Approvals, ca.SubAgentApproval)
			}
		}
	}
}

// restoreChildren takes over the children of a paused batch, before any
// signal is read: a child's result may already wait in the channel.
func (l *loop) restoreChildren(p *agentapi.PausedBatch) {
	calls := l.lastAssistant.ToolCalls()
	for _, cc := range p.Children {
		if cc.Index < 0 || cc.Index >= len(calls) {
			continue // cannot happen: the carry's message has the calls
		}
		call := calls[cc.Index]
		key := callKey{call.ID, cc.Index + 1}
		f, set := workflow.NewFuture(l.baseCtx)
		id := cc.WorkflowID
		ch := &childCall{key: key, agent: cc.Agent, workflowID: id, runID: cc.RunID, sendsResult: true,
			start: time.UnixMilli(cc.Start), counted: cc.Counted, stopped: cc.Stopped, result: cc.Result,
			carried: &carriedExec{future: f, set: set}, cancelled: cc.Cancelled || cc.Stopped != "", once: p.Tidy}
		ch.cancel = func() { workflow.RequestCancelExternalWorkflow(l.baseCtx, id, "") }
		l.children = append(l.children, ch)
		l.pending = append(l.pending, runningCall{call: call, pos: cc.Index + 1})
		for _, ap := range cc.Approvals {
			l.childApprovals = append(l.childApprovals, &childApproval{SubAgentApproval: ap, call: key})
		}
	}
}

// resumeBatch goes on with a batch the previous workflow run paused.
func (l *loop) resumeBatch(ctx workflow.Context, p *agentapi.PausedBatch) toolBatch {
	calls := l.lastAssistant.ToolCalls()
	done := make([]*finalized, len(calls))
	for i, d := range p.Done {
		if d != nil && i < len(calls) {
			done[i] = &finalized{call: calls[i], result: d.Result, isError: d.IsError}
		}
	}
	b := &batch{start: time.UnixMilli(p.Start), window: l.cfg.OrderWindow(), wakeOnNews: true, tidy: p.Tidy}
	for _, cc := range p.Children {
		ch := l.childByWorkflow(cc.WorkflowID)
		if ch == nil || ch.carried == nil {
			continue
		}
		b.chains = append(b.chains, &chain{preparedCall: preparedCall{index: cc.Index, call: calls[cc.Index], args: cc.Args},
			exec: ch.carried.future, progress: cc.Progress})
	}
	l.batch = b
	if p.Aborted != "" {
		l.abort(p.Aborted)
	}
	// Carried children's calls that wait for a person (visibility.go).
	l.childApprovalStatus(ctx)
	for _, ch := range slices.Clone(l.children) {
		// Results that came with the carry, or while the run resolved.
		l.takeResult(ch)
	}
	if paused := l.runBatch(ctx, b, done); paused != nil {
		return toolBatch{paused: paused}
	}
	return l.batchResults(ctx, done)
}

// childByWorkflow finds a running child by its workflow id.
func (l *loop) childByWorkflow(id string) *childCall {
	for _, c := range l.children {
		if c.workflowID == id {
			return c
		}
	}
	return nil
}

// childResultSignal takes a child's result signal: a child this run
// holds the future of ends by it, and only a carried child's call ends
// here, in a batch (between two workflow runs it travels in the carry).
func (l *loop) childResultSignal(c *childCall, r agentapi.SubAgentResult) {
	if c.ended || c.result != nil {
		return
	}
	c.result = &r
	if l.batch != nil {
		l.takeResult(c)
	}
}

// takeResult ends a carried child's call with the result it sent, once.
func (l *loop) takeResult(c *childCall) {
	if c.carried == nil || c.ended || c.result == nil {
		return
	}
	c.ended = true
	r := *c.result
	res := agentapi.AgentLoopResult{Messages: []agent.Message{r.Answer}, StopReason: r.StopReason,
		ErrorMessage: r.ErrorMessage, Turns: r.Turns, Usage: r.Usage}
	details := subAgentDetails{Agent: c.agent, WorkflowID: c.workflowID, RunID: r.RunID}
	if details.RunID == "" {
		details.RunID = c.runID
	}
	workflow.Go(l.baseCtx, func(gctx workflow.Context) {
		out := l.childAnswer(gctx, c, res, details)
		l.endCarried(gctx, c, out)
	})
}

// took is how long a child's call ran: until the child ended by its own
// clock when its result signal says (SubAgentResult.Ended), else until
// now. A parent whose worker was down while its children ended sees their
// ends only when a worker comes back: held as that late, they would wait
// out the order window, and the batch could not pause meanwhile.
func (c *childCall) took(now time.Time) time.Duration {
	d := now.Sub(c.start)
	if c.result != nil && c.result.Ended > 0 && c.result.Ended < d {
		return c.result.Ended
	}
	return d
}

// endCarried sets a carried child's execute result.
func (l *loop) endCarried(ctx workflow.Context, c *childCall, out activities.ExecuteOutput) {
	out.Duration = c.took(workflow.Now(ctx))
	l.childEnded(c)
	c.carried.set.Set(out, nil)
}

// cancelChildren asks the children to stop (an abort): this run's through
// their context, which the abort has cancelled; carried ones by command,
// no context of this run reaching them.
func (l *loop) cancelChildren() {
	for _, c := range l.children {
		switch {
		case c.carried == nil:
			c.cancelled = true
		case !c.ended:
			l.cancelChild(c)
		}
	}
}

// cancelChild asks a child to stop, once when its batch is tidy. Asking
// again changes nothing for a child of this run (its context is cancelled
// already) and costs a carried child's parent two history events.
func (l *loop) cancelChild(c *childCall) {
	if c.cancelled && (c.carried == nil || c.once) {
		return
	}
	c.cancelled = true
	c.cancel()
}

// defaultChildCheck is how often a run looks at the children it carried
// when SubAgentLimits.CheckInterval does not say.
const defaultChildCheck = 10 * time.Minute

// checkCarried looks, at a modest rate, at the carried children that have
// not ended: a timer, then one local activity for all of them.
func (l *loop) checkCarried(ctx workflow.Context, b *batch) {
	if b.check != nil && !b.check.IsReady() {
		return
	}
	if b.check != nil && b.checking {
		var out activities.DescribeChildrenOutput
		if err := b.check.Get(ctx, &out); err == nil {
			l.closedChildren(ctx, out)
		}
		b.check = nil
	}
	var ids []string
	for _, c := range l.children {
		if c.carried != nil && !c.ended {
			ids = append(ids, c.workflowID)
		}
	}
	switch {
	case len(ids) == 0:
		b.endCheck()
	case b.check != nil:
		// The timer fired.
		b.check = workflow.ExecuteLocalActivity(l.localCtx(ctx), a.DescribeChildren, activities.DescribeChildrenInput{WorkflowIDs: ids})
		b.checking, b.cancelCheck = true, nil
	default:
		tctx, cancel := workflow.WithCancel(ctx)
		b.check, b.checking, b.cancelCheck = workflow.NewTimer(tctx, l.cfg.SubAgentLimits.CheckEvery(defaultChildCheck)), false, cancel
		b.checkMade = workflow.GetInfo(ctx).GetCurrentHistoryLength()
	}
}

// endCheck stops the carried children's check.
func (b *batch) endCheck() {
	if b.cancelCheck != nil {
		b.cancelCheck()
	}
	b.check, b.checking, b.cancelCheck = nil, false, nil
}

// closedChildren ends the calls of carried children that ended without
// their result reaching this run.
func (l *loop) closedChildren(ctx workflow.Context, out activities.DescribeChildrenOutput) {
	for _, s := range out.Children {
		c := l.childByWorkflow(s.WorkflowID)
		if c == nil || c.carried == nil || c.ended {
			continue
		}
		why := ""
		switch s.Status {
		case activities.ChildRunning:
			continue
		case activities.ChildTerminated:
			why = "it was terminated"
		case activities.ChildTimedOut:
			why = "it timed out"
		case activities.ChildFailed:
			why = "it failed"
		case activities.ChildNotFound:
			why = "its workflow was not found"
		default:
			// Completed or cancelled: its result signal came before its
			// end, so it is here by the next check.
			if c.carried.closed++; c.carried.closed < 2 {
				continue
			}
			why = "it ended, but its result never reached this run"
		}
		c.ended = true
		details := subAgentDetails{Agent: c.agent, WorkflowID: c.workflowID, RunID: c.runID}
		l.endCarried(ctx, c, c.noAnswer(why, details))
	}
}

// noteParentGone notes that a signal to the parent found no running
// parent: terminated or timed out, since a parent that ends otherwise
// waits for its children first.
func (l *loop) noteParentGone() {
	for _, f := range l.parentSignals {
		var gone *temporal.UnknownExternalWorkflowExecutionError
		if f.IsReady() && errors.As(f.Get(l.baseCtx, nil), &gone) {
			l.parentGone = true
		}
	}
}

// abortIfParentGone aborts a child started with the abandon close policy
// whose parent is gone, before its next model turn: nobody waits for its
// answer.
func (l *loop) abortIfParentGone() {
	if l.parent == nil || !l.parent.SendsResult || l.aborted {
		return
	}
	if l.noteParentGone(); l.parentGone {
		l.abort("the parent workflow " + l.parent.WorkflowID + " is gone")
	}
}

// sendResult tells the parent how this run ended, when it asked
// (agentapi.ParentCall.SendsResult).
func (l *loop) sendResult(ctx workflow.Context) {
	if l.parent == nil || !l.parent.SendsResult {
		return
	}
	answer := agent.Message{Role: agent.RoleAssistant, Content: textBlocks(l.lastAssistant)}
	l.sendParent(agentapi.SubAgentSignal{Result: &agentapi.SubAgentResult{
		RunID: workflow.GetInfo(ctx).FirstRunID, StopReason: l.stopReason, ErrorMessage: l.errorMessage,
		Turns: l.turn, Usage: l.usage, Answer: answer, Ended: workflow.Now(ctx).Sub(time.UnixMilli(l.parent.Start)),
	}})
}
