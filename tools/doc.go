// Package tools holds the tool interface, the registry a worker resolves tool
// names in, argument validation with pi's coercion and error texts, and the
// built-in coding tools. Nothing here imports Temporal: the ExecuteToolCall
// activity adapts a Tool to Temporal (heartbeats, cancellation, retries).
//
// New (typed.go) makes a tool of a definition and a function of a Params
// struct; the built-ins are made with it, as a Go tool of one's own is
// (agentworker's Example).
package tools
