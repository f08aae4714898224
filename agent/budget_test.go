package agent

import (
	"strings"
	"testing"
)

func TestParseBudget(t *testing.T) {
	b, err := ParseBudget("maxCostUSD=1.5, maxTurns=40,maxTokens=2000000,maxToolCalls=9")
	if err != nil || *b != (Budget{MaxCostUSD: 1.5, MaxTurns: 40, MaxTokens: 2000000, MaxToolCalls: 9}) {
		t.Fatalf("got %+v, %v", b, err)
	}
	if got := b.String(); got != "maxCostUSD=1.5,maxTokens=2000000,maxTurns=40,maxToolCalls=9" {
		t.Fatalf("String: %s", got)
	}
	for _, s := range []string{"", "none"} {
		if b, err := ParseBudget(s); err != nil || !b.IsZero() {
			t.Fatalf("%q: %+v, %v", s, b, err)
		}
	}
	for _, bad := range []string{"maxTurns", "maxTurns=x", "maxCostUSD=1.5x", "maxTurns=-1", "cost=3", "maxCostUSD=NaN"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Fatalf("%q: no error", bad)
		}
	}
}

func TestBudgetChecks(t *testing.T) {
	b := &Budget{MaxCostUSD: 1, MaxTokens: 1000, MaxTurns: 3, MaxToolCalls: 2}
	if why := b.TurnCheck(Spend{CostUSD: 0.5, Tokens: 500, Turns: 2}, 400, 0.4); why != "" {
		t.Fatalf("a turn that fits: %s", why)
	}
	for _, c := range []struct {
		s      Spend
		tokens int64
		cost   float64
		want   string
	}{
		{Spend{Turns: 3}, 0, 0, "3 turns have reached maxTurns 3"},
		{Spend{CostUSD: 1}, 0, 0, "cost $1.0000 has reached maxCostUSD $1.0000"},
		{Spend{Tokens: 1000}, 0, 0, "1000 tokens have reached maxTokens 1000"},
		{Spend{CostUSD: 0.7}, 0, 0.4, "would cross maxCostUSD"},
		{Spend{Tokens: 700}, 400, 0, "would cross maxTokens 1000"},
	} {
		if why := b.TurnCheck(c.s, c.tokens, c.cost); why == "" || !strings.Contains(why, c.want) {
			t.Fatalf("%+v: %q, want %q", c.s, why, c.want)
		}
	}
	if b.TurnCheck(Spend{ToolCalls: 5}, 0, 0) != "" {
		t.Fatal("tool calls do not stop a model turn")
	}
	if b.ToolCallCheck(Spend{ToolCalls: 1}) != "" || b.ToolCallCheck(Spend{ToolCalls: 2}) == "" {
		t.Fatal("ToolCallCheck")
	}
	var none *Budget
	if none.TurnCheck(Spend{Turns: 1e6}, 0, 0) != "" || none.Exhausted(Spend{CostUSD: 1e6}) != "" {
		t.Fatal("no budget, no limit")
	}
	r := b.Remaining(Spend{CostUSD: 2, Turns: 1})
	if *r.CostUSD != 0 || *r.Turns != 2 || *r.ToolCalls != 2 {
		t.Fatalf("Remaining: %+v", r)
	}
}
