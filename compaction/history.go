package compaction

import (
	"fmt"

	"github.com/durable-agents/agentloop/agent"
)

// History is a session as compaction reads it: its messages and its latest
// compaction. pi keeps the same in its session entries: the messages, and
// a compaction entry after the last message it saw.
type History struct {
	// Messages are the session's messages, oldest first. Those before
	// Last.FirstKept are never read: a caller that no longer holds them may
	// pass only Messages[Last.FirstKept:] with the indexes of Last shifted
	// to match (FirstKept 0).
	Messages []agent.Message `json:"messages"`
	// Last is the latest compaction, nil before the first.
	Last *Compaction `json:"last,omitempty"`
}

// Compaction records one compaction: pi's CompactionEntry, with message
// indexes where pi has entry ids.
type Compaction struct {
	// Summary is the summary the model sees in place of the messages before
	// FirstKept, file lists included.
	Summary string `json:"summary"`
	// FirstKept is the index in History.Messages of the first message kept
	// (pi's firstKeptEntryId).
	FirstKept int `json:"firstKept"`
	// At is how many messages the session had when the compaction was made:
	// pi's compaction entry stands between Messages[At-1] and Messages[At].
	At int `json:"at"`
	// TokensBefore is the context's estimated size before the compaction.
	TokensBefore int `json:"tokensBefore"`
	// Details carries the file lists to the next compaction. Nil when the
	// summary came from elsewhere (pi: fromHook, or no details).
	Details *agent.CompactionDetails `json:"details,omitempty"`
	// Timestamp is when it was made, in milliseconds since the Unix epoch;
	// the summary message carries it.
	Timestamp int64 `json:"timestamp"`
}

// Validate reports a Last whose indexes do not fit Messages.
func (h History) Validate() error {
	if c := h.Last; c != nil && (c.FirstKept < 0 || c.At < c.FirstKept || c.At > len(h.Messages)) {
		return fmt.Errorf("compaction keeps messages %d to %d of a history of %d", c.FirstKept, c.At, len(h.Messages))
	}
	return nil
}

// SummaryMessage is the message that stands for the compacted messages in
// the context: a user message with the summary wrapped in pi's text
// (pi's createCompactionSummaryMessage as convertToLlm sends it).
func SummaryMessage(c Compaction) agent.Message {
	return agent.UserText(SummaryPrefix+c.Summary+SummarySuffix, c.Timestamp)
}

// Context returns the messages the model is sent: the summary message and
// the messages from Last.FirstKept on, or every message before the first
// compaction (pi's buildSessionContext followed by convertToLlm). The
// returned slice shares the messages with h.
func (h History) Context() []agent.Message {
	if h.Last == nil {
		return h.Messages
	}
	kept := h.Messages[h.Last.FirstKept:]
	out := make([]agent.Message, 0, 1+len(kept))
	out = append(out, SummaryMessage(*h.Last))
	return append(out, kept...)
}

// ContextTokens estimates the size of the context the model is sent, as pi
// estimates its session context (estimateContextTokens over
// buildSessionContext): the summary counts as its own characters / 4.
// LastUsageIndex indexes Context().
func (h History) ContextTokens() ContextUsage {
	if h.Last == nil {
		return EstimateContextTokens(h.Messages)
	}
	kept := h.Messages[h.Last.FirstKept:]
	at := func(i int) agent.Message {
		if i == 0 {
			return agent.Message{Role: "compactionSummary"}
		}
		return kept[i-1]
	}
	estimate := func(i int) int {
		if i == 0 {
			return estimateSummaryTokens(h.Last.Summary)
		}
		return EstimateTokens(kept[i-1])
	}
	return estimateContext(1+len(kept), at, estimate)
}
