package workflows

import (
	"go.temporal.io/sdk/workflow"
	"maps"
	"slices"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// carry builds the hand-over of this workflow run.
func (l *loop) carry(paused *agentapi.PausedRun) *agentapi.Carry {
	base := agent.SegmentsLen(l.segments)
	c := &agentapi.Carry{
		Steering:     l.steering.items,
		FollowUps:    l.followUps.items,
		SteeringMode: l.steering.mode,
		FollowUpMode: l.followUps.mode,
		Usage:        l.usage,
		Turn:         l.turn,
		ToolCalls:    l.toolCalls,
		NextSeq:      l.events.last() + 1,
		Allowed:      slices.Sorted(maps.Keys(l.allowed)),
		Segments:     l.segments,
		Hash:         l.context.HashAt(base),
		Messages:     l.context.Since(base),
		RunStart:     l.runStart,
		RunEarlier:   l.runEarlier,
		LastRole:     l.lastRole,
		Compaction:   l.compact.last,
		CompactedAt:  l.compact.at,
		Compactions:  l.compact.count,
		TokensSaved:  l.compact.tokensSaved,
		Run:          paused,
		HostQueue:    l.hostQueue,
		StoreID:      l.storeID,
		Updates:      l.updates.items,
		Dropped:      l.inputs.dropped,
	}
	if l.lastAssistant.Role != "" {
		m := l.lastAssistant
		c.LastAssistant = &m
	}
	if paused != nil && paused.Batch != nil {
		l.carryChildren(paused.Batch)
	}
	settings := l.settings
	c.Settings = &settings
	return c
}

// restore takes over what the previous run carried. The transcript starts
// after the carried segments.
func (l *loop) restore(c *agentapi.Carry) {
	if c == nil {
		return
	}
	l.resolvedBefore = true
	l.steering.items, l.followUps.items = c.Steering, c.FollowUps
	if c.SteeringMode != "" {
		l.steering.mode = c.SteeringMode
	}
	if c.FollowUpMode != "" {
		l.followUps.mode = c.FollowUpMode
	}
	l.usage, l.turn, l.toolCalls = c.Usage, c.Turn, c.ToolCalls
	l.turnsAtStart = c.Turn
	l.events.first = c.NextSeq
	for _, t := range c.Allowed {
		l.allowed[t] = true
	}
	l.segments = c.Segments
	l.context = agent.NewTranscriptAt(l.cfg.SystemPrompt, agent.SegmentsLen(c.Segments), c.Hash)
	l.context.Append(c.Messages...)
	l.runStart, l.runEarlier, l.lastRole = c.RunStart, c.RunEarlier, c.LastRole
	l.compact.last, l.compact.at = c.Compaction, c.CompactedAt
	l.compact.count, l.compact.tokensSaved = c.Compactions, c.TokensSaved
	l.inRun = c.Run != nil
	if c.Settings != nil {
		l.settings = *c.Settings
	}
	if c.LastAssistant != nil {
		l.lastAssistant = *c.LastAssistant
	}
	l.hostQueue = c.HostQueue
	l.storeID = c.StoreID
	l.updates.items = c.Updates
	l.inputs.dropped = c.Dropped
	if c.Run != nil && c.Run.Batch != nil {
		l.restoreChildren(c.Run.Batch)
	}
}

// shouldContinueAsNew says whether the run should stop between two turns (or
// while a session is idle) to continue as new: the server suggests it, or
// the run has had its configured number of turns, or its history its
// configured number of events. An aborted or cancelled
// run finishes where it is.
func (l *loop) shouldContinueAsNew(ctx workflow.Context) bool {
	if l.aborted || l.cancelled {
		return false
	}
	if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return true
	}
	if l.turn > l.turnsAtStart && l.historyFull(ctx) {
		// A run that has had no turn yet would only continue again.
		return true
	}
	n := l.continueAfterTurns
	return n > 0 && l.turn-l.turnsAtStart >= n
}
