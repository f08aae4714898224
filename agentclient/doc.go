// Package agentclient is the client side of agent runs: start one, follow
// its event log, and send it steering, follow-up and abort. The starter
// command is a thin shell over it.
package agentclient
