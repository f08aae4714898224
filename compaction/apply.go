package compaction

import "github.com/durable-agents/agentloop/agent"

// Summaries are the summarizer's answers (SummaryText) to Requests.
type Summaries struct {
	History    string `json:"history"`
	TurnPrefix string `json:"turnPrefix,omitempty"`
}

// Applied is a finished compaction. Only Compaction is written as JSON: it
// is what to record; History and Context follow from it and the messages.
type Applied struct {
	// Compaction is the record to keep (pi's compaction entry).
	Compaction Compaction `json:"compaction"`
	// History is h with Compaction as its Last.
	History History `json:"-"`
	// Context is what the next model call is sent: the summary message and
	// the kept messages (History.Context()).
	Context []agent.Message `json:"-"`
}

// Apply finishes the compaction p of h with the summaries (the rest of pi's
// compact(), and AgentSession appending the entry and rebuilding the
// context): for a split turn the history summary ("No prior history." when
// no call was needed) and the turn prefix's are joined under "**Turn Context
// (split turn):**"; the file lists are appended; the new compaction keeps
// the messages from p.FirstKept on.
func Apply(h History, p Preparation, s Summaries, timestamp int64) Applied {
	summary := s.History
	if p.IsSplitTurn && len(p.TurnPrefixMessages) > 0 {
		if len(p.MessagesToSummarize) == 0 {
			summary = noPriorHistory
		}
		summary += splitTurnHeader + s.TurnPrefix
	}
	details := ComputeFileLists(p.FileOps)
	c := Compaction{
		Summary:      summary + FormatFileOperations(details),
		FirstKept:    p.FirstKept,
		At:           p.At,
		TokensBefore: p.TokensBefore,
		Details:      &details,
		Timestamp:    timestamp,
	}
	next := History{Messages: h.Messages, Last: &c}
	return Applied{Compaction: c, History: next, Context: next.Context()}
}
