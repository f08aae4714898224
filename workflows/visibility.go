package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agentapi"
)

// subAgentWaitChange guards the status of a run whose sub-agents' calls
// wait for a person (childApprovalStatus): histories from before it kept
// such a run "running", and upserted no AgentStatus for it.
const subAgentWaitChange = "subagent-approval-status"

// The search attributes (AgentStatus, AgentModel, AgentTurns, AgentCost)
// are agentapi's.

// setStatus records a status change: in the state, in the Web UI's current
// details and, when the worker allows it, in the search attributes. Only
// changes are upserted, so a turn costs no extra history event.
func (l *loop) setStatus(ctx workflow.Context, status string) {
	changed := status != l.status
	l.status = status
	workflow.SetCurrentDetails(ctx, l.details())
	if !changed || !l.searchAttributes {
		return
	}
	_ = workflow.UpsertTypedSearchAttributes(ctx,
		agentapi.AgentStatus.ValueSet(status),
		agentapi.AgentModel.ValueSet(l.cfg.Model.String()),
		agentapi.AgentTurns.ValueSet(int64(l.turn)),
		agentapi.AgentCost.ValueSet(l.usage.Cost.Total),
	)
}

// details is the Web UI's current details: one line of status and what
// waits for a person.
func (l *loop) details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** · turn %d · %s · $%.4f", l.status, l.turn, l.cfg.Model, l.usage.Cost.Total)
	b.WriteString(l.budgetLine())
	if l.title != "" {
		fmt.Fprintf(&b, "\n\n%s", l.title)
	}
	for _, p := range l.pendingApprovals() {
		fmt.Fprintf(&b, "\n\nwaiting for approval: `%s` %s (%s)", p.ToolName, callSummary(p.ToolName, p.Args), p.ToolCallID)
		if p.SubAgent != nil {
			fmt.Fprintf(&b, " in sub-agent %s (%s)", p.SubAgent.Agent, p.SubAgent.WorkflowID)
		}
	}
	return b.String()
}

// childApprovalStatus makes a running run "waiting_approval" while one of
// its sub-agents' calls waits for a person, as when one of its own does: a
// watcher of the parent, and an AgentStatus query, see that the run waits
// for someone, and pendingApprovals name the sub-agent. It is "running"
// again once no call waits. Called wherever the sub-agents' waiting calls
// change, and after the run's own approvals are decided.
func (l *loop) childApprovalStatus(ctx workflow.Context) {
	var want string
	switch {
	case len(l.childApprovals) > 0 && l.status == agentapi.StatusRunning:
		want = agentapi.StatusWaitingApproval
	case len(l.childApprovals) == 0 && l.status == agentapi.StatusWaitingApproval && !l.ownApprovalsWait():
		want = agentapi.StatusRunning
	default:
		return
	}
	if workflow.GetVersion(ctx, subAgentWaitChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	l.setStatus(ctx, want)
}

// ownApprovalsWait reports whether a call of this run itself waits for a
// person.
func (l *loop) ownApprovalsWait() bool {
	for _, a := range l.approvals {
		if a.decision == "" {
			return true
		}
	}
	return false
}
