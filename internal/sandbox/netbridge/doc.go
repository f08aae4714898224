// Package netbridge is the bridge a network-on command reaches the
// worker's proxy through. Under bubblewrap such a command has a network
// namespace of its own with nothing in it but loopback, so nothing it
// opens is reachable from the host and nothing on the host (the Temporal
// frontend, the worker's proxy port, other services) from it. The proxy
// is bind-mounted into the sandbox as a Unix socket; the bridge, started
// by bwrap in place of the command, listens on a loopback TCP port inside
// the namespace (the one HTTP_PROXY names), starts the command, and
// copies each connection to the socket until the command exits.
//
// The bridge runs as its own small binary (./netbridge, built as
// agentloop-netbridge) or, where none is installed, as any binary that
// links this package, run under that name: init hands over to Main before
// the program's own main.
package netbridge
