package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agentapi"
)

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
	}
	return b.String()
}
