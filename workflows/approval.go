package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
)

// maxReasonBytes bounds a deny reason: it becomes the call's result.
const maxReasonBytes = 64 << 10

// approval is one call's wait for a person.
type approval struct {
	call     agent.Content
	reason   string
	deadline time.Time
	decision string
	message  string
}

// needsApproval says why a call must wait for a person, or "".
func (l *loop) needsApproval(call agent.Content) string {
	if l.allowed[call.Name] {
		return ""
	}
	return l.cfg.Approval.Needs(call, l.tools[call.Name].ReadOnly)
}

// requestApproval records a call's wait and emits approval_request.
func (l *loop) requestApproval(ctx workflow.Context, call agent.Content, reason string) {
	a := &approval{call: call, reason: reason}
	info := &agent.ApprovalInfo{Reason: reason}
	if d := l.cfg.Approval.TimeoutDuration(); d > 0 {
		a.deadline = workflow.Now(ctx).Add(d)
		info.Deadline = a.deadline.UnixMilli()
	}
	l.approvals[call.ID] = a
	l.approvalOrder = append(l.approvalOrder, call.ID)
	l.emit(agent.Event{Type: agent.EventApprovalRequest, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, RawArgs: call.RawArguments, Approval: info})
}

// awaitApprovals waits until every named call is decided: by a person, by
// its deadline, or by an abort. Decisions are emitted in call order.
func (l *loop) awaitApprovals(ctx workflow.Context, ids []string) {
	l.setStatus(ctx, statusWaitingApproval)
	var timer workflow.Future
	cancelTimer := func() {}
	for {
		now := workflow.Now(ctx)
		var next time.Time
		undecided := 0
		for _, id := range ids {
			a := l.approvals[id]
			switch {
			case a.decision != "":
			case l.aborted:
				a.decision, a.message = agent.ApprovalDeny, "Run aborted while the tool call waited for approval"
			case !a.deadline.IsZero() && !now.Before(a.deadline):
				a.decision = agent.ApprovalDeny
				a.message = fmt.Sprintf("No approval within %s: the tool call was blocked", l.cfg.Approval.TimeoutDuration())
			default:
				undecided++
				if !a.deadline.IsZero() && (next.IsZero() || a.deadline.Before(next)) {
					next = a.deadline
				}
			}
		}
		if undecided == 0 {
			break
		}
		if timer == nil && !next.IsZero() {
			tctx, cancel := workflow.WithCancel(ctx)
			timer, cancelTimer = workflow.NewTimer(tctx, next.Sub(now)), cancel
		}
		s := workflow.NewSelector(ctx)
		l.addSignalCases(s)
		s.AddReceive(l.wake, func(c workflow.ReceiveChannel, _ bool) { c.ReceiveAsync(nil) })
		if timer != nil {
			s.AddFuture(timer, func(workflow.Future) { timer = nil })
		}
		s.Select(ctx)
	}
	cancelTimer()
	for _, id := range ids {
		a := l.approvals[id]
		l.emit(agent.Event{Type: agent.EventApprovalDecision, ToolCallID: id, ToolName: a.call.Name,
			Approval: &agent.ApprovalInfo{Decision: a.decision, Reason: a.message}})
	}
	l.setStatus(ctx, statusRunning)
}

// takeApproval removes a decided call's wait and returns the immediate
// result of a denial, as pi's beforeToolCall block: an error result with
// the reason.
func (l *loop) takeApproval(id string) (denied bool, result agent.ToolResult) {
	a := l.approvals[id]
	delete(l.approvals, id)
	for i, x := range l.approvalOrder {
		if x == id {
			l.approvalOrder = append(l.approvalOrder[:i], l.approvalOrder[i+1:]...)
			break
		}
	}
	if a == nil || a.decision != agent.ApprovalDeny {
		return false, agent.ToolResult{}
	}
	msg := a.message
	if msg == "" {
		msg = "Tool execution was denied by a person"
	}
	return true, agent.ErrorResult(msg)
}

// decide applies a person's decision; the validator has checked it.
func (l *loop) decide(r ApproveRequest) {
	a := l.approvals[r.ToolCallID]
	a.decision, a.message = r.Decision, r.Reason
	if r.Decision == agent.ApprovalAlways {
		l.allowed[a.call.Name] = true
		for _, id := range l.approvalOrder {
			if other := l.approvals[id]; other.decision == "" && other.call.Name == a.call.Name {
				other.decision = agent.ApprovalAlways
			}
		}
	}
	l.wake.SendAsync(struct{}{})
}

// checkApproval validates an approve Update.
func (l *loop) checkApproval(r ApproveRequest) error {
	switch r.Decision {
	case agent.ApprovalAllow, agent.ApprovalDeny, agent.ApprovalAlways:
	default:
		return fmt.Errorf("decision %q: want allow, deny or always", r.Decision)
	}
	if len(r.Reason) > maxReasonBytes {
		return fmt.Errorf("reason is %d bytes; the limit is %d", len(r.Reason), maxReasonBytes)
	}
	a, ok := l.approvals[r.ToolCallID]
	if !ok {
		if len(l.approvalOrder) == 0 {
			return errors.New("no tool call is waiting for approval")
		}
		return fmt.Errorf("tool call %q is not waiting for approval; waiting: %q", r.ToolCallID, l.approvalOrder)
	}
	if a.decision != "" {
		return fmt.Errorf("tool call %q was already decided (%s)", r.ToolCallID, a.decision)
	}
	return nil
}

// pendingApprovals lists the undecided waits in request order.
func (l *loop) pendingApprovals() []PendingApproval {
	out := []PendingApproval{}
	for _, id := range l.approvalOrder {
		a := l.approvals[id]
		if a.decision != "" {
			continue
		}
		p := PendingApproval{ToolCallID: id, ToolName: a.call.Name, Args: a.call.Arguments, Reason: a.reason}
		if !a.deadline.IsZero() {
			p.Deadline = a.deadline.UnixMilli()
		}
		out = append(out, p)
	}
	return out
}
