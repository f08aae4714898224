// Package netbridge is the bridge a network-on command reaches the
// worker's proxy through. Under bubblewrap such a command has a network
// namespace of its own with nothing in it but loopback, so nothing it
// opens is reachable from the host and nothing on the host (the Temporal
// frontend, the worker's proxy port, other services) from it. A worker
// that may not enter that namespace (setns needs CAP_SYS_ADMIN) has bwrap
// start the bridge in place of the command: it opens the listening socket
// HTTP_PROXY names on the namespace's loopback, sends it to the worker
// over a socket the worker handed down, and executes the command in its
// own place. The worker accepts on that socket and forwards to its proxy,
// as it does for the listener a root worker makes inside itself; no
// process is left between the command and the proxy.
//
// The bridge runs as its own small binary (./netbridge, built as
// agentloop-netbridge) or, where none is installed, as any binary that
// links this package, run under that name: init hands over to Main before
// the program's own main. It sits on every such call's path, so the
// package imports nothing but os, os/signal and syscall: a Go program's
// start is most of its cost, and every package linked adds to it.
package netbridge
