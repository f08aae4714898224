// Command netbridge is the bridge between a network-on command's empty
// network namespace and the worker's proxy (internal/sandbox/netbridge).
// Install it as agentloop-netbridge next to the worker binary:
//
//	CGO_ENABLED=0 go build -o "$(dirname "$(command -v worker)")/agentloop-netbridge" ./netbridge
//
// CGO_ENABLED=0 makes it static: the net package otherwise links the C
// library, whose loading adds a few milliseconds to every network-on call.
// The worker finds it there or on PATH; without it the worker runs itself
// as the bridge, which starts slower (its packages' initialisation).
package main
