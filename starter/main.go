package main

import (
	"os"

	"github.com/durable-agents/agentloop/starter/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
