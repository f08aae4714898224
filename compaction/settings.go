package compaction

// Settings are pi's CompactionSettings.
type Settings struct {
	// Enabled turns automatic compaction on; ShouldCompact is false without it.
	Enabled bool `json:"enabled"`
	// ReserveTokens is the room left in the context window for the next
	// answer: compaction starts when the context is larger than the window
	// minus this. The summary's maxTokens is derived from it too.
	ReserveTokens int `json:"reserveTokens"`
	// KeepRecentTokens is roughly how much of the recent conversation is
	// kept verbatim after a compaction.
	KeepRecentTokens int `json:"keepRecentTokens"`
}

// DefaultSettings are pi's DEFAULT_COMPACTION_SETTINGS.
var DefaultSettings = Settings{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000}

// ShouldCompact reports whether a context of contextTokens needs compacting
// in a window of contextWindow tokens (pi's shouldCompact).
func ShouldCompact(contextTokens, contextWindow int, s Settings) bool {
	if !s.Enabled {
		return false
	}
	return contextTokens > contextWindow-s.ReserveTokens
}
