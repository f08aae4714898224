package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// Budgets (agent.Budget): a run's or a session's limits on cost, tokens,
// turns and tool calls. The spend is the run's usage totals (every model
// turn, every attempt the provider billed, every compaction), its turns
// and its tool calls; a session's spans its whole continue-as-new chain,
// whatever its runs and resets, since money spent stays spent.
//
// Before each model turn, once the turn's queued messages have joined the
// context, the loop asks the budget (agent.Budget.TurnCheck). A turn that
// must not start ends the run as an abort before a turn does: the turn's
// message_start and message_end carry an assistant message with no
// content, stopReason "budget" and an errorMessage naming the limit, then
// turn_end and agent_end; the run's stop reason is "budget". Before each
// tool call the loop asks for one more call; a call past maxToolCalls gets
// an error result saying so, as a blocked call does, its siblings too, and
// the run stops before its next model turn, so the model never sees a
// transcript with calls and no results. No budget, no change: the checks
// add no command, so histories recorded before budgets replay unchanged.

// spend is what the run (or session) has spent.
func (l *loop) spend() agent.Spend {
	tokens := l.usage.TotalTokens
	if tokens == 0 {
		u := l.usage
		tokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	return agent.Spend{CostUSD: l.usage.Cost.Total, Tokens: tokens, Turns: l.turn, ToolCalls: l.toolCalls}
}

func (l *loop) budgetState() agentapi.BudgetState {
	b := l.cfg.Budget
	if !l.inRun {
		b = l.settings.Budget
	}
	st := agentapi.BudgetState{Spent: l.spend()}
	if !b.IsZero() {
		st.Limits = b
		st.Remaining = b.Remaining(st.Spent)
		st.Exhausted = b.Exhausted(st.Spent)
	}
	return st
}

// budgetTurnCheck says why the next model turn must not start, "" when it
// may: a tool call was refused for the budget since the last turn, or
// agent.Budget.TurnCheck with the turn's input estimated as compaction
// estimates it, priced at the last answer's input price.
func (l *loop) budgetTurnCheck() string {
	b := l.cfg.Budget
	if b.IsZero() || l.aborted {
		return ""
	}
	if l.budgetRefused != "" {
		return l.budgetRefused
	}
	var tokens int64
	var cost float64
	if b.MaxTokens > 0 || b.MaxCostUSD > 0 {
		tokens = int64(l.contextTokens())
		cost = float64(tokens) * l.inputPrice()
	}
	return b.TurnCheck(l.spend(), tokens, cost)
}

// inputPrice is the last answer's price of one input token (cache reads
// and writes included, as the next turn will have them), 0 when unknown.
func (l *loop) inputPrice() float64 {
	held := l.context.Since(l.context.Offset)
	for i := len(held) - 1; i >= 0; i-- {
		m := held[i]
		if m.Role != agent.RoleAssistant || m.Usage == nil || m.StopReason.Unanswered() {
			continue
		}
		u := m.Usage
		n := u.Input + u.CacheRead + u.CacheWrite
		if n == 0 {
			return 0
		}
		return (u.Cost.Input + u.Cost.CacheRead + u.Cost.CacheWrite) / float64(n)
	}
	return 0
}

// budgetToolCall counts one more tool call, or says why the budget does
// not allow it; the run then stops before its next model turn.
func (l *loop) budgetToolCall() string {
	if why := l.cfg.Budget.ToolCallCheck(l.spend()); why != "" {
		l.budgetRefused = why
		return why
	}
	l.toolCalls++
	return ""
}

// budgetMessage ends a turn the budget does not allow, as an aborted
// signal ends one: no model call, no content.
func (l *loop) budgetMessage(ctx workflow.Context, why string) agent.Message {
	m := l.assistantShell(ctx)
	m.StopReason = agent.StopReasonBudget
	m.ErrorMessage = agent.BudgetErrorMessage(why)
	return m
}

// budgetRefusal is a validator's refusal of a new run: no history records
// it, so its type needs no version.
func budgetRefusal(why string) error {
	return temporal.NewApplicationError(agent.BudgetErrorMessage(why), agentapi.ErrBudgetExhausted)
}

// budgetExhausted says why a session refuses a new run, "" when it may
// start one.
func (l *loop) budgetExhausted() string {
	return l.settings.Budget.Exhausted(l.spend())
}

// setBudget replaces the budget of the run in progress and of the runs
// after it; an empty budget removes it. A tool call refused by the old
// budget no longer stops the run when the new one allows it.
func (l *loop) setBudget(ctx workflow.Context, b agent.Budget) (agentapi.BudgetState, error) {
	return once(l, ctx, func() (agentapi.BudgetState, error) {
		var nb *agent.Budget
		if !b.IsZero() {
			nb = &b
		}
		l.cfg.Budget, l.settings.Budget = nb, nb
		if l.budgetRefused != "" && nb.ToolCallCheck(l.spend()) == "" {
			l.budgetRefused = ""
		}
		workflow.SetCurrentDetails(ctx, l.details())
		return l.budgetState(), nil
	})
}

func (l *loop) checkSetBudget(ctx workflow.Context, b agent.Budget) error {
	if l.applied(ctx) {
		return nil
	}
	if l.status == agentapi.StatusEnded || l.status == agentapi.StatusFailed {
		return errors.New("the run has ended; start a new run with a budget")
	}
	return b.Check()
}

// budgetLine is the budget's part of the Web UI's current details.
func (l *loop) budgetLine() string {
	st := l.budgetState()
	if st.Limits == nil {
		return ""
	}
	if st.Exhausted != "" {
		return " · budget exhausted: " + st.Exhausted
	}
	return " · budget " + st.Limits.String() + fmt.Sprintf(" (spent $%.4f, %d tokens, %d turns, %d tool calls)",
		st.Spent.CostUSD, st.Spent.Tokens, st.Spent.Turns, st.Spent.ToolCalls)
}
