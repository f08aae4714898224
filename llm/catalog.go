package llm

import "strings"

//go:generate sh -c "npm ci --prefix gen --no-audit --no-fund && node gen/catalog.mjs && gofmt -w catalog_models.go"

// modelInfo is what pi-ai's model table says about a model that changes the
// request or the bill: prices, output and context limits, whether it
// reasons, whether it sees images, and how thinking levels map onto it.
type modelInfo struct {
	price         Price
	contextWindow int
	maxTokens     int
	reasoning     bool
	images        bool
	// noOff is pi's thinkingLevelMap.off === null: reasoning cannot be
	// switched off, so no "off" value is sent.
	noOff bool
	// xhigh is the provider value for the xhigh level; empty means the
	// model has no xhigh and the level is clamped to high.
	xhigh string
}

// lookupModel finds id in the table. OpenRouter names models
// "vendor/model" and spells versions with dots ("claude-sonnet-4.5"), so
// both the bare id and its dashed spelling are tried.
func lookupModel(id string) (modelInfo, bool) {
	if m, ok := knownModels[id]; ok {
		return m, true
	}
	if _, rest, ok := strings.Cut(id, "/"); ok {
		if m, ok := knownModels[rest]; ok {
			return m, true
		}
		if m, ok := knownModels[strings.ReplaceAll(rest, ".", "-")]; ok {
			return m, true
		}
	}
	return modelInfo{}, false
}

// ModelLimits are what pi-ai's model table says of a model's context:
// its window in tokens and whether it reasons. Known is false for a model
// the table does not list (a local or OpenAI-compatible model): its window
// must then come from the run's configuration.
type ModelLimits struct {
	ContextWindow int
	Reasoning     bool
	Known         bool
}

// Limits looks a model id up in pi-ai's table.
func Limits(id string) ModelLimits {
	m, ok := lookupModel(id)
	if !ok {
		return ModelLimits{}
	}
	return ModelLimits{ContextWindow: m.contextWindow, Reasoning: m.reasoning, Known: true}
}
