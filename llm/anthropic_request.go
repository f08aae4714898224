package llm

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/durable-agents/agentloop/agent"
)

// interleavedThinkingBeta lets older Claude models think between tool
// calls; pi asks for it on every model without adaptive thinking.
const interleavedThinkingBeta = "interleaved-thinking-2025-05-14"

// anthropicRequest is pi-ai's buildParams for the Messages API, with
// streamSimpleAnthropic's reasoning and output-limit rules. beta is the
// anthropic-beta header value, empty for none.
func (m *anthropicModel) request(req Request) (params anthropic.MessageNewParams, beta string) {
	cache := anthropic.NewCacheControlEphemeralParam()
	params = anthropic.MessageNewParams{
		Model:    m.id,
		Messages: anthropicMessages(transformMessages(req.Messages, m.target(), normalizeAnthropicID), cache),
	}
	if req.SystemPrompt != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.SystemPrompt, CacheControl: cache}}
	}
	if len(req.Tools) > 0 {
		params.Tools = anthropicTools(req.Tools, cache)
	}
	thinking := m.thinking(req.Options)
	params.MaxTokens = thinking.maxTokens
	switch {
	case thinking.adaptive:
		params.Thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized}
		params.OutputConfig.Effort = anthropic.OutputConfigEffort(thinking.effort)
	case thinking.enabled:
		// pi sends 1024 when the output limit leaves no room for a budget.
		budget := thinking.budget
		if budget == 0 {
			budget = 1024
		}
		params.Thinking.OfEnabled = &anthropic.ThinkingConfigEnabledParam{
			BudgetTokens: budget,
			Display:      anthropic.ThinkingConfigEnabledDisplaySummarized,
		}
	case thinking.disabled:
		d := anthropic.NewThinkingConfigDisabledParam()
		params.Thinking.OfDisabled = &d
	}
	// Thinking and temperature do not mix. This SDK version has no
	// temperature field; the API still takes one.
	if t := req.Options.Temperature; t != nil && !thinking.enabled {
		params.SetExtraFields(map[string]any{"temperature": *t})
	}
	if !supportsAdaptiveThinking(m.id) {
		beta = interleavedThinkingBeta
	}
	return params, beta
}

// anthropicThinking is what a reasoning level asks of a Claude model.
type anthropicThinking struct {
	enabled, adaptive, disabled bool
	effort                      string
	budget                      int64
	maxTokens                   int64
}

// Thinking budgets per level (pi-ai's adjustMaxTokensForThinking); xhigh
// has no budget of its own and is clamped to high.
var thinkingBudgets = map[string]int64{"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}

// Claude models pi-ai knows nothing about: output limit assumed, and
// thinking switched on only when asked for.
const unknownClaudeMaxTokens = 32000

func (m *anthropicModel) thinking(o agent.ModelOptions) anthropicThinking {
	modelMax := int64(unknownClaudeMaxTokens)
	if m.known {
		modelMax = int64(m.info.maxTokens)
	}
	t := anthropicThinking{maxTokens: int64(o.MaxTokens)}
	if t.maxTokens == 0 {
		t.maxTokens = min(modelMax, 32000)
	}
	reasoning := m.info.reasoning || !m.known && o.Reasoning != ""
	if !reasoning {
		return t
	}
	if o.Reasoning == "" {
		t.disabled = true
		return t
	}
	t.enabled = true
	if supportsAdaptiveThinking(m.id) {
		t.adaptive = true
		t.effort = anthropicEffort(o.Reasoning, m.info.xhigh)
		return t
	}
	level := o.Reasoning
	if level == "xhigh" {
		level = "high"
	}
	t.budget = thinkingBudgets[level]
	if t.budget == 0 {
		t.budget = thinkingBudgets["high"]
	}
	t.maxTokens = min(t.maxTokens+t.budget, modelMax)
	if t.maxTokens <= t.budget {
		t.budget = max(0, t.maxTokens-1024)
	}
	return t
}

// supportsAdaptiveThinking names the models where Claude decides how much
// to think (Opus 4.6 and 4.7, Sonnet 4.6).
func supportsAdaptiveThinking(id string) bool {
	for _, s := range []string{"opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6"} {
		if strings.Contains(id, s) {
			return true
		}
	}
	return false
}

func anthropicEffort(level, xhigh string) string {
	switch level {
	case "minimal", "low":
		return "low"
	case "medium":
		return "medium"
	case "xhigh":
		if xhigh != "" {
			return xhigh
		}
	}
	return "high"
}

var anthropicIDInvalid = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// normalizeAnthropicID makes another provider's tool call id match
// Anthropic's ^[a-zA-Z0-9_-]+$, at most 64 characters.
func normalizeAnthropicID(id string, _ agent.Message) string {
	id = anthropicIDInvalid.ReplaceAllString(id, "_")
	if len(id) > 64 {
		id = id[:64]
	}
	return id
}

// anthropicTools sends each tool's schema as an object schema; the last
// tool carries the cache breakpoint, so the tool list is cached with the
// system prompt.
func anthropicTools(tools []Tool, cache anthropic.CacheControlEphemeralParam) []anthropic.ToolUnionParam {
	out := make([]anthropic.ToolUnionParam, 0, len(tools))
	for i, t := range tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		_ = json.Unmarshal(t.Parameters, &schema)
		if schema.Properties == nil {
			schema.Properties = map[string]any{}
		}
		if schema.Required == nil {
			schema.Required = []string{}
		}
		tool := anthropic.ToolParam{
			Name:                t.Name,
			Description:         param.NewOpt(t.Description),
			EagerInputStreaming: param.NewOpt(true),
			InputSchema:         anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required},
		}
		if i == len(tools)-1 {
			tool.CacheControl = cache
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return out
}
