package compaction

import "github.com/durable-agents/agentloop/agent"

// CutPoint is pi's CutPointResult, in message indexes.
type CutPoint struct {
	// FirstKept is the index of the first message kept.
	FirstKept int `json:"firstKeptEntryIndex"`
	// TurnStart is the user message that starts the turn FirstKept is in,
	// when the cut splits that turn; -1 otherwise.
	TurnStart int `json:"turnStartIndex"`
	// IsSplitTurn says the cut falls inside a turn: FirstKept is not a
	// user message and the turn's user message is in range.
	IsSplitTurn bool `json:"isSplitTurn"`
}

// isCutPoint is pi's findValidCutPoints test: a context may start at a user
// or assistant message, never at a tool result, which must follow its call.
func isCutPoint(m agent.Message) bool {
	return m.Role == agent.RoleUser || m.Role == agent.RoleAssistant
}

// FindTurnStartIndex returns the index of the user message that starts the
// turn holding messages[index], looking no further back than start; -1 when
// there is none (pi's findTurnStartIndex).
func FindTurnStartIndex(messages []agent.Message, index, start int) int {
	for i := index; i >= start; i-- {
		if messages[i].Role == agent.RoleUser {
			return i
		}
	}
	return -1
}

// FindCutPoint finds where to cut messages[start:end] so that about
// keepRecentTokens of the newest messages are kept (pi's findCutPoint):
// walking back from the newest message it adds up estimates until they
// reach keepRecentTokens, then cuts at the first valid cut point at or after
// that message. With no valid cut point it keeps everything from start;
// when nothing reaches the budget it keeps from the first cut point.
func FindCutPoint(messages []agent.Message, start, end, keepRecentTokens int) CutPoint {
	var cutPoints []int
	for i := start; i < end; i++ {
		if isCutPoint(messages[i]) {
			cutPoints = append(cutPoints, i)
		}
	}
	if len(cutPoints) == 0 {
		return CutPoint{FirstKept: start, TurnStart: -1}
	}
	cut := cutPoints[0]
	accumulated := 0
	for i := end - 1; i >= start; i-- {
		accumulated += EstimateTokens(messages[i])
		if accumulated >= keepRecentTokens {
			for _, c := range cutPoints {
				if c >= i {
					cut = c
					break
				}
			}
			break
		}
	}
	// pi then moves the cut back over non-message entries (model and
	// thinking-level changes); a History holds only messages.
	if messages[cut].Role == agent.RoleUser {
		return CutPoint{FirstKept: cut, TurnStart: -1}
	}
	turnStart := FindTurnStartIndex(messages, cut, start)
	return CutPoint{FirstKept: cut, TurnStart: turnStart, IsSplitTurn: turnStart != -1}
}
