// Package conformance runs the shared conformance scenarios through the real
// workflow on a real Temporal server and prints their normalized traces, to
// be compared with the traces pi itself produced for the same scenarios.
//
// A scenario's tool with "remote": true (a field pi's reference runner
// ignores: to pi it is a tool like any other) is served as a remote tool,
// by a worker of its own that knows only the remote tool contract
// (remote.go); with "remoteHooks": true the hook rules are remote hooks
// (activities) of the same worker. testdata/typescript's scenarios run them
// in a worker written in TypeScript (typescript.go, typescript/).
package conformance
