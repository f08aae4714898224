package compaction

import (
	"strconv"
	"strings"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/internal/jsjson"
)

// toolResultMaxChars is how much of a tool result's text the summarizer is
// shown (pi's TOOL_RESULT_MAX_CHARS).
const toolResultMaxChars = 2000

// truncateForSummary keeps the first maxChars of text and says how many
// characters were left out (pi's truncateForSummary).
func truncateForSummary(text string, maxChars int) string {
	n := jsLen(text)
	if n <= maxChars {
		return text
	}
	return jsSlice(text, maxChars) + "\n\n[... " + strconv.Itoa(n-maxChars) + " more characters truncated]"
}

// textsJoined joins the text blocks of content with no separator, as
// serializeConversation does for user messages and tool results (unlike
// agent.TextOf, which puts newlines between them).
func textsJoined(content []agent.Content) string {
	var b strings.Builder
	for _, c := range content {
		if c.Type == agent.ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// SerializeConversation writes messages as the text the summarizer reads, so
// that it summarizes the conversation rather than continuing it (pi's
// serializeConversation): "[User]: ", "[Assistant thinking]: ",
// "[Assistant]: ", "[Assistant tool calls]: name(key=json, ...)" and
// "[Tool result]: " (cut to 2000 characters) paragraphs.
func SerializeConversation(messages []agent.Message) string {
	var parts []string
	for _, m := range messages {
		switch m.Role {
		case agent.RoleUser:
			if text := textsJoined(m.Content); text != "" {
				parts = append(parts, "[User]: "+text)
			}
		case agent.RoleAssistant:
			var texts, thinking, calls []string
			for _, c := range m.Content {
				switch c.Type {
				case agent.ContentText:
					texts = append(texts, c.Text)
				case agent.ContentThinking:
					thinking = append(thinking, c.Thinking)
				case agent.ContentToolCall:
					calls = append(calls, c.Name+"("+formatArguments(c.Arguments)+")")
				}
			}
			if len(thinking) > 0 {
				parts = append(parts, "[Assistant thinking]: "+strings.Join(thinking, "\n"))
			}
			if len(texts) > 0 {
				parts = append(parts, "[Assistant]: "+strings.Join(texts, "\n"))
			}
			if len(calls) > 0 {
				parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
			}
		case agent.RoleToolResult:
			if text := textsJoined(m.Content); text != "" {
				parts = append(parts, "[Tool result]: "+truncateForSummary(text, toolResultMaxChars))
			}
		}
	}
	return strings.Join(parts, "\n\n")
}

// formatArguments writes key=JSON pairs in JavaScript's key order.
func formatArguments(args map[string]any) string {
	pairs := make([]string, 0, len(args))
	for _, k := range jsjson.Keys(args) {
		pairs = append(pairs, k+"="+jsStringify(args[k]))
	}
	return strings.Join(pairs, ", ")
}
