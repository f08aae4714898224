// Package hooks holds the beforeToolCall and afterToolCall hooks a worker
// registers by name, and pi's rules for applying their results. A run names
// the hooks it wants in its input; they run inside the PrepareToolCall and
// FinalizeToolCall activities, so their decisions are recorded in history.
//
// A run may also name remote hooks (agent.Hook): activities on a task
// queue of the user's own, and webhooks, which Webhooks calls: it signs
// each request with HMAC-SHA256 under a secret the worker holds (Sign,
// Verify) and dials only what the sandbox proxy's address policy allows.
// The workflow schedules remote hooks as activities of their own
// (workflows/remotehooks.go).
package hooks
