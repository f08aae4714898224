package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/durable-agents/agentloop/agent"
)

// streamChat calls Chat Completions with streaming on.
func (m *openAIModel) streamChat(ctx context.Context, req Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	a := newAssembler(APIOpenAICompletions, m.p.cfg.Name, m.id, m.info.price, emit)
	var failure failedResponse
	var done doneWatch
	stream := m.p.chat.NewStreaming(ctx, m.chatRequest(req), option.WithMiddleware(captureFailure(&failure), watchDone(&done)))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return m.failed(ctx, a, err, &failure)
	}
	a.start()
	s := newChatStream(a, m.id)
	for stream.Next() {
		s.handle(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return m.failed(ctx, a, err, &failure)
	}
	if aborted(ctx) {
		return a.aborted(), nil
	}
	if !s.finished && !done.seen {
		// pi takes a stream without a finish_reason for a complete one;
		// one that did not reach [DONE] was cut, so retry instead
		// (openai_chat_done.go).
		return m.failed(ctx, a, errStreamCut, nil)
	}
	return s.finish(), nil
}

// chatRequest is pi-ai's buildParams for Chat Completions, with the
// "openai" and "openrouter" reasoning formats.
func (m *openAIModel) chatRequest(req Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         m.id,
		Messages:      m.chatMessages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
		Store:         param.NewOpt(false),
	}
	if n := m.maxTokens(req.Options); n > 0 {
		p.MaxCompletionTokens = param.NewOpt(n)
	}
	if t := req.Options.Temperature; t != nil {
		p.Temperature = param.NewOpt(*t)
	}
	if len(req.Tools) > 0 {
		p.Tools = chatTools(req.Tools)
	} else if hasToolHistory(req.Messages) {
		// Proxies in front of Anthropic want tools whenever the
		// conversation holds tool calls.
		p.Tools = []openai.ChatCompletionToolUnionParam{}
	}
	if req.Options.SessionID != "" && strings.Contains(m.p.cfg.BaseURL, "api.openai.com") {
		p.PromptCacheKey = param.NewOpt(req.Options.SessionID)
	}
	if m.isOpenRouter() && strings.HasPrefix(m.id, "anthropic/") {
		addCacheBreakpoints(&p)
	}
	level := req.Options.Reasoning
	switch {
	case !m.reasons(level):
	case m.isOpenRouter() && level != "":
		p.SetExtraFields(map[string]any{"reasoning": map[string]any{"effort": m.reasoningEffort(level)}})
	case m.isOpenRouter() && m.known && !m.info.noOff:
		p.SetExtraFields(map[string]any{"reasoning": map[string]any{"effort": "none"}})
	case !m.isOpenRouter() && level != "":
		p.ReasoningEffort = openai.ReasoningEffort(m.reasoningEffort(level))
	}
	return p
}

// maxTokens is the caller's limit, or for a known model pi's default of
// its output limit capped at 32000; zero leaves the server's default.
func (m *openAIModel) maxTokens(o agent.ModelOptions) int64 {
	if o.MaxTokens > 0 {
		return int64(o.MaxTokens)
	}
	if m.known && m.info.maxTokens > 0 {
		return int64(min(m.info.maxTokens, 32000))
	}
	return 0
}

func hasToolHistory(msgs []agent.Message) bool {
	for _, m := range msgs {
		if m.Role == agent.RoleToolResult || m.Role == agent.RoleAssistant && len(m.ToolCalls()) > 0 {
			return true
		}
	}
	return false
}

func chatTools(tools []Tool) []openai.ChatCompletionToolUnionParam {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		out = append(out, openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:        t.Name,
			Description: param.NewOpt(t.Description),
			Parameters:  schemaMap(t.Parameters),
			Strict:      param.NewOpt(false),
		}))
	}
	return out
}

// schemaMap decodes a tool's JSON schema; a tool without one takes an empty
// object.
func schemaMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

var chatIDInvalid = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// normalizeChatID shortens foreign tool call ids to what Chat Completions
// accepts: the call id of a Responses API "call|item" pair, and at most 40
// characters for OpenAI itself.
func (m *openAIModel) normalizeChatID(id string, _ agent.Message) string {
	if callID, _, ok := strings.Cut(id, "|"); ok {
		callID = chatIDInvalid.ReplaceAllString(callID, "_")
		return callID[:min(len(callID), 40)]
	}
	if m.p.cfg.Name == OpenAIProviderName && len(id) > 40 {
		return id[:40]
	}
	return id
}

// jsonString encodes v as JavaScript's JSON.stringify would: no HTML
// escaping, no trailing newline.
func jsonString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "{}"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
