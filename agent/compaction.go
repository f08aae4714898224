package agent

// Compaction events, as pi's coding agent names them: a compaction
// replaces the oldest part of the context with a summary (package
// compaction). They are not pi-agent-core events: the conformance traces
// never hold them.
const (
	EventCompactionStart EventType = "compaction_start"
	EventCompactionEnd   EventType = "compaction_end"
)

// Reasons for a compaction.
const (
	CompactionThreshold = "threshold" // the context neared the model's window
	CompactionOverflow  = "overflow"  // the provider refused the context as too long
	CompactionManual    = "manual"    // a person asked (the compact Update)
)

// CompactionInfo is the payload of the compaction events.
type CompactionInfo struct {
	Reason string `json:"reason"`
	// Result is set on a compaction_end that compacted.
	Result *CompactionResult `json:"result,omitempty"`
	// Aborted is set when an abort ended the compaction; the context is
	// as it was.
	Aborted bool `json:"aborted,omitempty"`
	// WillRetry says the model turn the provider refused is sent again.
	WillRetry bool `json:"willRetry,omitempty"`
	// ErrorMessage says why a compaction failed or was refused.
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// CompactionResult is what a compaction did.
type CompactionResult struct {
	// Summary is the message that now stands for the summarized ones.
	Summary *Message `json:"summary"`
	// FirstKept indexes, in the context before, the first message kept.
	FirstKept    int `json:"firstKept"`
	Summarized   int `json:"summarized"`
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	SummaryChars int `json:"summaryChars"`
	// Usage is what the summarizer calls cost.
	Usage Usage `json:"usage"`
}

// CompactionDetails are pi's CompactionDetails: the files read (and not
// modified) and modified in everything a summary covers, sorted. Package
// compaction computes them; a run carries the latest across
// continue-as-new (agentapi.CompactionRecord).
type CompactionDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}
