package agent

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// StopReasonBudget ends a run whose budget would be crossed (not a pi stop
// reason: pi has no budgets). Like an aborted turn, its assistant message
// has no content, an errorMessage saying which limit, and is never sent to
// a model.
const StopReasonBudget StopReason = "budget"

// Unanswered reports whether an assistant message with this stop reason
// carries no answer: error, aborted and budget messages are kept in the
// transcript but never sent to a model, and their usage says nothing about
// the context.
func (r StopReason) Unanswered() bool {
	return r == StopReasonError || r == StopReasonAborted || r == StopReasonBudget
}

// Budget bounds what a run (or a whole session, across continue-as-new)
// may spend. A zero field is no limit.
//
// Turns and tool calls are counted before they happen: a model turn starts
// only while fewer than MaxTurns were made, a tool call runs only while
// fewer than MaxToolCalls ran. Cost and tokens are known only after the
// provider answers, so a model turn starts only while the total spent is
// below the limit and the turn's input alone, estimated before it is sent,
// would not take the total past it (see Spend.Check): the last turn can
// still go past the limit by its output (and its input's estimation
// error), never by more than one turn.
type Budget struct {
	MaxCostUSD   float64 `json:"maxCostUSD,omitempty"`
	MaxTokens    int64   `json:"maxTokens,omitempty"`
	MaxTurns     int     `json:"maxTurns,omitempty"`
	MaxToolCalls int     `json:"maxToolCalls,omitempty"`
}

// IsZero reports a budget with no limit.
func (b *Budget) IsZero() bool { return b == nil || *b == Budget{} }

// Check refuses negative or non-finite limits.
func (b *Budget) Check() error {
	if b == nil {
		return nil
	}
	var errs []error
	if b.MaxCostUSD < 0 || math.IsNaN(b.MaxCostUSD) || math.IsInf(b.MaxCostUSD, 0) {
		errs = append(errs, fmt.Errorf("budget.maxCostUSD %v: want a positive number of dollars, or 0 for no limit", b.MaxCostUSD))
	}
	if b.MaxTokens < 0 {
		errs = append(errs, errors.New("budget.maxTokens must not be negative"))
	}
	if b.MaxTurns < 0 {
		errs = append(errs, errors.New("budget.maxTurns must not be negative"))
	}
	if b.MaxToolCalls < 0 {
		errs = append(errs, errors.New("budget.maxToolCalls must not be negative"))
	}
	return errors.Join(errs...)
}

// String writes the limits as the starter's -budget flag takes them.
func (b *Budget) String() string {
	if b.IsZero() {
		return "none"
	}
	var parts []string
	if b.MaxCostUSD > 0 {
		parts = append(parts, fmt.Sprintf("maxCostUSD=%g", b.MaxCostUSD))
	}
	if b.MaxTokens > 0 {
		parts = append(parts, fmt.Sprintf("maxTokens=%d", b.MaxTokens))
	}
	if b.MaxTurns > 0 {
		parts = append(parts, fmt.Sprintf("maxTurns=%d", b.MaxTurns))
	}
	if b.MaxToolCalls > 0 {
		parts = append(parts, fmt.Sprintf("maxToolCalls=%d", b.MaxToolCalls))
	}
	return strings.Join(parts, ",")
}

// ParseBudget parses "maxCostUSD=1.5,maxTurns=40" (the starter's -budget);
// "" and "none" are no limit.
func ParseBudget(s string) (*Budget, error) {
	b := &Budget{}
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return b, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("budget %q: want key=value pairs such as maxCostUSD=1.5,maxTurns=40", kv)
		}
		var err error
		var n int64
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "maxcostusd":
			b.MaxCostUSD, err = strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		case "maxtokens":
			b.MaxTokens, err = strconv.ParseInt(v, 10, 64)
		case "maxturns":
			n, err = strconv.ParseInt(v, 10, 32)
			b.MaxTurns = int(n)
		case "maxtoolcalls":
			n, err = strconv.ParseInt(v, 10, 32)
			b.MaxToolCalls = int(n)
		default:
			return nil, fmt.Errorf("budget: unknown limit %q: want maxCostUSD, maxTokens, maxTurns or maxToolCalls", k)
		}
		if err != nil {
			return nil, fmt.Errorf("budget: %s=%q: %v", k, v, err)
		}
	}
	return b, b.Check()
}

