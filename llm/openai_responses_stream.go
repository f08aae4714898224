package llm

import (
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/durable-agents/agentloop/agent"
)

// responsesStream turns Responses API events into the assembler's calls, as
// pi-ai's processResponsesStream does: one block per output item, open
// from output_item.added to output_item.done.
type responsesStream struct {
	a *assembler
	// item is the type of the open output item, block its content index
	// (-1 when none is open).
	item  string
	block int
	// parts are the types of the open item's parts (summary parts of a
	// reasoning item, output_text or refusal parts of a message); deltas
	// only count when the last part is of their kind.
	parts     []string
	completed bool
	unhandled string
	// err is a failure reported inside the stream.
	err *Error
}

func newResponsesStream(a *assembler) *responsesStream {
	return &responsesStream{a: a, block: -1}
}

func (s *responsesStream) handle(ev responses.ResponseStreamEventUnion) {
	switch ev.Type {
	case "response.created":
		s.a.msg.ResponseID = ev.Response.ID
	case "response.output_item.added":
		s.itemAdded(ev.Item)
	case "response.reasoning_summary_part.added":
		if s.item == "reasoning" {
			s.parts = append(s.parts, "summary_text")
		}
	case "response.reasoning_summary_text.delta":
		if s.open(agent.ContentThinking, "reasoning") && len(s.parts) > 0 {
			s.a.thinkingDelta(s.block, ev.Delta)
		}
	case "response.reasoning_summary_part.done":
		if s.open(agent.ContentThinking, "reasoning") && len(s.parts) > 0 {
			s.a.thinkingDelta(s.block, "\n\n")
		}
	case "response.reasoning_text.delta":
		if s.open(agent.ContentThinking, "reasoning") {
			s.a.thinkingDelta(s.block, ev.Delta)
		}
	case "response.content_part.added":
		if s.item == "message" && (ev.Part.Type == "output_text" || ev.Part.Type == "refusal") {
			s.parts = append(s.parts, ev.Part.Type)
		}
	case "response.output_text.delta":
		if s.open(agent.ContentText, "message") && s.lastPart() == "output_text" {
			s.a.textDelta(s.block, ev.Delta)
		}
	case "response.refusal.delta":
		if s.open(agent.ContentText, "message") && s.lastPart() == "refusal" {
			s.a.textDelta(s.block, ev.Delta)
		}
	case "response.function_call_arguments.delta":
		if s.open(agent.ContentToolCall, "function_call") {
			s.a.toolDelta(s.block, ev.Delta)
		}
	case "response.function_call_arguments.done":
		if s.open(agent.ContentToolCall, "function_call") {
			s.argumentsDone(ev.Arguments)
		}
	case "response.output_item.done":
		s.itemDone(ev.Item)
	case "response.completed", "response.incomplete":
		// pi reads only response.completed; an incomplete response (the
		// output limit reached) carries usage and status just the same.
		s.responseDone(ev.Response)
	case "error":
		s.err = classifyStatus(statusOfCode(ev.Code), nil, "Error Code "+ev.Code+": "+ev.Message, ev.Code)
	case "response.failed":
		s.failed(ev.Response)
	}
}

// open reports whether a block of the given type is open for an item of
// the given type.
func (s *responsesStream) open(blockType, itemType string) bool {
	return s.item == itemType && s.block >= 0 && s.a.msg.Content[s.block].Type == blockType
}

func (s *responsesStream) lastPart() string {
	if len(s.parts) == 0 {
		return ""
	}
	return s.parts[len(s.parts)-1]
}

func (s *responsesStream) itemAdded(item responses.ResponseOutputItemUnion) {
	var c agent.Content
	switch item.Type {
	case "reasoning":
		c = agent.Content{Type: agent.ContentThinking}
	case "message":
		c = agent.Content{Type: agent.ContentText}
	case "function_call":
		// The id keeps both the call id, which the result answers, and the
		// item id, which the call is sent back under.
		c = agent.ToolCall(item.CallID+"|"+item.ID, item.Name, map[string]any{})
	default:
		return
	}
	s.item, s.parts = item.Type, nil
	s.block = s.a.startBlock(c)
	if c.Type == agent.ContentToolCall {
		s.a.setArgs(s.block, item.Arguments.OfString)
	}
}

// argumentsDone takes the complete arguments; the part not yet streamed is
// emitted as a last delta.
func (s *responsesStream) argumentsDone(full string) {
	prev := s.a.argsText(s.block)
	if rest, ok := strings.CutPrefix(full, prev); ok && rest != "" {
		s.a.toolDelta(s.block, rest)
		return
	}
	s.a.setArgs(s.block, full)
	s.a.parseArgs(s.block)
}

// itemDone closes the open block with the item's final form: the reasoning
// item itself is the thinking's signature, and the message id the text's.
func (s *responsesStream) itemDone(item responses.ResponseOutputItemUnion) {
	switch {
	case item.Type == "reasoning" && s.open(agent.ContentThinking, "reasoning"):
		c := &s.a.msg.Content[s.block]
		if text := reasoningText(item); text != "" {
			c.Thinking = text
		}
		c.ThinkingSignature = item.RawJSON()
	case item.Type == "message" && s.open(agent.ContentText, "message"):
		var text strings.Builder
		for _, part := range item.Content {
			if part.Type == "output_text" {
				text.WriteString(part.Text)
			} else {
				text.WriteString(part.Refusal)
			}
		}
		c := &s.a.msg.Content[s.block]
		c.Text = text.String()
		c.TextSignature = encodeTextSignature(item.ID, string(item.Phase))
	case item.Type == "function_call" && s.open(agent.ContentToolCall, "function_call"):
		if s.a.argsText(s.block) == "" {
			s.a.setArgs(s.block, orDefault(item.Arguments.OfString, "{}"))
		}
	default:
		return
	}
	s.a.endBlock(s.block)
	s.item, s.block, s.parts = "", -1, nil
}

// reasoningText is the summary, or else the raw reasoning, of an item.
func reasoningText(item responses.ResponseOutputItemUnion) string {
	var summary, content []string
	for _, p := range item.Summary {
		summary = append(summary, p.Text)
	}
	for _, p := range item.Content {
		content = append(content, p.Text)
	}
	return orDefault(strings.Join(summary, "\n\n"), strings.Join(content, "\n\n"))
}
