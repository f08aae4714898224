// Package journal is the tool-outcome journal: the recovery path for
// single-attempt tools (tools.RetryOnce: bash, edit) whose worker is lost.
//
// Temporal does not retry such a tool, so a worker that dies after the tool
// finished but before its result reached the server turns a finished
// command into "the worker running it stopped responding". The journal
// closes that gap: the tool's worker records the outcome on its own disk,
// keyed by the call's idempotency key, before ExecuteToolCall reports it;
// when the workflow sees the attempt lost, it asks the host (the
// LookupToolOutcome activity on the same task queue) and uses a recorded
// outcome instead of the lost-worker error. Nothing here imports the
// activities package: Journaled wraps a tools.Tool and LookupToolOutcome is a
// plain activity function, registered by name; workflows/lost.go is the
// workflow side.
package journal
