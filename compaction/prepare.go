package compaction

import (
	"errors"

	"github.com/durable-agents/agentloop/agent"
)

// Why PrepareCompaction finds nothing to do, in the words pi's
// AgentSession.compact() throws.
var (
	ErrAlreadyCompacted = errors.New("Already compacted")
	ErrNothingToCompact = errors.New("Nothing to compact (session too small)")
)

// Preparation is what a compaction summarizes and keeps (pi's
// CompactionPreparation). Indexes are into History.Messages. Its JSON
// carries the messages too, so BuildRequests gives the same requests after a
// round trip (an activity input, say).
type Preparation struct {
	// FirstKept is the first message kept (pi's firstKeptEntryId).
	FirstKept int `json:"firstKept"`
	// SummarizeFrom is the first message summarized: the previous
	// compaction's FirstKept, or 0.
	SummarizeFrom int `json:"summarizeFrom"`
	// TurnStart is the user message that starts the split turn, -1 when the
	// cut does not split a turn.
	TurnStart int `json:"turnStart"`
	// At is len(History.Messages): the new compaction comes after them.
	At int `json:"at"`
	// MessagesToSummarize are Messages[SummarizeFrom:TurnStart] for a split
	// turn, else Messages[SummarizeFrom:FirstKept]. They may be none: pi
	// still asks for a summary then (see doc.go).
	MessagesToSummarize []agent.Message `json:"messagesToSummarize"`
	// TurnPrefixMessages are Messages[TurnStart:FirstKept] for a split turn:
	// the start of a turn too large to keep whole.
	TurnPrefixMessages []agent.Message `json:"turnPrefixMessages"`
	IsSplitTurn        bool            `json:"isSplitTurn"`
	// TokensBefore is the context's estimated size now (History.ContextTokens).
	TokensBefore int `json:"tokensBefore"`
	// PreviousSummary is the previous compaction's summary, "" for none; the
	// summarizer is asked to update it.
	PreviousSummary string `json:"previousSummary,omitempty"`
	// FileOps are the files the previous compaction listed and those the
	// summarized messages and the turn prefix read, wrote or edited.
	FileOps  FileOps  `json:"fileOps"`
	Settings Settings `json:"settings"`
}

// PrepareCompaction decides what a compaction of h summarizes and keeps (pi's
// prepareCompaction): it cuts the messages since the previous compaction's
// first kept message so that about Settings.KeepRecentTokens stay, and
// gathers what the summarizer needs. It fails with ErrAlreadyCompacted when
// no message came after the last compaction, and ErrNothingToCompact for a
// session without messages; it does not look at Settings.Enabled.
func PrepareCompaction(h History, s Settings) (Preparation, error) {
	if err := h.Validate(); err != nil {
		return Preparation{}, err
	}
	if h.Last != nil && h.Last.At == len(h.Messages) {
		return Preparation{}, ErrAlreadyCompacted
	}
	if len(h.Messages) == 0 {
		return Preparation{}, ErrNothingToCompact
	}
	p := Preparation{At: len(h.Messages), TurnStart: -1, Settings: s, TokensBefore: h.ContextTokens().Tokens}
	if h.Last != nil {
		p.SummarizeFrom = h.Last.FirstKept
		p.PreviousSummary = h.Last.Summary
		if d := h.Last.Details; d != nil {
			// pi adds readFiles to read and modifiedFiles to edited.
			for _, f := range d.ReadFiles {
				addPath(&p.FileOps.Read, f)
			}
			for _, f := range d.ModifiedFiles {
				addPath(&p.FileOps.Edited, f)
			}
		}
	}
	cut := FindCutPoint(h.Messages, p.SummarizeFrom, len(h.Messages), s.KeepRecentTokens)
	p.FirstKept, p.IsSplitTurn = cut.FirstKept, cut.IsSplitTurn
	historyEnd := cut.FirstKept
	if cut.IsSplitTurn {
		p.TurnStart = cut.TurnStart
		historyEnd = cut.TurnStart
		p.TurnPrefixMessages = h.Messages[cut.TurnStart:cut.FirstKept:cut.FirstKept]
	}
	p.MessagesToSummarize = h.Messages[p.SummarizeFrom:historyEnd:historyEnd]
	for _, m := range p.MessagesToSummarize {
		ExtractFileOps(m, &p.FileOps)
	}
	for _, m := range p.TurnPrefixMessages {
		ExtractFileOps(m, &p.FileOps)
	}
	return p, nil
}

// NothingToSummarize reports a preparation that summarizes no message: the
// whole session since the last compaction fits in KeepRecentTokens. pi
// compacts anyway (see doc.go); a caller may refuse instead.
func (p Preparation) NothingToSummarize() bool {
	return len(p.MessagesToSummarize) == 0 && len(p.TurnPrefixMessages) == 0
}
