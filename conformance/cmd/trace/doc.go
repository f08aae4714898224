// Command trace runs a conformance scenario through the AgentLoop workflow on
// a real Temporal server and prints its normalized event trace, one JSON
// object per line, comparable with pi's traces:
//
//	go run ./conformance/cmd/trace SCENARIO.json
//
// It uses the server at TEMPORAL_ADDRESS when set, else starts a dev server
// of its own for the run.
package main
