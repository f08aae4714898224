package workflows

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// maxReasonBytes bounds a deny reason: it becomes the call's result.
const maxReasonBytes = 64 << 10

// callKey names a call of the current message: its id and its position
// (from 1), since calls of one message may share an id.
type callKey struct {
	id  string
	pos int
}

// approval is one call's wait for a person.
type approval struct {
	call agent.Content
	// shared is set when another call of the message has the same id;
	// events and the pending list then carry the position.
	shared   bool
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
func (l *loop) requestApproval(ctx workflow.Context, call agent.Content, key callKey, shared bool, reason string) {
	a := &approval{call: call, shared: shared, reason: reason}
	info := &agent.ApprovalInfo{Reason: reason, Position: a.position(key)}
	if d := l.cfg.Approval.TimeoutDuration(); d > 0 {
		a.deadline = workflow.Now(ctx).Add(d)
		info.Deadline = a.deadline.UnixMilli()
	}
	l.approvals[key] = a
	l.approvalOrder = append(l.approvalOrder, key)
	l.emit(agent.Event{Type: agent.EventApprovalRequest, ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, RawArgs: call.RawArguments, Approval: info})
	l.reportApproval(call, info.Position, reason, info.Deadline, "")
}

// awaitApprovals waits until every named call is decided: by a person, by
// its deadline, or by an abort. Decisions are emitted in call order.
func (l *loop) awaitApprovals(ctx workflow.Context, keys []callKey) {
	// The requests are logged: a watcher reads them from history.
	l.carryAtRest(ctx, false)
	l.setStatus(ctx, agentapi.StatusWaitingApproval)
	var timer workflow.Future
	cancelTimer := func() {}
	for {
		now := workflow.Now(ctx)
		var next time.Time
		undecided := 0
		for _, k := range keys {
			a := l.approvals[k]
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
	for _, k := range keys {
		a := l.approvals[k]
		l.emit(agent.Event{Type: agent.EventApprovalDecision, ToolCallID: k.id, ToolName: a.call.Name,
			Approval: &agent.ApprovalInfo{Decision: a.decision, Reason: a.message, Position: a.position(k)}})
		l.reportApproval(a.call, a.position(k), "", 0, a.decision)
	}
	l.setStatus(ctx, agentapi.StatusRunning)
	l.childApprovalStatus(ctx) // a sub-agent's call may still wait
}

// takeApproval removes a decided call's wait and returns the immediate
// result of a denial, as pi's beforeToolCall block: an error result with
// the reason.
func (l *loop) takeApproval(key callKey) (denied bool, result agent.ToolResult) {
	a := l.approvals[key]
	delete(l.approvals, key)
	for i, x := range l.approvalOrder {
		if x == key {
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
func (l *loop) decide(r agentapi.ApproveRequest) {
	if ca, _ := l.childApprovalFor(r); ca != nil {
		l.forwardApproval(ca.SubAgentApproval, r)
		return
	}
	a := l.approvals[l.approvalFor(r)]
	a.decision, a.message = r.Decision, r.Reason
	if r.Decision == agent.ApprovalAlways {
		l.allowed[a.call.Name] = true
		for _, k := range l.approvalOrder {
			if other := l.approvals[k]; other.decision == "" && other.call.Name == a.call.Name {
				other.decision = agent.ApprovalAlways
			}
		}
	}
	l.wake.SendAsync(struct{}{})
}

// checkApproval validates an approve Update.
func (l *loop) checkApproval(r agentapi.ApproveRequest) error {
	switch r.Decision {
	case agent.ApprovalAllow, agent.ApprovalDeny, agent.ApprovalAlways:
	default:
		return fmt.Errorf("decision %q: want allow, deny or always", r.Decision)
	}
	if len(r.Reason) > maxReasonBytes {
		return fmt.Errorf("reason is %d bytes; the limit is %d", len(r.Reason), maxReasonBytes)
	}
	if ca, err := l.childApprovalFor(r); ca != nil || err != nil {
		return err
	}
	if len(l.approvalOrder) == 0 {
		return errors.New("no tool call is waiting for approval")
	}
	var undecided []int
	for _, k := range l.approvalOrder {
		if k.id == r.ToolCallID && l.approvals[k].decision == "" {
			undecided = append(undecided, k.pos)
		}
	}
	if r.Position == 0 && len(undecided) > 1 {
		return fmt.Errorf("tool calls at positions %v share the id %q: say which with its position", undecided, r.ToolCallID)
	}
	k := l.approvalFor(r)
	a, ok := l.approvals[k]
	if !ok {
		return fmt.Errorf("tool call %s is not waiting for approval; waiting: %s", describeCall(r.ToolCallID, r.Position), l.waitingList())
	}
	if a.decision != "" {
		return fmt.Errorf("tool call %q was already decided (%s)", r.ToolCallID, a.decision)
	}
	return nil
}

// approvalFor finds the wait an approval names: by id and position when
// it gives one and calls of the message share the id, else the first
// undecided wait with the id (the only one, once checkApproval passed),
// else the first with the id.
func (l *loop) approvalFor(r agentapi.ApproveRequest) callKey {
	var first *callKey
	for i, k := range l.approvalOrder {
		if k.id != r.ToolCallID {
			continue
		}
		a := l.approvals[k]
		if r.Position != 0 && a.shared {
			if k.pos == r.Position {
				return k
			}
			continue
		}
		if a.decision == "" {
			return k
		}
		if first == nil {
			first = &l.approvalOrder[i]
		}
	}
	if first != nil {
		return *first
	}
	return callKey{id: r.ToolCallID, pos: r.Position}
}

// position is what events and the pending list say of a call's position:
// it only when its id is shared.
func (a *approval) position(k callKey) int {
	if a.shared {
		return k.pos
	}
	return 0
}

func describeCall(id string, pos int) string {
	if pos != 0 {
		return fmt.Sprintf("%q at position %d", id, pos)
	}
	return fmt.Sprintf("%q", id)
}

// waitingList names the undecided waits in request order, as the error
// for an unknown call always did (ids quoted), positions where ids repeat.
func (l *loop) waitingList() string {
	var names []string
	for _, k := range l.approvalOrder {
		if a := l.approvals[k]; a.decision == "" {
			names = append(names, describeCall(k.id, a.position(k)))
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

// pendingApprovals lists the undecided waits in request order.
func (l *loop) pendingApprovals() []agentapi.PendingApproval {
	out := []agentapi.PendingApproval{}
	for _, k := range l.approvalOrder {
		a := l.approvals[k]
		if a.decision != "" {
			continue
		}
		p := agentapi.PendingApproval{ToolCallID: k.id, ToolName: a.call.Name, Args: a.call.Arguments, Reason: a.reason, Position: a.position(k)}
		if !a.deadline.IsZero() {
			p.Deadline = a.deadline.UnixMilli()
		}
		out = append(out, p)
	}
	return append(out, l.childPendingApprovals()...)
}
