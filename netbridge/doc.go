// Command netbridge is the bridge between a network-on command's empty
// network namespace and the worker's proxy (internal/sandbox/netbridge).
// Install it as agentloop-netbridge next to the worker binary:
//
//	CGO_ENABLED=0 go build -o "$(dirname "$(command -v worker)")/agentloop-netbridge" ./netbridge
//
// It links os, os/signal and syscall alone, none of which uses cgo, so it
// is static either way (CGO_ENABLED=0 keeps it so should that change): a
// dynamically linked bridge would load the C library on every network-on
// call. The worker finds it there or on PATH; without it the worker runs
// itself as the bridge, which starts slower (its packages'
// initialisation).
//
// On linux/amd64 without cgo, a well-formed -send call runs in assembly
// before the Go runtime starts (start_linux_amd64.s, hooked in as the
// runtime's _cgo_init, so the build needs no flags); everything else,
// the guard included, starts the Go program as before.
package main
