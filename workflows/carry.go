package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// Carry is what a run hands over to its next run when it continues as new
// (AgentLoop and AgentSession alike), so that nothing acknowledged is lost
// and the event log goes on without a gap. It is small whatever the
// transcript's length: the transcript travels as the content store's
// segment list plus the few messages after it.
type Carry struct {
	Steering     []agent.Message `json:"steering,omitempty"`
	FollowUps    []agent.Message `json:"followUps,omitempty"`
	SteeringMode agent.QueueMode `json:"steeringMode,omitempty"`
	FollowUpMode agent.QueueMode `json:"followUpMode,omitempty"`
	Usage        agent.Usage     `json:"usage"`
	Turn         int             `json:"turn"`
	Runs         int             `json:"runs"`
	// ToolCalls counts the tool calls the budget let through.
	ToolCalls int      `json:"toolCalls,omitempty"`
	NextSeq   int64    `json:"nextSeq"`
	Allowed   []string `json:"allowed,omitempty"`
	// Segments hold the transcript's first messages, Hash is the chain
	// hash after them, and Messages are the messages that follow.
	Segments []agent.Segment `json:"segments,omitempty"`
	Hash     string          `json:"hash,omitempty"`
	Messages []agent.Message `json:"messages,omitempty"`
	// RunStart is where the current (or last) run's messages begin, and
	// RunEarlier where its messages before are (see loop.newMessages).
	RunStart   int                  `json:"runStart"`
	RunEarlier []agent.MessageRange `json:"runEarlier,omitempty"`
	LastRole   string               `json:"lastRole,omitempty"`
	// Compaction is the latest compaction; CompactedAt the context's
	// length right after it; Compactions and TokensSaved count them all.
	Compaction  *activities.CompactionRecord `json:"compaction,omitempty"`
	CompactedAt int                          `json:"compactedAt,omitempty"`
	Compactions int                          `json:"compactions,omitempty"`
	TokensSaved int                          `json:"tokensSaved,omitempty"`
	// Run is a run paused between two turns, resumed first.
	Run *PausedRun `json:"run,omitempty"`
	// Next is a prompt accepted but not yet started (sessions).
	Next *NextRun `json:"next,omitempty"`
	// Settings are what a session's next run uses; a paused run goes on
	// with the configuration it started with, which the input holds.
	Settings *agent.LoopConfig `json:"settings,omitempty"`
	// LastAssistant is the run's last assistant message, which tools look
	// up names in and the run's end reports.
	LastAssistant *agent.Message `json:"lastAssistant,omitempty"`
	// HostQueue is the task queue of the host that holds the workspace:
	// the next run's workspace tools stay there.
	HostQueue string `json:"hostQueue,omitempty"`
	// Updates are the IDs and answers of the latest Updates applied, so a
	// repeat sent across the seam is applied once (updates.go).
	Updates []UpdateRecord `json:"updates,omitempty"`
}

// carry builds the hand-over of this workflow run.
func (l *loop) carry(paused *PausedRun) *Carry {
	base := agent.SegmentsLen(l.segments)
	c := &Carry{
		Steering:     l.steering.items,
		FollowUps:    l.followUps.items,
		SteeringMode: l.steering.mode,
		FollowUpMode: l.followUps.mode,
		Usage:        l.usage,
		Turn:         l.turn,
		ToolCalls:    l.toolCalls,
		NextSeq:      l.events.last() + 1,
		Allowed:      sortedKeys(l.allowed),
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
		Updates:      l.updates.items,
	}
	if l.lastAssistant.Role != "" {
		m := l.lastAssistant
		c.LastAssistant = &m
	}
	settings := l.settings
	c.Settings = &settings
	return c
}

// restore takes over what the previous run carried. The transcript starts
// after the carried segments.
func (l *loop) restore(c *Carry) {
	if c == nil {
		return
	}
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
	l.updates.items = c.Updates
}

// shouldContinueAsNew says whether the run should stop between two turns (or
// while a session is idle) to continue as new: the server suggests it, or
// the run has had its configured number of turns. An aborted or cancelled
// run finishes where it is.
func (l *loop) shouldContinueAsNew(ctx workflow.Context) bool {
	if l.aborted || l.cancelled {
		return false
	}
	if workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return true
	}
	n := l.continueAfterTurns
	return n > 0 && l.turn-l.turnsAtStart >= n
}
