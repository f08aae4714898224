package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agentapi"
)

// maxRestExcerptBytes bounds the events a memo upsert carries: the Go SDK
// logs a warning for every memo over 2 KB (its key and data; the default
// of client.PayloadLimitOptions.MemoSizeWarning) and fails the workflow
// task over the namespace's memo limit. Larger rests (a long answer, whose
// text message_start and message_end both hold) are read with the Query,
// as before.
const maxRestExcerptBytes = 2<<10 - 64

// restExcerptChange guards the memo upserts that carry the event log to a
// watcher where the run rests (carryAtRest): histories recorded before it
// have no such commands.
const restExcerptChange = "log-excerpt-at-rest"

// restClearChange moves, at a session's prompt end, the upsert that
// removes the carried excerpt into noteRun's upsert, which follows in the
// same workflow task: two memo upserts per prompt end instead of three.
// Histories recorded before it clear in a memo upsert of its own.
const restClearChange = "log-excerpt-cleared-with-listing"

// logGrewChange guards the memo upsert that tells a watcher the log grew
// after a rest's excerpt in the same workflow task (markLogGrew).
const logGrewChange = "log-grew-after-rest"

// carryAtRest hands a watcher the log's new events through the history it
// long-polls, where the run is about to rest with nothing scheduled that
// could carry them: a tool call waiting for a person's approval, a
// session's prompt ended. Without it the watcher asks the events Query (a
// billable action) at each of those points, two per prompt of a session
// with approvals. It does so only while someone watched the last model
// turn (its worker read the watch lease), as the ModelTurn input does
// (logExcerpt). Events over maxRestExcerptBytes go as an empty excerpt,
// and the watcher reads them with the Query as before.
//
// The carrier is a memo upsert, which Temporal Cloud does not bill (its
// actions are starts, timers, search-attribute upserts, signals, Queries,
// Updates, side effects, activities and heartbeats), followed in the same
// workflow task by a second one that removes the field: the first's event
// keeps the events in history for the watcher, and the memo, which every
// list result carries, never holds them. With clearLater the caller
// writes another memo upsert in this workflow task, and carryAtRest
// reports (owed) that the removal is to ride in it (restClearChange).
//
// Events logged after it in the same workflow task (by this coroutine or
// by another one that the task woke) are not carried: the log marks them
// for the watcher (markLogGrew), which then reads them with the Query.
func (l *loop) carryAtRest(ctx workflow.Context, clearLater bool) (owed bool) {
	if !l.watched || l.events.last() <= l.carriedUpTo {
		return false
	}
	if workflow.GetVersion(ctx, restExcerptChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return false
	}
	// Whether the events fit is a matter of their JSON, which a later
	// build may encode otherwise, so the commands do not depend on it:
	// events too large to carry leave the excerpt empty, and the watcher
	// reads them with the Query.
	events := l.events.excerpt(l.carriedUpTo, maxRestExcerptBytes)
	if err := workflow.UpsertMemo(ctx, map[string]any{agentapi.MemoLogExcerpt: agentapi.LogExcerpt{Events: events}}); err != nil {
		// The memo did not encode: nothing was recorded, and the watcher
		// reads these events with the Query.
		workflow.GetLogger(ctx).Warn("Log excerpt for watchers not recorded", "Error", err)
		return false
	}
	l.carriedUpTo = l.events.last()
	l.restTask = workflow.GetInfo(ctx).GetCurrentHistoryLength()
	if clearLater && workflow.GetVersion(ctx, restClearChange, workflow.DefaultVersion, 1) == 1 {
		return true
	}
	// A nil value removes the field (its payload has no data).
	_ = workflow.UpsertMemo(ctx, clearExcerpt())
	return false
}

// clearExcerpt is the memo upsert that removes a carried excerpt.
func clearExcerpt() map[string]any {
	return map[string]any{agentapi.MemoLogExcerpt: nil}
}

// markLogGrew tells a watcher, once, that the log grew after a rest's
// excerpt in the same workflow task: the watcher skips the events Query
// after such an excerpt, and nothing else would bring it these events
// before the run's next news. A sub-agent's or a remote hook's coroutine
// woken by the same task, or a handler, may log there. The mark is a memo
// upsert of agentapi.MemoLogGrew with no value, which leaves the memo as
// it was. restTask identifies the task by its WorkflowTaskStarted event
// ID, which replay sees as the run did.
func (l *loop) markLogGrew() {
	if l.restTask == 0 {
		return
	}
	ctx := l.rootCtx
	same := workflow.GetInfo(ctx).GetCurrentHistoryLength() == l.restTask
	l.restTask = 0
	if !same || workflow.GetVersion(ctx, logGrewChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	_ = workflow.UpsertMemo(ctx, map[string]any{agentapi.MemoLogGrew: nil})
}
