// Command starter is the command-line client of agent runs: it starts a run
// and streams its events, runs the demo, and steers, follows up, aborts or
// inspects a running workflow by id. See `starter -h`.
package main
