package llm

import (
	"github.com/openai/openai-go/v3"
)

// anthropicCacheControl is Anthropic's cache breakpoint, as OpenRouter
// passes it through.
var anthropicCacheControl = map[string]any{"type": "ephemeral"}

// addCacheBreakpoints marks what Claude should cache when it is reached
// through OpenRouter, which caches Anthropic models only where told (pi-ai's
// cacheControlFormat "anthropic"): the system prompt, the last tool, and the
// last text of the conversation.
func addCacheBreakpoints(p *openai.ChatCompletionNewParams) {
	for _, m := range p.Messages {
		if m.OfSystem != nil {
			parts := cachedParts(m.OfSystem.Content.OfString.Value)
			m.OfSystem.Content = openai.ChatCompletionSystemMessageParamContentUnion{OfArrayOfContentParts: parts}
			break
		}
		if m.OfDeveloper != nil {
			parts := cachedParts(m.OfDeveloper.Content.OfString.Value)
			m.OfDeveloper.Content = openai.ChatCompletionDeveloperMessageParamContentUnion{OfArrayOfContentParts: parts}
			break
		}
	}
	if n := len(p.Tools); n > 0 && p.Tools[n-1].OfFunction != nil {
		p.Tools[n-1].OfFunction.SetExtraFields(map[string]any{"cache_control": anthropicCacheControl})
	}
	for i := len(p.Messages) - 1; i >= 0; i-- {
		if m := p.Messages[i]; m.OfUser != nil && markLastUserText(m.OfUser) || m.OfAssistant != nil && markAssistantText(m.OfAssistant) {
			return
		}
	}
}

func cachedParts(text string) []openai.ChatCompletionContentPartTextParam {
	part := openai.ChatCompletionContentPartTextParam{Text: text}
	part.SetExtraFields(map[string]any{"cache_control": anthropicCacheControl})
	return []openai.ChatCompletionContentPartTextParam{part}
}

func markLastUserText(m *openai.ChatCompletionUserMessageParam) bool {
	parts := m.Content.OfArrayOfContentParts
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i].OfText != nil {
			parts[i].OfText.SetExtraFields(map[string]any{"cache_control": anthropicCacheControl})
			return true
		}
	}
	return false
}

// markAssistantText turns the assistant's text into a marked text part;
// assistant text is always sent as a plain string.
func markAssistantText(m *openai.ChatCompletionAssistantMessageParam) bool {
	text := m.Content.OfString.Value
	if text == "" {
		return false
	}
	part := &openai.ChatCompletionContentPartTextParam{Text: text}
	part.SetExtraFields(map[string]any{"cache_control": anthropicCacheControl})
	m.Content = openai.ChatCompletionAssistantMessageParamContentUnion{
		OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{{OfText: part}},
	}
	return true
}
