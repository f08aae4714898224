// Command loadrun runs every conformance scenario, the shared ones and the
// extra ones, N times on a loaded machine and reports each run whose trace
// differs from pi's:
//
//	go run ./conformance/cmd/loadrun -n 20 -load 8
//
// -load is the load average to keep (default 4x the cores): CPU burners,
// one busy core each, make up what other processes leave; -parallel
// bounds the scenarios in flight. A run the server fails (an RPC timing
// out) is run again, up to twice, and counted apart from differences. It uses the server at TEMPORAL_ADDRESS when set, else starts a
// dev server of its own. It exits 1 when any run differs or fails.
package main
