package llm

import (
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// target is the model a transcript is about to be sent to.
type target struct {
	api, provider, model string
	images               bool
}

// sameModel reports whether m was written by the target model, whose
// signatures and ids it can take back as they are.
func (t target) sameModel(m agent.Message) bool {
	return m.Provider == t.provider && m.API == t.api && m.Model == t.model
}

// Placeholders for images a model cannot see (pi-ai's texts).
const (
	userImageOmitted = "(image omitted: model does not support images)"
	toolImageOmitted = "(tool image omitted: model does not support images)"
)

// transformMessages prepares a transcript for a provider, as pi-ai's
// transformMessages does: images become placeholders for a model without
// vision; thinking, signatures and tool call ids written by another model
// are made acceptable to this one (normalizeID rewrites a foreign tool call
// id, and the matching tool results follow); errored and aborted assistant
// turns are dropped; a tool call that never got a result gets an error
// result, because every provider insists on one.
func transformMessages(msgs []agent.Message, t target, normalizeID func(id string, source agent.Message) string) []agent.Message {
	renamed := map[string]string{}
	out := make([]agent.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser:
			if !t.images {
				m.Content = withoutImages(m.Content, userImageOmitted)
			}
		case agent.RoleToolResult:
			if !t.images {
				m.Content = withoutImages(m.Content, toolImageOmitted)
			}
			if id, ok := renamed[m.ToolCallID]; ok {
				m.ToolCallID = id
			}
		case agent.RoleAssistant:
			m.Content = transformAssistant(m, t, normalizeID, renamed)
		}
		out = append(out, m)
	}
	return withToolResults(out)
}

func transformAssistant(m agent.Message, t target, normalizeID func(string, agent.Message) string, renamed map[string]string) []agent.Content {
	same := t.sameModel(m)
	blocks := make([]agent.Content, 0, len(m.Content))
	for _, c := range m.Content {
		switch c.Type {
		case agent.ContentThinking:
			switch {
			case c.Redacted:
				// Encrypted thinking only the same model can read.
				if same {
					blocks = append(blocks, c)
				}
			case same && c.ThinkingSignature != "":
				blocks = append(blocks, c)
			case isBlank(c.Thinking):
			case same:
				blocks = append(blocks, c)
			default:
				blocks = append(blocks, agent.Text(c.Thinking))
			}
		case agent.ContentText:
			if !same {
				c = agent.Text(c.Text)
			}
			blocks = append(blocks, c)
		case agent.ContentToolCall:
			if !same {
				c.ThoughtSignature = ""
				if normalizeID != nil {
					if id := normalizeID(c.ID, m); id != c.ID {
						renamed[c.ID] = id
						c.ID = id
					}
				}
			}
			blocks = append(blocks, c)
		default:
			blocks = append(blocks, c)
		}
	}
	return blocks
}

// withToolResults drops errored and aborted assistant turns and gives every
// unanswered tool call a result saying none was provided.
func withToolResults(msgs []agent.Message) []agent.Message {
	out := make([]agent.Message, 0, len(msgs))
	var pending []agent.Content
	answered := map[string]bool{}
	flush := func() {
		for _, call := range pending {
			if !answered[call.ID] {
				out = append(out, agent.Message{
					Role:       agent.RoleToolResult,
					ToolCallID: call.ID,
					ToolName:   call.Name,
					Content:    []agent.Content{agent.Text("No result provided")},
					IsError:    true,
				})
			}
		}
		pending = nil
		answered = map[string]bool{}
	}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleAssistant:
			flush()
			if m.StopReason.Unanswered() {
				continue
			}
			if calls := m.ToolCalls(); len(calls) > 0 {
				pending = calls
			}
		case agent.RoleToolResult:
			answered[m.ToolCallID] = true
		case agent.RoleUser:
			flush()
		}
		out = append(out, m)
	}
	flush()
	return out
}

// withoutImages replaces each run of images with one placeholder text.
func withoutImages(content []agent.Content, placeholder string) []agent.Content {
	out := make([]agent.Content, 0, len(content))
	previousWasPlaceholder := false
	for _, c := range content {
		if c.Type == agent.ContentImage {
			if !previousWasPlaceholder {
				out = append(out, agent.Text(placeholder))
			}
			previousWasPlaceholder = true
			continue
		}
		out = append(out, c)
		previousWasPlaceholder = c.Type == agent.ContentText && c.Text == placeholder
	}
	return out
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
