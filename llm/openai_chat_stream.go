package llm

import (
	"bytes"
	"encoding/json"

	"github.com/openai/openai-go/v3"

	"github.com/durable-agents/agentloop/agent"
)

// chatStream turns Chat Completions chunks into the assembler's calls, as
// pi-ai's streamOpenAICompletions does: one text block and one thinking
// block at most, a block per tool call, all closed when the stream ends.
type chatStream struct {
	a        *assembler
	modelID  string
	text     int // content index, -1 before the first text
	thinking int
	// toolsByIndex and toolsByID find a tool call's block: by the chunk's
	// index, or by id from servers that send no index.
	toolsByIndex map[int64]int
	toolsByID    map[string]int
	finished     bool
	errorMessage string
}

func newChatStream(a *assembler, modelID string) *chatStream {
	return &chatStream{a: a, modelID: modelID, text: -1, thinking: -1, toolsByIndex: map[int64]int{}, toolsByID: map[string]int{}}
}

// reasoningFields are where OpenAI-compatible servers put reasoning text;
// the first non-empty one is used, since some send the same text in two.
var reasoningFields = []string{"reasoning_content", "reasoning", "reasoning_text"}

func (s *chatStream) handle(chunk openai.ChatCompletionChunk) {
	if s.a.msg.ResponseID == "" {
		s.a.msg.ResponseID = chunk.ID
	}
	if chunk.Model != "" && chunk.Model != s.modelID && s.a.msg.ResponseModel == "" {
		s.a.msg.ResponseModel = chunk.Model
	}
	if chunk.JSON.Usage.Valid() {
		s.setUsage(chunk.Usage)
	}
	if len(chunk.Choices) == 0 {
		return
	}
	choice := chunk.Choices[0]
	if raw, ok := choice.JSON.ExtraFields["usage"]; ok && !chunk.JSON.Usage.Valid() && raw.Valid() {
		// Moonshot and others report usage on the choice.
		var u openai.CompletionUsage
		if json.Unmarshal([]byte(raw.Raw()), &u) == nil {
			s.setUsage(u)
		}
	}
	if choice.FinishReason != "" {
		s.setFinishReason(choice.FinishReason)
	}
	d := choice.Delta
	if d.Content != "" {
		if s.text < 0 {
			s.text = s.a.startBlock(agent.Content{Type: agent.ContentText})
		}
		s.a.textDelta(s.text, d.Content)
	}
	if field, text := reasoningDelta(d); text != "" {
		if s.thinking < 0 {
			// The field name is kept as the signature, so the thinking
			// goes back in the same field next turn.
			s.thinking = s.a.startBlock(agent.Content{Type: agent.ContentThinking, ThinkingSignature: field})
		}
		s.a.thinkingDelta(s.thinking, text)
	}
	for _, tc := range d.ToolCalls {
		s.toolCallDelta(tc)
	}
	if raw, ok := d.JSON.ExtraFields["reasoning_details"]; ok {
		s.reasoningDetails(raw.Raw())
	}
}

func reasoningDelta(d openai.ChatCompletionChunkChoiceDelta) (field, text string) {
	for _, f := range reasoningFields {
		raw, ok := d.JSON.ExtraFields[f]
		if !ok {
			continue
		}
		var t string
		if json.Unmarshal([]byte(raw.Raw()), &t) == nil && t != "" {
			return f, t
		}
	}
	return "", ""
}

func (s *chatStream) toolCallDelta(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	hasIndex := tc.JSON.Index.Valid()
	i, ok := -1, false
	if hasIndex {
		i, ok = s.toolsByIndex[tc.Index]
	}
	if !ok && tc.ID != "" {
		i, ok = s.toolsByID[tc.ID]
	}
	if !ok {
		i = s.a.startBlock(agent.ToolCall(tc.ID, tc.Function.Name, map[string]any{}))
		s.a.setArgs(i, "")
	}
	if hasIndex {
		s.toolsByIndex[tc.Index] = i
	}
	call := &s.a.msg.Content[i]
	if tc.ID != "" {
		s.toolsByID[tc.ID] = i
		if call.ID == "" {
			call.ID = tc.ID
		}
	}
	if call.Name == "" {
		call.Name = tc.Function.Name
	}
	s.a.toolDelta(i, tc.Function.Arguments)
}

// reasoningDetails attaches OpenRouter's encrypted reasoning to the tool
// call it belongs to, to be sent back with it.
func (s *chatStream) reasoningDetails(raw string) {
	var details []json.RawMessage
	if json.Unmarshal([]byte(raw), &details) != nil {
		return
	}
	for _, d := range details {
		var head struct{ Type, ID, Data string }
		if json.Unmarshal(d, &head) != nil || head.Type != "reasoning.encrypted" || head.ID == "" || head.Data == "" {
			continue
		}
		for i := range s.a.msg.Content {
			if c := &s.a.msg.Content[i]; c.Type == agent.ContentToolCall && c.ID == head.ID {
				var compact bytes.Buffer
				if json.Compact(&compact, d) == nil {
					c.ThoughtSignature = compact.String()
				}
				break
			}
		}
	}
}

// setUsage normalises to pi's meaning: input excludes cached tokens, and
// cacheRead excludes tokens written to the cache in this request (some
// servers, seen on OpenRouter, count those in cached_tokens).
func (s *chatStream) setUsage(u openai.CompletionUsage) {
	cached := u.PromptTokensDetails.CachedTokens
	if !u.PromptTokensDetails.JSON.CachedTokens.Valid() {
		if raw, ok := u.JSON.ExtraFields["prompt_cache_hit_tokens"]; ok {
			_ = json.Unmarshal([]byte(raw.Raw()), &cached)
		}
	}
	write := u.PromptTokensDetails.CacheWriteTokens
	read := cached
	if write > 0 {
		read = max(0, cached-write)
	}
	input := max(0, u.PromptTokens-read-write)
	s.a.setUsage(agent.Usage{
		Input:       input,
		Output:      u.CompletionTokens,
		CacheRead:   read,
		CacheWrite:  write,
		TotalTokens: input + u.CompletionTokens + read + write,
	})
}

func (s *chatStream) setFinishReason(reason string) {
	s.finished = true
	switch reason {
	case "stop", "end":
		s.a.msg.StopReason = agent.StopReasonStop
	case "length":
		s.a.msg.StopReason = agent.StopReasonLength
	case "function_call", "tool_calls":
		s.a.msg.StopReason = agent.StopReasonToolUse
	default:
		s.a.msg.StopReason = agent.StopReasonError
		s.errorMessage = "Provider finish_reason: " + reason
	}
}

// finish closes every block in order, then ends the message.
func (s *chatStream) finish() agent.Message {
	for i := range s.a.msg.Content {
		s.a.endBlock(i)
	}
	if s.a.msg.StopReason == agent.StopReasonError {
		msg := s.errorMessage
		if msg == "" {
			msg = "Provider returned an error stop reason"
		}
		return s.a.fail(agent.StopReasonError, msg)
	}
	return s.a.done()
}
