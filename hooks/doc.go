// Package hooks holds the beforeToolCall and afterToolCall hooks a worker
// registers by name, and pi's rules for applying their results. A run names
// the hooks it wants in its input; they run inside the PrepareToolCall and
// FinalizeToolCall activities, so their decisions are recorded in history.
package hooks
