// Package agent holds the domain types of the agent loop: messages, content
// blocks, tool calls, tool results, usage and events. Their JSON is pi's
// (@mariozechner/pi-ai and pi-agent-core 0.73.1), so a transcript written by pi
// or typed by hand into the Temporal CLI decodes unchanged. Nothing here
// imports Temporal.
package agent