// Spend is what a run or session has spent against its budget.
type Spend struct {
	CostUSD   float64 `json:"costUSD"`
	Tokens    int64   `json:"tokens"`
	Turns     int     `json:"turns"`
	ToolCalls int     `json:"toolCalls"`
}

// Exhausted says which limit the spend has reached, "" when none: no model
// turn and no tool call would fit.
func (b *Budget) Exhausted(s Spend) string {
	if why := b.reached(s); why != "" {
		return why
	}
	return b.ToolCallCheck(s)
}

// reached says which of the turn, cost and token limits the spend has
// reached, "" when none.
func (b *Budget) reached(s Spend) string {
	switch {
	case b.IsZero():
		return ""
	case b.MaxTurns > 0 && s.Turns >= b.MaxTurns:
		return fmt.Sprintf("%d turns have reached maxTurns %d", s.Turns, b.MaxTurns)
	case b.MaxCostUSD > 0 && s.CostUSD >= b.MaxCostUSD:
		return fmt.Sprintf("cost $%.4f has reached maxCostUSD $%.4f", s.CostUSD, b.MaxCostUSD)
	case b.MaxTokens > 0 && s.Tokens >= b.MaxTokens:
		return fmt.Sprintf("%d tokens have reached maxTokens %d", s.Tokens, b.MaxTokens)
	}
	return ""
}

// TurnCheck says why the next model turn must not start, "" when it may:
// turns, cost or tokens reached, or the turn's input alone (inputTokens,
// estimated before it is sent, and inputCost, that estimate at the last
// answer's price; 0 when unknown) would take the total past a limit.
// Tool calls do not stop a model turn: the model may still answer in text.
func (b *Budget) TurnCheck(s Spend, inputTokens int64, inputCost float64) string {
	if why := b.reached(s); why != "" || b.IsZero() {
		return why
	}
	switch {
	case b.MaxCostUSD > 0 && inputCost > 0 && s.CostUSD+inputCost > b.MaxCostUSD:
		return fmt.Sprintf("cost $%.4f plus the next turn's input (about $%.4f) would cross maxCostUSD $%.4f", s.CostUSD, inputCost, b.MaxCostUSD)
	case b.MaxTokens > 0 && inputTokens > 0 && s.Tokens+inputTokens > b.MaxTokens:
		return fmt.Sprintf("%d tokens plus the next turn's input (about %d) would cross maxTokens %d", s.Tokens, inputTokens, b.MaxTokens)
	}
	return ""
}

// ToolCallCheck says why one more tool call must not run, "" when it may.
func (b *Budget) ToolCallCheck(s Spend) string {
	if b.IsZero() || b.MaxToolCalls <= 0 || s.ToolCalls < b.MaxToolCalls {
		return ""
	}
	return fmt.Sprintf("%d tool calls have reached maxToolCalls %d", s.ToolCalls, b.MaxToolCalls)
}

// Remaining is what is left of each limit (nil where there is none).
type Remaining struct {
	CostUSD   *float64 `json:"costUSD,omitempty"`
	Tokens    *int64   `json:"tokens,omitempty"`
	Turns     *int     `json:"turns,omitempty"`
	ToolCalls *int     `json:"toolCalls,omitempty"`
}

// Remaining is the budget minus the spend, never below zero.
func (b *Budget) Remaining(s Spend) Remaining {
	var r Remaining
	if b == nil {
		return r
	}
	if b.MaxCostUSD > 0 {
		v := math.Max(b.MaxCostUSD-s.CostUSD, 0)
		r.CostUSD = &v
	}
	if b.MaxTokens > 0 {
		v := max(b.MaxTokens-s.Tokens, 0)
		r.Tokens = &v
	}
	if b.MaxTurns > 0 {
		v := max(b.MaxTurns-s.Turns, 0)
		r.Turns = &v
	}
	if b.MaxToolCalls > 0 {
		v := max(b.MaxToolCalls-s.ToolCalls, 0)
		r.ToolCalls = &v
	}
	return r
}

// BudgetErrorMessage is the errorMessage of a budget stop and the text of
// a refused prompt: which limit, and how to go on.
func BudgetErrorMessage(why string) string {
	return "Budget exhausted: " + why + ". Raise or remove the budget (the setBudget Update) to go on."
}
