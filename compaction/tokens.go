package compaction

import "github.com/durable-agents/agentloop/agent"

// imageChars is what pi counts for an image in a tool result: 4800
// characters, 1200 tokens.
const imageChars = 4800

// EstimateTokens estimates a message's tokens as characters / 4, rounded up
// (pi's estimateTokens). As in pi it counts the text of user messages (not
// their images), the text, thinking and tool calls (name and JSON arguments)
// of assistant messages, and the text and images of tool results. Characters
// are UTF-16 code units, as JavaScript counts them.
//
// Content held in the content store (a block with a Blob stub) counts as
// empty: resolve stubs before estimating.
func EstimateTokens(m agent.Message) int {
	chars := 0
	switch m.Role {
	case agent.RoleUser:
		for _, c := range m.Content {
			if c.Type == agent.ContentText {
				chars += jsLen(c.Text)
			}
		}
	case agent.RoleAssistant:
		for _, c := range m.Content {
			switch c.Type {
			case agent.ContentText:
				chars += jsLen(c.Text)
			case agent.ContentThinking:
				chars += jsLen(c.Thinking)
			case agent.ContentToolCall:
				chars += jsLen(c.Name) + jsLen(argumentsJSON(c.Arguments))
			}
		}
	case agent.RoleToolResult:
		for _, c := range m.Content {
			switch c.Type {
			case agent.ContentText:
				chars += jsLen(c.Text)
			case agent.ContentImage:
				chars += imageChars
			}
		}
	}
	return ceilQuarter(chars)
}

// estimateSummaryTokens is estimateTokens of pi's compactionSummary message:
// the summary's characters, without the text that wraps it for the model.
func estimateSummaryTokens(summary string) int { return ceilQuarter(jsLen(summary)) }

func ceilQuarter(chars int) int { return (chars + 3) / 4 }

// argumentsJSON is JSON.stringify(arguments); pi's transcript always has an
// object there, which a nil map stands for.
func argumentsJSON(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	return jsStringify(args)
}

// CalculateContextTokens is the context size a model call reports: its
// totalTokens, or when that is 0 the sum of input, output, cacheRead and
// cacheWrite (pi's calculateContextTokens).
func CalculateContextTokens(u agent.Usage) int {
	if u.TotalTokens != 0 {
		return int(u.TotalTokens)
	}
	return int(u.Input + u.Output + u.CacheRead + u.CacheWrite)
}

// ContextUsage is pi's ContextUsageEstimate.
type ContextUsage struct {
	// Tokens is UsageTokens + TrailingTokens: the context's size.
	Tokens int `json:"tokens"`
	// UsageTokens is what the last usable assistant message reported.
	UsageTokens int `json:"usageTokens"`
	// TrailingTokens estimates the messages after it (all messages when
	// none reported usage).
	TrailingTokens int `json:"trailingTokens"`
	// LastUsageIndex is that message's index, -1 when there is none (pi: null).
	LastUsageIndex int `json:"lastUsageIndex"`
}

// usableUsage is pi's getAssistantUsage: an assistant message's usage unless
// it was aborted or failed. A message without usage reports zeros, as pi
// reads the JSON agent.Message writes for it.
func usableUsage(m agent.Message) (agent.Usage, bool) {
	if m.Role != agent.RoleAssistant || m.StopReason.Unanswered() {
		return agent.Usage{}, false
	}
	if m.Usage == nil {
		return agent.Usage{}, true
	}
	return *m.Usage, true
}

// EstimateContextTokens estimates the context the messages make: the usage
// the last successful assistant message reported plus an estimate of the
// messages after it (pi's estimateContextTokens). For a session that has
// been compacted use History.ContextTokens, which counts the summary as pi does.
func EstimateContextTokens(messages []agent.Message) ContextUsage {
	return estimateContext(len(messages), func(i int) agent.Message { return messages[i] }, func(i int) int {
		return EstimateTokens(messages[i])
	})
}

// estimateContext is estimateContextTokens over n messages, read through at
// and estimated through estimate, so a summary can stand at index 0.
func estimateContext(n int, at func(int) agent.Message, estimate func(int) int) ContextUsage {
	last := -1
	var usage agent.Usage
	for i := n - 1; i >= 0; i-- {
		if u, ok := usableUsage(at(i)); ok {
			last, usage = i, u
			break
		}
	}
	trailing := 0
	for i := last + 1; i < n; i++ {
		trailing += estimate(i)
	}
	if last < 0 {
		return ContextUsage{Tokens: trailing, TrailingTokens: trailing, LastUsageIndex: -1}
	}
	used := CalculateContextTokens(usage)
	return ContextUsage{Tokens: used + trailing, UsageTokens: used, TrailingTokens: trailing, LastUsageIndex: last}
}
