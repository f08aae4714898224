// Command starter is the command-line client of agent runs: it starts a run
// and streams its events, runs the demo, and steers, follows up, aborts or
// inspects a running workflow by id. See `starter -h`.
package main

import (
	"os"

	"github.com/durable-agents/agentloop/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
