package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// unitLoop is n answers, each calling the named tools.
func unitLoop(n int, names ...string) [][]agent.Content {
	var answers [][]agent.Content
	for i := range n {
		answers = append(answers, calls(i, names...))
	}
	return answers
}

// maxTurns: the third turn is never made, and is not counted.
func TestUnitBudgetMaxTurns(t *testing.T) {
	r := newUnitRun(t, unitLoop(5, "quick")...).tool("quick")
	in := r.input("go", "quick")
	in.Budget = &agent.Budget{MaxTurns: 2}
	res, evs := r.run(in)
	requireBudgetStop(t, res, evs, "2 turns have reached maxTurns 2")
	require.Len(t, r.modelTurns, 2)
	require.Equal(t, 2, res.Turns)
	st := r.state()
	require.Equal(t, 2, st.Budget.Spent.Turns)
	require.Equal(t, 0, *st.Budget.Remaining.Turns)
	require.Contains(t, st.Budget.Exhausted, "maxTurns")
}

// maxToolCalls: the call past the limit and its siblings get an error
// result (every call has its result), and the run stops before the next
// model turn.
func TestUnitBudgetMaxToolCalls(t *testing.T) {
	r := newUnitRun(t, unitLoop(5, "quick", "quick", "quick")...).tool("quick")
	in := r.input("go", "quick")
	in.Budget = &agent.Budget{MaxToolCalls: 4}
	res, evs := r.run(in)
	requireBudgetStop(t, res, evs, "4 tool calls have reached maxToolCalls 4")
	require.Len(t, r.executed, 4)
	require.Len(t, r.modelTurns, 2)
	var refused []string
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult && m.IsError {
			require.Equal(t, agent.BudgetErrorMessage("4 tool calls have reached maxToolCalls 4"),
				agent.TextOf(m.Content))
			refused = append(refused, m.ToolCallID)
		}
	}
	require.Equal(t, []string{"quick-1-1", "quick-1-2"}, refused, "the second turn's last two calls are refused")
	require.Equal(t, 4, r.state().Budget.Spent.ToolCalls)
}

// maxCostUSD counts what the provider billed for failed attempts, and
// stops before a turn whose input alone, at the last answer's price,
// would cross the limit.
func TestUnitBudgetMaxCostCountsBilledRetries(t *testing.T) {
	r := newUnitRun(t, unitLoop(5, "quick")...).tool("quick")
	r.usage = agent.Usage{Input: 1000, Output: 100, TotalTokens: 1100, Cost: agent.Cost{Input: 0.01, Output: 0.01, Total: 0.02}}
	r.retried = map[int]agent.Usage{1: {Input: 1000, TotalTokens: 1000, Cost: agent.Cost{Input: 0.05, Total: 0.05}}}
	in := r.input("go", "quick")
	in.Budget = &agent.Budget{MaxCostUSD: 0.1}
	res, evs := r.run(in)
	// Turn 1: a billed failed attempt ($0.05) and the answer ($0.02);
	// turn 2: $0.02, $0.09 in all; turn 3's input alone (about 1100
	// tokens at $0.00001) would take it past $0.10.
	requireBudgetStop(t, res, evs, "would cross maxCostUSD $0.1000")
	require.InDelta(t, 0.09, res.Usage.Cost.Total, 1e-9)
	require.EqualValues(t, 1000+1100+1100, res.Usage.TotalTokens)
	require.Equal(t, 2, res.Turns)
}

// maxCostUSD reached: the first turn has no price to estimate with, so it
// runs; the second does not start once the spend has reached the limit.
func TestUnitBudgetMaxCostReached(t *testing.T) {
	r := newUnitRun(t, unitLoop(5, "quick")...).tool("quick")
	r.usage = agent.Usage{Input: 1000, Output: 100, TotalTokens: 1100, Cost: agent.Cost{Input: 0.01, Output: 0.01, Total: 0.02}}
	in := r.input("go", "quick")
	in.Budget = &agent.Budget{MaxCostUSD: 0.01}
	res, evs := r.run(in)
	requireBudgetStop(t, res, evs, "cost $0.0200 has reached maxCostUSD $0.0100")
	require.Equal(t, 1, res.Turns)
}

