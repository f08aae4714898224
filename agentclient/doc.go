// Package agentclient is the client side of agent runs: start one, follow
// its event log, and send it steering, follow-up and abort. Given the
// workers' content store, it stores large content before sending it
// (content.go), so history holds stubs. The starter command is a thin
// shell over it. The names and types it sends and reads are agentapi's:
// it imports neither the workflows nor the activities, so a client
// compiles in no model provider, tool or sandbox (deps_test.go).
package agentclient
