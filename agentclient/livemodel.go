package agentclient

import (
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// liveModel follows one model turn's live stream as heartbeats bring it
// (see agentapi.LiveProgress). Each heartbeat carries the events since
// the previous one; a watcher that missed one, or came in mid-turn, waits
// for a checkpoint (the whole partial message) and delivers what it had
// not shown as one delta per content block, so that whoever prints the
// deltas (Printer) ends up with the same text.
type liveModel struct {
	attempt int32
	seq     int64          // the last stream event delivered
	partial *agent.Message // the message as the delivered events left it; nil until known
}

// beat returns the message_update events a heartbeat brings that were not
// delivered yet.
func (m *liveModel) beat(p agentapi.LiveProgress) []agent.Event {
	if p.Attempt != m.attempt {
		// Temporal retried the model call: the stream starts again.
		*m = liveModel{attempt: p.Attempt}
	}
	if p.Seq <= m.seq {
		return nil
	}
	var out []agent.StreamEvent
	var times []int64
	events := p.Events
	for len(events) > 0 && events[0].Seq <= m.seq {
		events = events[1:]
	}
	switch {
	case len(events) > 0 && events[0].Seq == m.seq+1:
		if m.seq == 0 && m.partial == nil {
			m.partial = &agent.Message{Role: agent.RoleAssistant}
		}
	case p.Partial != nil && p.PartialSeq > m.seq:
		out = m.resync(p.Partial)
		times = make([]int64, len(out)) // no one time: the text is from several events
		m.seq = p.PartialSeq
		for len(events) > 0 && events[0].Seq <= m.seq {
			events = events[1:]
		}
		if len(events) > 0 && events[0].Seq != m.seq+1 {
			events = nil
		}
	default:
		// A gap, and no checkpoint to fill it: wait for the next one.
		return nil
	}
	for _, le := range events {
		m.apply(le.Event)
		out = append(out, le.Event)
		times = append(times, le.At)
		m.seq = le.Seq
	}
	if p.Partial != nil && p.PartialSeq == m.seq {
		// The worker's own message is exact where deltas are not (tool
		// call arguments).
		m.partial = p.Partial
	}
	snapshot := m.snapshot()
	evs := make([]agent.Event, len(out))
	for i := range out {
		evs[i] = agent.Event{Type: agent.EventMessageUpdate, AssistantMessageEvent: &out[i], Message: snapshot,
			Attempt: p.Attempt, Time: times[i]}
	}
	return evs
}

// resync returns the deltas that take the text shown so far to the
// checkpoint's, and makes the checkpoint the partial message.
func (m *liveModel) resync(cp *agent.Message) []agent.StreamEvent {
	var out []agent.StreamEvent
	for i, c := range cp.Content {
		kind, text := blockText(c)
		if kind == "" {
			continue
		}
		var shown string
		if m.partial != nil && i < len(m.partial.Content) {
			_, shown = blockText(m.partial.Content[i])
		}
		if rest, ok := strings.CutPrefix(text, shown); ok && rest != "" {
			out = append(out, agent.StreamEvent{Type: kind, ContentIndex: i, Delta: rest})
		}
	}
	m.partial = cp
	return out
}

// blockText returns the delta type and text of a text or thinking block.
func blockText(c agent.Content) (kind, text string) {
	switch c.Type {
	case agent.ContentText:
		return agent.StreamTextDelta, c.Text
	case agent.ContentThinking:
		return agent.StreamThinkingDelta, c.Thinking
	}
	return "", ""
}

// apply adds a text or thinking event to the partial message; tool call
// arguments wait for the next checkpoint.
func (m *liveModel) apply(e agent.StreamEvent) {
	if m.partial == nil {
		return
	}
	var kind string
	switch e.Type {
	case agent.StreamTextStart, agent.StreamTextDelta:
		kind = agent.ContentText
	case agent.StreamThinkingStart, agent.StreamThinkingDelta:
		kind = agent.ContentThinking
	case agent.StreamToolCallStart:
		kind = agent.ContentToolCall
	default:
		return
	}
	cs := m.partial.Content
	for len(cs) <= e.ContentIndex {
		cs = append(cs, agent.Content{Type: kind})
	}
	switch e.Type {
	case agent.StreamTextDelta:
		cs[e.ContentIndex].Text += e.Delta
	case agent.StreamThinkingDelta:
		cs[e.ContentIndex].Thinking += e.Delta
	case agent.StreamToolCallStart:
		if e.ToolCall != nil {
			cs[e.ContentIndex] = *e.ToolCall
		}
	}
	m.partial.Content = cs
}

// snapshot copies the partial message for the events of one heartbeat:
// later deltas change the working copy, not what a caller was given.
func (m *liveModel) snapshot() *agent.Message {
	if m.partial == nil {
		return nil
	}
	c := *m.partial
	c.Content = slices.Clone(c.Content)
	return &c
}