// maxTokens: the next turn's input is estimated before it is sent.
func TestUnitBudgetMaxTokens(t *testing.T) {
	r := newUnitRun(t, unitLoop(5, "quick")...).tool("quick")
	r.usage = agent.Usage{Input: 1000, Output: 100, TotalTokens: 1100}
	in := r.input("go", "quick")
	in.Budget = &agent.Budget{MaxTokens: 2500}
	res, evs := r.run(in)
	requireBudgetStop(t, res, evs, "would cross maxTokens 2500")
	require.Len(t, r.modelTurns, 2)
	require.EqualValues(t, 2200, res.Usage.TotalTokens)
}

// A bad budget fails the run at once, naming the field, before any
// model turn.
func TestUnitBudgetInvalid(t *testing.T) {
	r := newUnitRun(t)
	in := r.input("go")
	in.Budget = &agent.Budget{MaxTurns: -1}
	r.env.ExecuteWorkflow(agentapi.AgentLoopWorkflow, in)
	require.ErrorContains(t, r.env.GetWorkflowError(), "budget.maxTurns must not be negative")
	require.Empty(t, r.modelTurns)
}

// setBudget while a tool runs raises the budget of the run in progress; a
// negative limit is refused by the validator.
func TestUnitBudgetRaisedMidRun(t *testing.T) {
	r := newUnitRun(t, calls(1, "wait"), calls(2, "quick"), says("finished")).tool("wait").tool("quick")
	r.took("wait-1-0", time.Hour, time.Hour)
	in := r.input("go", "wait", "quick")
	in.Budget = &agent.Budget{MaxTurns: 1}
	r.at(time.Minute, func() {
		require.Equal(t, []string{"wait-1-0"}, r.state().PendingToolCalls)
		r.update(agentapi.UpdateSetBudget, "budget.maxTurns must not be negative", agent.Budget{MaxTurns: -3})
		updateResultOf(r, agentapi.UpdateSetBudget, agent.Budget{MaxTurns: 3}, func(bs agentapi.BudgetState) {
			require.Equal(t, 2, *bs.Remaining.Turns)
			require.Empty(t, bs.Exhausted)
		})
	})
	res, _ := r.run(in)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, 3, res.Turns)
}

// A tool call refused by the budget stops the run before its next turn,
// unless setBudget allows one more call before that turn starts.
func TestUnitBudgetRefusedCallLiftedBySetBudget(t *testing.T) {
	r := newUnitRun(t, calls(1, "wait", "quick"), says("finished")).tool("wait").tool("quick")
	r.took("wait-1-0", time.Hour, time.Hour)
	in := r.input("go", "wait", "quick")
	in.Budget = &agent.Budget{MaxToolCalls: 1}
	r.at(time.Minute, func() {
		updateResultOf(r, agentapi.UpdateSetBudget, agent.Budget{MaxToolCalls: 5}, func(bs agentapi.BudgetState) {
			require.Equal(t, 4, *bs.Remaining.ToolCalls)
		})
	})
	res, _ := r.run(in)
	require.Equal(t, agent.StopReasonStop, res.StopReason, "the raised budget lets the run go on")
	require.Equal(t, "finished", agent.TextOf(lastMessage(res).Content))
	require.Equal(t, []string{"wait-1-0"}, r.executedIDs())
	refused := res.Messages[3]
	require.Equal(t, "quick-1-1", refused.ToolCallID)
	require.True(t, refused.IsError)
	require.Contains(t, agent.TextOf(refused.Content), "1 tool calls have reached maxToolCalls 1")
}
