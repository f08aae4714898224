package compaction

import (
	"errors"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// fuzzHistory reads a history from bytes: each byte is a message (its low
// bits the role, the rest its size), a 0xff byte a compaction point.
func fuzzHistory(data []byte) History {
	var h History
	for i, b := range data {
		if b == 0xff && len(h.Messages) > 0 && (h.Last == nil || h.Last.At < len(h.Messages)) {
			first := int(data[(i+1)%len(data)]) % len(h.Messages)
			if h.Last != nil && first < h.Last.FirstKept {
				first = h.Last.FirstKept
			}
			h.Last = &Compaction{Summary: "s", FirstKept: first, At: len(h.Messages), Details: &agent.CompactionDetails{ReadFiles: []string{"a"}}}
			continue
		}
		text := strings.Repeat("x", int(b>>2)*7)
		switch b & 3 {
		case 0:
			h.Messages = append(h.Messages, agent.UserText(text, 0))
		case 1:
			h.Messages = append(h.Messages, agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{
				agent.Text(text), agent.ToolCall("c", "read", map[string]any{"path": text[:min(3, len(text))]})}, StopReason: agent.StopReasonToolUse})
		case 2:
			h.Messages = append(h.Messages, agent.Message{Role: agent.RoleToolResult, ToolCallID: "c", Content: []agent.Content{agent.Text(text)}})
		default:
			h.Messages = append(h.Messages, agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text(text)},
				Usage: &agent.Usage{TotalTokens: int64(b)}, StopReason: agent.StopReasonStop})
		}
	}
	return h
}

// The cut never separates a tool result from its call unless nothing else
// can be cut, and a compaction partitions the messages since the last one.
func FuzzPrepareCompaction(f *testing.F) {
	f.Add([]byte{0, 1, 2, 2, 3, 0, 1, 2, 3}, 10)
	f.Add([]byte{0, 1, 2, 0xff, 1, 1, 2, 5, 6, 0xff, 7}, 0)
	f.Fuzz(func(t *testing.T, data []byte, keep int) {
		h := fuzzHistory(data)
		p, err := PrepareCompaction(h, Settings{Enabled: true, ReserveTokens: 100, KeepRecentTokens: keep})
		if err != nil {
			return
		}
		if h.Messages[p.FirstKept].Role == agent.RoleToolResult {
			for _, m := range h.Messages[p.SummarizeFrom:] {
				if isCutPoint(m) {
					t.Fatalf("cut at a tool result (%d) with cut points in range", p.FirstKept)
				}
			}
		}
		if got := p.SummarizeFrom + len(p.MessagesToSummarize) + len(p.TurnPrefixMessages); got != p.FirstKept {
			t.Fatalf("summarized %d..%d, kept from %d", p.SummarizeFrom, got, p.FirstKept)
		}
		reqs := BuildRequests(p, RequestOptions{})
		if reqs.History == nil && reqs.TurnPrefix == nil {
			t.Fatal("no summarization request")
		}
		a := Apply(h, p, Summaries{History: "h", TurnPrefix: "t"}, 1)
		if len(a.Context) != 1+len(h.Messages)-p.FirstKept {
			t.Fatalf("context of %d messages, kept from %d of %d", len(a.Context), p.FirstKept, len(h.Messages))
		}
		if _, err := PrepareCompaction(a.History, p.Settings); !errors.Is(err, ErrAlreadyCompacted) {
			t.Fatalf("compacting again: %v", err)
		}
	})
}
