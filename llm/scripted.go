package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/durable-agents/agentloop/agent"
)

// ScriptedProviderName is the provider name the scripted model is usually
// registered under.
const ScriptedProviderName = "scripted"

// NoMoreResponses is the errorMessage when a script has run out (pi-ai's
// faux provider text).
const NoMoreResponses = "No more faux responses queued"

// ScriptedResponse is one scripted answer, in the conformance scenario
// format: content blocks, an optional stopReason (toolUse when the content
// has a tool call, else stop) and an optional errorMessage.
type ScriptedResponse struct {
	Content      []agent.Content  `json:"content"`
	StopReason   agent.StopReason `json:"stopReason,omitempty"`
	ErrorMessage string           `json:"errorMessage,omitempty"`
}

// Script is a scripted model: the n-th call answers with the n-th response.
// The call number is the count of assistant messages in the request, so the
// script needs no state of its own and gives the same answer on every retry
// and on every worker.
type Script struct {
	Responses []ScriptedResponse
	// Reply, when set, chooses each answer from the request instead of the
	// call count (Responses is then unused): a demo model that answers
	// what it is asked. It must depend on the request alone, so that a
	// retry or another worker gives the same answer.
	Reply func(Request) ScriptedResponse
	// ChunkDelay paces streamed chunks (of about 16 characters), so a demo
	// shows text arriving; zero streams as fast as possible.
	ChunkDelay time.Duration
}

// ScriptedProvider serves scripts by model id.
type ScriptedProvider struct {
	scripts map[string]Script
}

// NewScriptedProvider returns a provider with no scripts.
func NewScriptedProvider() *ScriptedProvider {
	return &ScriptedProvider{scripts: map[string]Script{}}
}

// Add registers a script under a model id.
func (p *ScriptedProvider) Add(id string, s Script) { p.scripts[id] = s }

// Model returns the script registered under id.
func (p *ScriptedProvider) Model(id string) (Model, error) {
	s, ok := p.scripts[id]
	if !ok {
		return nil, fmt.Errorf("scripted model %q is not registered", id)
	}
	return scriptedModel{id: id, script: s}, nil
}

type scriptedModel struct {
	id     string
	script Script
}

func (m scriptedModel) Stream(ctx context.Context, req Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	if emit == nil {
		emit = func(agent.StreamEvent) {}
	}
	call := 0
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleAssistant {
			call++
		}
	}
	final := agent.Message{
		Role:     agent.RoleAssistant,
		API:      "scripted",
		Provider: ScriptedProviderName,
		Model:    m.id,
		Content:  []agent.Content{},
	}
	if m.script.Reply == nil && call >= len(m.script.Responses) {
		final.StopReason = agent.StopReasonError
		final.ErrorMessage = NoMoreResponses
		final.Usage = estimateUsage(req, final)
		emit(agent.StreamEvent{Type: agent.StreamError, Reason: string(agent.StopReasonError), Error: &final})
		return final, nil
	}
	var r ScriptedResponse
	if m.script.Reply != nil {
		r = m.script.Reply(req)
	} else {
		r = m.script.Responses[call]
	}
	final.Content = append([]agent.Content{}, r.Content...)
	final.StopReason = r.StopReason
	if final.StopReason == "" {
		final.StopReason = agent.StopReasonStop
		if len(final.ToolCalls()) > 0 {
			final.StopReason = agent.StopReasonToolUse
		}
	}
	final.ErrorMessage = r.ErrorMessage
	final.Usage = estimateUsage(req, final)
	msg := m.stream(ctx, final, emit)
	if e := ctxFailure(ctx); e != nil && msg.StopReason == agent.StopReasonAborted {
		// The worker is shutting down (or the deadline passed): the call
		// did not end, another attempt makes it again.
		return msg, e
	}
	return msg, nil
}

