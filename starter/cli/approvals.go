package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// approvals is the chat's queue of calls waiting for the person at the
// terminal, asked one at a time in the order the run asked. A call leaves
// the queue when it is answered here, when an "always" answered here
// covers it (the run allows every waiting call of that tool), or when its
// approval_decision arrives (decided elsewhere, timed out, aborted): so no
// prompt stays up for a call that no longer waits, and a "y" never goes to
// the model.
type approvals struct {
	waiting []agentapi.PendingApproval
	asking  bool // the first waiting call's prompt is shown
	// always are the tools answered "always" here: a request of theirs
	// that arrives after the answer was decided by it.
	always map[string]bool
}

func (q *approvals) add(p agentapi.PendingApproval) {
	if q.always[p.ToolName] {
		return
	}
	for _, w := range q.waiting {
		if sameCall(w, p) {
			return
		}
	}
	q.waiting = append(q.waiting, p)
}

// drop removes the calls keep says no to; it reports whether the call
// being asked was one of them.
func (q *approvals) drop(gone func(agentapi.PendingApproval) bool) (wasAsked bool) {
	var left []agentapi.PendingApproval
	for i, w := range q.waiting {
		if gone(w) {
			wasAsked = wasAsked || (i == 0 && q.asking)
			continue
		}
		left = append(left, w)
	}
	q.waiting = left
	if wasAsked {
		q.asking = false
	}
	return wasAsked
}

// pendingOf is an approval_request event as the queue keeps it.
func pendingOf(ev agent.Event) agentapi.PendingApproval {
	p := agentapi.PendingApproval{ToolCallID: ev.ToolCallID, ToolName: ev.ToolName, Args: ev.Args}
	if ev.Approval != nil {
		p.Reason, p.Deadline, p.Position = ev.Approval.Reason, ev.Approval.Deadline, ev.Approval.Position
		p.SubAgent = ev.Approval.SubAgent
	}
	return p
}

// sameCall says whether two waits are one call: its id, position and, for
// a sub-agent's call, its workflow.
func sameCall(a, b agentapi.PendingApproval) bool {
	return a.ToolCallID == b.ToolCallID && a.Position == b.Position && subAgentID(a) == subAgentID(b)
}

// subAgentID is the workflow of a sub-agent's waiting call, "" for the
// run's own.
func subAgentID(p agentapi.PendingApproval) string {
	if p.SubAgent == nil {
		return ""
	}
	return p.SubAgent.WorkflowID
}

// approvalPosition is the position an approval event gives its call (only
// where calls of one message share the id).
func approvalPosition(ev agent.Event) int {
	if ev.Approval == nil {
		return 0
	}
	return ev.Approval.Position
}

// approvalEvent updates the queue from the run's approval events.
func (e *env) approvalEvent(q *approvals, ev agent.Event) {
	switch ev.Type {
	case agent.EventApprovalRequest:
		q.add(pendingOf(ev))
	case agent.EventApprovalDecision:
		if q.drop(func(p agentapi.PendingApproval) bool { return sameCall(p, pendingOf(ev)) }) {
			fmt.Fprintf(e.out, "\n       (%s %s was decided elsewhere: %s)\n", ev.ToolName, ev.ToolCallID, ev.Approval.Decision)
		}
	}
}

// askNext shows the prompt of the first waiting call, if none is shown.
func (e *env) askNext(q *approvals, workspace string) {
	if q.asking || len(q.waiting) == 0 {
		return
	}
	p := q.waiting[0]
	q.asking = true
	color := e.colors.reset != "" // a terminal, and NO_COLOR not set (terminal.go)
	title := fmt.Sprintf("Allow %s (%s)?", p.ToolName, p.ToolCallID)
	if p.SubAgent != nil {
		title = fmt.Sprintf("Allow %s (%s) of sub-agent %s?", p.ToolName, p.ToolCallID, p.SubAgent.Agent)
	}
	if color {
		title = colorBold + title + colorReset
	}
	fmt.Fprintf(e.out, "%s %s\n%s\n[y]es / [n]o / [a]lways %s, then an optional reason: ", title, p.Reason, describeCall(p, workspace, color), p.ToolName)
}

// answerAsked sends the person's answer to the call being asked and takes
// from the queue what the answer decided; it reports whether the answer
// was sent.
func (e *env) answerAsked(ctx context.Context, id string, q *approvals, line string) bool {
	p := q.waiting[0]
	decision := e.answer(ctx, id, agentapi.ApproveRequest{ToolCallID: p.ToolCallID, Position: p.Position, WorkflowID: subAgentID(p)}, line)
	q.asking = false
	if decision == "" {
		// Not sent: the call is asked again (its approval_decision
		// takes it away if it no longer waits).
		return false
	}
	q.drop(func(w agentapi.PendingApproval) bool {
		return sameCall(w, p) || (decision == agent.ApprovalAlways && w.ToolName == p.ToolName)
	})
	if n := len(q.waiting); decision == agent.ApprovalAlways {
		if q.always == nil {
			q.always = map[string]bool{}
		}
		q.always[p.ToolName] = true
		fmt.Fprintf(e.out, "       %s allowed for the rest of the session (%d other call(s) still wait)\n", p.ToolName, n)
	}
	return true
}

// resumePending seeds the queue with the calls that wait already: a chat
// that comes back to a session asks them again.
func resumePending(q *approvals, st agentapi.RunState) {
	for _, p := range st.PendingApprovals {
		q.add(p)
	}
}

// decisionWord maps a typed answer to a decision; "" for none of them.
func decisionWord(word string) string {
	return map[string]string{"y": agent.ApprovalAllow, "yes": agent.ApprovalAllow, "n": agent.ApprovalDeny, "no": agent.ApprovalDeny,
		"a": agent.ApprovalAlways, "always": agent.ApprovalAlways}[strings.ToLower(word)]
}
