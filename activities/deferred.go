package activities

import (
	"encoding/json"

	"github.com/durable-agents/agentloop/agentapi"
)

// Progress follows the watcher. A toolUpdate signal is a billable action
// and a workflow task, and its only reader while the call runs is a
// watcher of the durable log: watchers see partial results live in the
// heartbeat details anyway (toolprogress.go). So while nobody watches, a
// call the workflow lets defer them (ExecuteInput.DeferUpdates: a call
// with no sibling running beside it, whose updates no other call's events
// can interleave with) keeps the signals the policy of signals.go would
// send, and returns them with its result (ExecuteOutput.Updates); the
// workflow records them before the call's end, so the log holds the same
// tool_execution_update events in the same order. When a watcher comes,
// what was kept is signalled at once, in order, and the rest goes live as
// before; a call that fails signals what it kept, since it returns no
// result to carry it.
const (
	// maxDeferredBytes bounds the JSON of the updates a call returns
	// (large content is stored first, so a bash partial costs about 600
	// bytes); older updates beyond it are dropped and counted in the next
	// one's Dropped. The result itself is capped at 512 KiB: together well
	// under Temporal's 2 MB payload limit.
	maxDeferredBytes = 256 << 10
)

// sink delivers one update the policy let go: signalled while someone
// watches or the call may not defer, else kept for the result.
func (u *updateSender) sink(update agentapi.ToolUpdate) {
	u.mu.Lock()
	deferring := u.deferOK && !u.flushed && (u.watched == nil || !u.watched())
	u.mu.Unlock()
	if !deferring {
		u.flushKept()
		u.signal(update)
		return
	}
	size := jsonLen(update)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.kept = append(u.kept, update)
	u.keptBytes += size
	for len(u.kept) > 1 && u.keptBytes > maxDeferredBytes {
		first := u.kept[0]
		u.keptBytes -= jsonLen(first)
		u.kept = u.kept[1:]
		u.kept[0].Dropped += first.Dropped + len(first.Results)
	}
}

// flushKept signals what was kept, in order; from then on every update
// is signalled.
func (u *updateSender) flushKept() {
	u.mu.Lock()
	kept := u.kept
	u.kept, u.keptBytes, u.flushed = nil, 0, true
	u.mu.Unlock()
	for _, k := range kept {
		u.signal(k)
	}
}

// takeKept returns the updates kept for the result, after close; none
// were signalled.
func (u *updateSender) takeKept() []agentapi.ToolUpdate {
	u.mu.Lock()
	defer u.mu.Unlock()
	kept := u.kept
	u.kept, u.keptBytes = nil, 0
	return kept
}

func jsonLen(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}
