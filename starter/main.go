package main

import (
	"os"

	"github.com/durable-agents/agentloop/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
