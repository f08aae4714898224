package llm

import (
	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/durable-agents/agentloop/agent"
)

// anthropicStream turns Messages API stream events into the assembler's
// calls, as pi-ai's streamAnthropic does.
type anthropicStream struct {
	a *assembler
	// blocks maps the API's block index to the content index of an open
	// block; blocks of types pi ignores (server tools) are not in it.
	blocks  map[int64]int
	stopped bool
	// unhandled is a stop reason pi does not know, which ends the message
	// with an error.
	unhandled string
}

func newAnthropicStream(a *assembler) *anthropicStream {
	return &anthropicStream{a: a, blocks: map[int64]int{}}
}

func (s *anthropicStream) handle(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		s.a.msg.ResponseID = ev.Message.ID
		u := ev.Message.Usage
		s.setUsage(u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
	case "content_block_start":
		s.blockStart(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		s.blockDelta(ev.Index, ev.Delta)
	case "content_block_stop":
		if i, ok := s.blocks[ev.Index]; ok {
			delete(s.blocks, ev.Index)
			s.a.endBlock(i)
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.setStopReason(string(ev.Delta.StopReason))
		}
		s.updateUsage(ev.Usage)
	case "message_stop":
		s.stopped = true
	}
}

func (s *anthropicStream) blockStart(index int64, b anthropic.ContentBlockStartEventContentBlockUnion) {
	var c agent.Content
	switch b.Type {
	case "text":
		c = agent.Content{Type: agent.ContentText}
	case "thinking":
		c = agent.Content{Type: agent.ContentThinking}
	case "redacted_thinking":
		// The encrypted data goes back to Claude as the signature.
		c = agent.Content{Type: agent.ContentThinking, Thinking: "[Reasoning redacted]", ThinkingSignature: b.Data, Redacted: true}
	case "tool_use":
		args, _ := b.Input.(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		c = agent.ToolCall(b.ID, b.Name, args)
	default:
		return
	}
	i := s.a.startBlock(c)
	s.blocks[index] = i
	if c.Type == agent.ContentToolCall {
		s.a.setArgs(i, "")
	}
}

func (s *anthropicStream) blockDelta(index int64, d anthropic.MessageStreamEventUnionDelta) {
	i, ok := s.blocks[index]
	if !ok {
		return
	}
	kind := s.a.msg.Content[i].Type
	switch {
	case d.Type == "text_delta" && kind == agent.ContentText:
		s.a.textDelta(i, d.Text)
	case d.Type == "thinking_delta" && kind == agent.ContentThinking:
		s.a.thinkingDelta(i, d.Thinking)
	case d.Type == "input_json_delta" && kind == agent.ContentToolCall:
		s.a.toolDelta(i, d.PartialJSON)
	case d.Type == "signature_delta" && kind == agent.ContentThinking:
		// Signatures are opaque and not streamed to clients.
		s.a.msg.Content[i].ThinkingSignature += d.Signature
	}
}

func (s *anthropicStream) setStopReason(reason string) {
	switch reason {
	case "end_turn", "pause_turn", "stop_sequence":
		s.a.msg.StopReason = agent.StopReasonStop
	case "max_tokens":
		s.a.msg.StopReason = agent.StopReasonLength
	case "tool_use":
		s.a.msg.StopReason = agent.StopReasonToolUse
	case "refusal", "sensitive":
		s.a.msg.StopReason = agent.StopReasonError
	default:
		s.unhandled = reason
	}
}

// setUsage records counts; Anthropic sends no total, so it is the sum.
func (s *anthropicStream) setUsage(input, output, cacheRead, cacheWrite int64) {
	s.a.setUsage(agent.Usage{
		Input:       input,
		Output:      output,
		CacheRead:   cacheRead,
		CacheWrite:  cacheWrite,
		TotalTokens: input + output + cacheRead + cacheWrite,
	})
}

// updateUsage takes the counts message_delta carries and keeps the others,
// since proxies often leave out the input counts there.
func (s *anthropicStream) updateUsage(u anthropic.MessageDeltaUsage) {
	cur := s.a.usage
	if u.JSON.InputTokens.Valid() {
		cur.Input = u.InputTokens
	}
	if u.JSON.OutputTokens.Valid() {
		cur.Output = u.OutputTokens
	}
	if u.JSON.CacheReadInputTokens.Valid() {
		cur.CacheRead = u.CacheReadInputTokens
	}
	if u.JSON.CacheCreationInputTokens.Valid() {
		cur.CacheWrite = u.CacheCreationInputTokens
	}
	s.setUsage(cur.Input, cur.Output, cur.CacheRead, cur.CacheWrite)
}

// finish ends a stream that reached message_stop. A refusal is an error
// message, not a failure: asking again gives the same answer.
func (s *anthropicStream) finish() agent.Message { return s.a.finish(s.unhandled) }
