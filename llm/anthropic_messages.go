package llm

import (
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/durable-agents/agentloop/agent"
)

// anthropicMessages maps a transformed transcript onto Messages API turns,
// as pi-ai's convertMessages does, and puts the cache breakpoint on the
// last block of the last user turn so the conversation so far is cached.
func anthropicMessages(msgs []agent.Message, cache anthropic.CacheControlEphemeralParam) []anthropic.MessageParam {
	out := make([]anthropic.MessageParam, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case agent.RoleUser:
			if blocks := anthropicUserBlocks(m.Content); len(blocks) > 0 {
				out = append(out, anthropic.NewUserMessage(blocks...))
			}
		case agent.RoleAssistant:
			if blocks := anthropicAssistantBlocks(m.Content); len(blocks) > 0 {
				out = append(out, anthropic.NewAssistantMessage(blocks...))
			}
		case agent.RoleToolResult:
			// Consecutive tool results travel in one user turn.
			var results []anthropic.ContentBlockParamUnion
			for ; i < len(msgs) && msgs[i].Role == agent.RoleToolResult; i++ {
				results = append(results, anthropicToolResult(msgs[i]))
			}
			i--
			out = append(out, anthropic.NewUserMessage(results...))
		}
	}
	if n := len(out); n > 0 && out[n-1].OfUser != nil {
		setCacheControl(out[n-1].OfUser.Content, cache)
	}
	return out
}

func setCacheControl(blocks []anthropic.ContentBlockParamUnion, cache anthropic.CacheControlEphemeralParam) {
	if len(blocks) == 0 {
		return
	}
	switch last := blocks[len(blocks)-1]; {
	case last.OfText != nil:
		last.OfText.CacheControl = cache
	case last.OfImage != nil:
		last.OfImage.CacheControl = cache
	case last.OfToolResult != nil:
		last.OfToolResult.CacheControl = cache
	}
}

// anthropicUserBlocks keeps text and images; blank text blocks are dropped
// because the API rejects them.
func anthropicUserBlocks(content []agent.Content) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	for _, c := range content {
		switch c.Type {
		case agent.ContentText:
			blocks = appendAnthropicText(blocks, c.Text)
		case agent.ContentImage:
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfImage: anthropicImage(c)})
		}
	}
	return blocks
}

// appendAnthropicText appends a text block unless the text is blank, which
// the API rejects, in user and assistant messages alike.
func appendAnthropicText(blocks []anthropic.ContentBlockParamUnion, text string) []anthropic.ContentBlockParamUnion {
	if isBlank(text) {
		return blocks
	}
	return append(blocks, anthropic.NewTextBlock(text))
}

func anthropicImage(c agent.Content) *anthropic.ImageBlockParam {
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
		OfBase64: &anthropic.Base64ImageSourceParam{Data: c.Data, MediaType: anthropic.Base64ImageSourceMediaType(c.MimeType)},
	}}
}

// anthropicAssistantBlocks sends thinking back with its signature, which
// Claude requires to continue after a tool call; thinking without one (a
// stream cut short) goes back as plain text, and redacted thinking as the
// opaque data it came with.
func anthropicAssistantBlocks(content []agent.Content) []anthropic.ContentBlockParamUnion {
	var blocks []anthropic.ContentBlockParamUnion
	for _, c := range content {
		switch c.Type {
		case agent.ContentText:
			blocks = appendAnthropicText(blocks, c.Text)
		case agent.ContentThinking:
			switch {
			case c.Redacted:
				blocks = append(blocks, anthropic.NewRedactedThinkingBlock(c.ThinkingSignature))
			case isBlank(c.Thinking):
			case isBlank(c.ThinkingSignature):
				blocks = append(blocks, anthropic.NewTextBlock(c.Thinking))
			default:
				blocks = append(blocks, anthropic.NewThinkingBlock(c.ThinkingSignature, c.Thinking))
			}
		case agent.ContentToolCall:
			// pi sends the arguments as received (block.arguments ?? {}),
			// also when they are not an object.
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, c.ArgumentsValue(), c.Name))
		}
	}
	return blocks
}

// anthropicToolResult sends text-only results as one string, as pi does;
// results with images become blocks, with a placeholder text when the
// tool returned only images.
func anthropicToolResult(m agent.Message) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID, IsError: anthropic.Bool(m.IsError)}
	hasImages, hasText := false, false
	var texts []string
	for _, c := range m.Content {
		switch c.Type {
		case agent.ContentText:
			texts = append(texts, c.Text)
			hasText = true
		case agent.ContentImage:
			hasImages = true
		}
	}
	if !hasImages {
		r.SetExtraFields(map[string]any{"content": strings.Join(texts, "\n")})
		return anthropic.ContentBlockParamUnion{OfToolResult: &r}
	}
	if !hasText {
		r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: "(see attached image)"}})
	}
	for _, c := range m.Content {
		switch c.Type {
		case agent.ContentText:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: c.Text}})
		case agent.ContentImage:
			r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: anthropicImage(c)})
		}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
}
