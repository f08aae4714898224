package llm

import "github.com/durable-agents/agentloop/agent"

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// LookupPrice returns the price of a common Anthropic or OpenAI model, by
// the provider's model id ("claude-sonnet-4-5", "gpt-5", or OpenRouter's
// "anthropic/claude-sonnet-4.5"). The numbers are pi-ai 0.73.1's.
func LookupPrice(modelID string) (Price, bool) {
	m, ok := lookupModel(modelID)
	return m.price, ok
}

// FillCost sets u.Cost from the model's price, as pi-ai's calculateCost
// does; a model not in the table costs 0.
func FillCost(modelID string, u *agent.Usage) {
	p, _ := LookupPrice(modelID)
	p.fill(u)
}

func (p Price) fill(u *agent.Usage) {
	u.Cost.Input = p.Input / 1e6 * float64(u.Input)
	u.Cost.Output = p.Output / 1e6 * float64(u.Output)
	u.Cost.CacheRead = p.CacheRead / 1e6 * float64(u.CacheRead)
	u.Cost.CacheWrite = p.CacheWrite / 1e6 * float64(u.CacheWrite)
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
}
