package llm

import "strings"

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

// knownModels is generated from pi-ai 0.73.1's models.generated.js
// (providers anthropic and openai); prices are USD per million tokens.
var knownModels = map[string]modelInfo{
	// anthropic
	"claude-3-5-haiku-20241022":  {price: Price{0.8, 4, 0.08, 1}, contextWindow: 200000, maxTokens: 8192, images: true},
	"claude-3-5-haiku-latest":    {price: Price{0.8, 4, 0.08, 1}, contextWindow: 200000, maxTokens: 8192, images: true},
	"claude-3-5-sonnet-20240620": {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 8192, images: true},
	"claude-3-5-sonnet-20241022": {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 8192, images: true},
	"claude-3-7-sonnet-20250219": {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-3-haiku-20240307":    {price: Price{0.25, 1.25, 0.03, 0.3}, contextWindow: 200000, maxTokens: 4096, images: true},
	"claude-3-opus-20240229":     {price: Price{15, 75, 1.5, 18.75}, contextWindow: 200000, maxTokens: 4096, images: true},
	"claude-3-sonnet-20240229":   {price: Price{3, 15, 0.3, 0.3}, contextWindow: 200000, maxTokens: 4096, images: true},
	"claude-haiku-4-5":           {price: Price{1, 5, 0.1, 1.25}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-haiku-4-5-20251001":  {price: Price{1, 5, 0.1, 1.25}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-opus-4-0":            {price: Price{15, 75, 1.5, 18.75}, contextWindow: 200000, maxTokens: 32000, reasoning: true, images: true},
	"claude-opus-4-1":            {price: Price{15, 75, 1.5, 18.75}, contextWindow: 200000, maxTokens: 32000, reasoning: true, images: true},
	"claude-opus-4-1-20250805":   {price: Price{15, 75, 1.5, 18.75}, contextWindow: 200000, maxTokens: 32000, reasoning: true, images: true},
	"claude-opus-4-20250514":     {price: Price{15, 75, 1.5, 18.75}, contextWindow: 200000, maxTokens: 32000, reasoning: true, images: true},
	"claude-opus-4-5":            {price: Price{5, 25, 0.5, 6.25}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-opus-4-5-20251101":   {price: Price{5, 25, 0.5, 6.25}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-opus-4-6":            {price: Price{5, 25, 0.5, 6.25}, contextWindow: 1000000, maxTokens: 128000, reasoning: true, images: true, xhigh: "max"},
	"claude-opus-4-7":            {price: Price{5, 25, 0.5, 6.25}, contextWindow: 1000000, maxTokens: 128000, reasoning: true, images: true, xhigh: "xhigh"},
	"claude-sonnet-4-0":          {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-sonnet-4-20250514":   {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-sonnet-4-5":          {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-sonnet-4-5-20250929": {price: Price{3, 15, 0.3, 3.75}, contextWindow: 200000, maxTokens: 64000, reasoning: true, images: true},
	"claude-sonnet-4-6":          {price: Price{3, 15, 0.3, 3.75}, contextWindow: 1000000, maxTokens: 64000, reasoning: true, images: true},
	// openai
	"gpt-4":                 {price: Price{30, 60, 0, 0}, contextWindow: 8192, maxTokens: 8192},
	"gpt-4-turbo":           {price: Price{10, 30, 0, 0}, contextWindow: 128000, maxTokens: 4096, images: true},
	"gpt-4.1":               {price: Price{2, 8, 0.5, 0}, contextWindow: 1047576, maxTokens: 32768, images: true},
	"gpt-4.1-mini":          {price: Price{0.4, 1.6, 0.1, 0}, contextWindow: 1047576, maxTokens: 32768, images: true},
	"gpt-4.1-nano":          {price: Price{0.1, 0.4, 0.03, 0}, contextWindow: 1047576, maxTokens: 32768, images: true},
	"gpt-4o":                {price: Price{2.5, 10, 1.25, 0}, contextWindow: 128000, maxTokens: 16384, images: true},
	"gpt-4o-2024-05-13":     {price: Price{5, 15, 0, 0}, contextWindow: 128000, maxTokens: 4096, images: true},
	"gpt-4o-2024-08-06":     {price: Price{2.5, 10, 1.25, 0}, contextWindow: 128000, maxTokens: 16384, images: true},
	"gpt-4o-2024-11-20":     {price: Price{2.5, 10, 1.25, 0}, contextWindow: 128000, maxTokens: 16384, images: true},
	"gpt-4o-mini":           {price: Price{0.15, 0.6, 0.08, 0}, contextWindow: 128000, maxTokens: 16384, images: true},
	"gpt-5":                 {price: Price{1.25, 10, 0.125, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5-chat-latest":     {price: Price{1.25, 10, 0.125, 0}, contextWindow: 128000, maxTokens: 16384, images: true, noOff: true},
	"gpt-5-codex":           {price: Price{1.25, 10, 0.125, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5-mini":            {price: Price{0.25, 2, 0.025, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5-nano":            {price: Price{0.05, 0.4, 0.005, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5-pro":             {price: Price{15, 120, 0, 0}, contextWindow: 400000, maxTokens: 272000, reasoning: true, images: true, noOff: true},
	"gpt-5.1":               {price: Price{1.25, 10, 0.13, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5.1-chat-latest":   {price: Price{1.25, 10, 0.125, 0}, contextWindow: 128000, maxTokens: 16384, reasoning: true, images: true, noOff: true},
	"gpt-5.1-codex":         {price: Price{1.25, 10, 0.125, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5.1-codex-max":     {price: Price{1.25, 10, 0.125, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5.1-codex-mini":    {price: Price{0.25, 2, 0.025, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true},
	"gpt-5.2":               {price: Price{1.75, 14, 0.175, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.2-chat-latest":   {price: Price{1.75, 14, 0.175, 0}, contextWindow: 128000, maxTokens: 16384, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.2-codex":         {price: Price{1.75, 14, 0.175, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.2-pro":           {price: Price{21, 168, 0, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.3-chat-latest":   {price: Price{1.75, 14, 0.175, 0}, contextWindow: 128000, maxTokens: 16384, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.3-codex":         {price: Price{1.75, 14, 0.175, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.3-codex-spark":   {price: Price{1.75, 14, 0.175, 0}, contextWindow: 128000, maxTokens: 32000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.4":               {price: Price{2.5, 15, 0.25, 0}, contextWindow: 272000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.4-mini":          {price: Price{0.75, 4.5, 0.075, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.4-nano":          {price: Price{0.2, 1.25, 0.02, 0}, contextWindow: 400000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.4-pro":           {price: Price{30, 180, 0, 0}, contextWindow: 1050000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.5":               {price: Price{5, 30, 0.5, 0}, contextWindow: 272000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"gpt-5.5-pro":           {price: Price{30, 180, 0, 0}, contextWindow: 1050000, maxTokens: 128000, reasoning: true, images: true, noOff: true, xhigh: "xhigh"},
	"o1":                    {price: Price{15, 60, 7.5, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
	"o1-pro":                {price: Price{150, 600, 0, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
	"o3":                    {price: Price{2, 8, 0.5, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
	"o3-deep-research":      {price: Price{10, 40, 2.5, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
	"o3-mini":               {price: Price{1.1, 4.4, 0.55, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true},
	"o3-pro":                {price: Price{20, 80, 0, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
	"o4-mini":               {price: Price{1.1, 4.4, 0.28, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
	"o4-mini-deep-research": {price: Price{2, 8, 0.5, 0}, contextWindow: 200000, maxTokens: 100000, reasoning: true, images: true},
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