// stream emits pi-ai's event sequence for final, checking for abort before
// each chunk as pi's faux provider does.
func (m scriptedModel) stream(ctx context.Context, final agent.Message, emit func(agent.StreamEvent)) agent.Message {
	partial := final
	partial.Content = []agent.Content{}
	stopped := func() (agent.Message, bool) {
		if ctx.Err() == nil {
			return agent.Message{}, false
		}
		a := partial
		a.Content = append([]agent.Content{}, partial.Content...)
		a.StopReason = agent.StopReasonAborted
		a.ErrorMessage = agent.AbortedErrorMessage
		if aborted(ctx) {
			emit(agent.StreamEvent{Type: agent.StreamError, Reason: string(agent.StopReasonAborted), Error: &a})
		}
		return a, true
	}
	snapshot := func() *agent.Message {
		s := partial
		s.Content = append([]agent.Content{}, partial.Content...)
		return &s
	}
	if a, ok := stopped(); ok {
		return a
	}
	emit(agent.StreamEvent{Type: agent.StreamStart, Partial: snapshot()})
	for i, block := range final.Content {
		if a, ok := stopped(); ok {
			return a
		}
		switch block.Type {
		case agent.ContentText, agent.ContentThinking:
			kind, text := "text", block.Text
			empty := agent.Content{Type: block.Type}
			if block.Type == agent.ContentThinking {
				kind, text = "thinking", block.Thinking
			}
			partial.Content = append(partial.Content, empty)
			emit(agent.StreamEvent{Type: kind + "_start", ContentIndex: i, Partial: snapshot()})
			for _, chunk := range chunks(text) {
				if !m.pause(ctx) {
					break
				}
				if a, ok := stopped(); ok {
					return a
				}
				if kind == "text" {
					partial.Content[i].Text += chunk
				} else {
					partial.Content[i].Thinking += chunk
				}
				emit(agent.StreamEvent{Type: kind + "_delta", ContentIndex: i, Delta: chunk, Partial: snapshot()})
			}
			if a, ok := stopped(); ok {
				return a
			}
			partial.Content[i] = block
			emit(agent.StreamEvent{Type: kind + "_end", ContentIndex: i, Content: text, Partial: snapshot()})
		default:
			partial.Content = append(partial.Content, agent.Content{Type: block.Type, ID: block.ID, Name: block.Name, Arguments: map[string]any{}})
			emit(agent.StreamEvent{Type: agent.StreamToolCallStart, ContentIndex: i, Partial: snapshot()})
			args, _ := json.Marshal(block.ArgumentsValue())
			for _, chunk := range chunks(string(args)) {
				if !m.pause(ctx) {
					break
				}
				if a, ok := stopped(); ok {
					return a
				}
				emit(agent.StreamEvent{Type: agent.StreamToolCallDelta, ContentIndex: i, Delta: chunk, Partial: snapshot()})
			}
			partial.Content[i] = block
			b := block
			emit(agent.StreamEvent{Type: agent.StreamToolCallEnd, ContentIndex: i, ToolCall: &b, Partial: snapshot()})
		}
	}
	if final.StopReason == agent.StopReasonError || final.StopReason == agent.StopReasonAborted {
		emit(agent.StreamEvent{Type: agent.StreamError, Reason: string(final.StopReason), Error: &final})
	} else {
		emit(agent.StreamEvent{Type: agent.StreamDone, Reason: string(final.StopReason), Message: &final})
	}
	return final
}

// pause waits ChunkDelay; it returns false when ctx ends first.
func (m scriptedModel) pause(ctx context.Context) bool {
	if m.script.ChunkDelay <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(m.script.ChunkDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func chunks(s string) []string {
	const size = 16
	if s == "" {
		return []string{""}
	}
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := min(size, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// estimateUsage counts characters/4 as pi's faux provider does, so demos show
// plausible usage without a real tokenizer.
func estimateUsage(req Request, m agent.Message) *agent.Usage {
	in := len(req.SystemPrompt)
	for _, msg := range req.Messages {
		for _, c := range msg.Content {
			in += len(c.Text) + len(c.Thinking)
			if c.Type == agent.ContentToolCall {
				b, _ := json.Marshal(c.ArgumentsValue())
				in += len(c.Name) + len(b)
			}
		}
	}
	out := 0
	for _, c := range m.Content {
		out += len(c.Text) + len(c.Thinking)
		if c.Type == agent.ContentToolCall {
			b, _ := json.Marshal(c.ArgumentsValue())
			out += len(c.Name) + len(b)
		}
	}
	u := &agent.Usage{Input: int64((in + 3) / 4), Output: int64((out + 3) / 4)}
	u.TotalTokens = u.Input + u.Output
	return u
}
