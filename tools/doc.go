// Package tools holds the tool interface, the registry a worker resolves tool
// names in, argument validation with pi's coercion and error texts, and the
// built-in coding tools. Nothing here imports Temporal: the ExecuteToolCall
// activity adapts a Tool to Temporal (heartbeats, cancellation, retries).
package tools
