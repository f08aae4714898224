// Package soak is the chaos soak of the agent on the self-hosted stack
// (internal/harness/stack): worker processes of the real worker binary serve many
// sessions of many prompts with tools, while a driver kills and restarts
// workers and restarts the Temporal server; at the end it checks what must
// hold whatever failed: every prompt answered, each side-effecting command
// run once or reported interrupted to the model (never silently twice),
// every event log gap-free without duplicates, no workflow task failure,
// no stuck run. `go run ./bench soak` runs it; soak_test.go runs a short
// one. model.go is the model, fleet.go the workers, session.go what a
// client does, check.go the invariants.
package soak
