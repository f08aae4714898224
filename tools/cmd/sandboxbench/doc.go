// Command sandboxbench measures what the sandbox adds to a bash call: it
// runs `true` through the real bash tool N times in each mode (without a
// sandbox, under bwrap, under Landlock, and under bwrap with network on;
// as root, bwrap's default (commands as sandbox.DefaultUser on an
// idmapped workspace) beside bwrap and Landlock with -sandbox-user),
// round-robin so that a change in the machine's load hits every mode
// alike, and prints each mode's median and p99 and what it adds over no
// sandbox. -bridge adds network on through another agentloop-netbridge
// binary, round-robin with the rest: the two bridges compared in the same
// minute (a build that speaks this worker's -send; an older one fails with
// its usage line, so compare older code with its own sandboxbench).
//
//	go run ./tools/cmd/sandboxbench -n 300
package main
