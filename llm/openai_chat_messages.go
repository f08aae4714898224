package llm

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/durable-agents/agentloop/agent"
)

// chatMessages maps the transcript onto Chat Completions messages, as
// pi-ai's convertMessages does.
func (m *openAIModel) chatMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	msgs := transformMessages(req.Messages, m.target(), m.normalizeChatID)
	var out []openai.ChatCompletionMessageParamUnion
	if req.SystemPrompt != "" {
		if m.info.reasoning {
			out = append(out, openai.DeveloperMessage(req.SystemPrompt))
		} else {
			out = append(out, openai.SystemMessage(req.SystemPrompt))
		}
	}
	for i := 0; i < len(msgs); i++ {
		msg := msgs[i]
		switch msg.Role {
		case agent.RoleUser:
			if parts := chatUserParts(msg.Content); len(parts) > 0 {
				out = append(out, openai.UserMessage(parts))
			}
		case agent.RoleAssistant:
			if a, ok := chatAssistant(msg.Content); ok {
				out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: a})
			}
		case agent.RoleToolResult:
			j := i
			for ; j < len(msgs) && msgs[j].Role == agent.RoleToolResult; j++ {
			}
			out = append(out, m.chatToolResults(msgs[i:j])...)
			i = j - 1
		}
	}
	return out
}

func chatUserParts(content []agent.Content) []openai.ChatCompletionContentPartUnionParam {
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, c := range content {
		switch c.Type {
		case agent.ContentText:
			parts = append(parts, openai.TextContentPart(c.Text))
		case agent.ContentImage:
			parts = append(parts, chatImage(c))
		}
	}
	return parts
}

func chatImage(c agent.Content) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(c)})
}

func dataURL(c agent.Content) string { return "data:" + c.MimeType + ";base64," + c.Data }

// chatAssistant sends text as one plain string (arrays of parts make some
// models echo the structure), thinking back in the field it came from
// (thinkingSignature names it, e.g. reasoning_content for llama.cpp), and
// OpenRouter's encrypted reasoning details with the tool calls they belong
// to. A turn with neither text nor tool calls is dropped.
func chatAssistant(content []agent.Content) (*openai.ChatCompletionAssistantMessageParam, bool) {
	a := &openai.ChatCompletionAssistantMessageParam{}
	var text, thinking []string
	field := ""
	var calls []openai.ChatCompletionMessageToolCallUnionParam
	var details []json.RawMessage
	for _, c := range content {
		switch c.Type {
		case agent.ContentText:
			if !isBlank(c.Text) {
				text = append(text, c.Text)
			}
		case agent.ContentThinking:
			if !isBlank(c.Thinking) {
				if len(thinking) == 0 {
					field = c.ThinkingSignature
				}
				thinking = append(thinking, c.Thinking)
			}
		case agent.ContentToolCall:
			calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: jsonString(c.ArgumentsValue())},
			}})
			var d json.RawMessage
			if c.ThoughtSignature != "" && json.Unmarshal([]byte(c.ThoughtSignature), &d) == nil {
				details = append(details, d)
			}
		}
	}
	if len(text) == 0 && len(calls) == 0 {
		return nil, false
	}
	if len(text) > 0 {
		a.Content.OfString = param.NewOpt(strings.Join(text, ""))
	}
	a.ToolCalls = calls
	extra := map[string]any{}
	if field != "" {
		extra[field] = strings.Join(thinking, "\n")
	}
	if len(details) > 0 {
		extra["reasoning_details"] = details
	}
	if len(extra) > 0 {
		a.SetExtraFields(extra)
	}
	return a, true
}

// chatToolResults sends each result as a tool message with its text; tool
// messages cannot carry images, so those follow in one user message.
func (m *openAIModel) chatToolResults(results []agent.Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	images := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("Attached image(s) from tool result:")}
	for _, r := range results {
		var texts []string
		for _, c := range r.Content {
			switch c.Type {
			case agent.ContentText:
				texts = append(texts, c.Text)
			case agent.ContentImage:
				if m.info.images {
					images = append(images, chatImage(c))
				}
			}
		}
		text := strings.Join(texts, "\n")
		if text == "" {
			text = "(see attached image)"
		}
		out = append(out, openai.ToolMessage(text, r.ToolCallID))
	}
	if len(images) > 1 {
		out = append(out, openai.UserMessage(images))
	}
	return out
}
